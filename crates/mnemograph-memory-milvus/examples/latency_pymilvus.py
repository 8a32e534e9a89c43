"""The same searches as examples/latency.rs, from pymilvus, against the collection it left behind.

    $HOME/.cache/graph-rs-milvus/venv/bin/python crates/mnemograph-memory-milvus/examples/latency_pymilvus.py URL COLLECTION [QUERIES] [MODES]

Times, on random users, a filtered dense search and a dense + BM25 `hybrid_search` with the
ranker MilvusMemory's default fusion sends (`WeightedRanker(1.0, 0.3, norm_score=True)`: the
question's list at 1, the keyword list at `KEYWORD_WEIGHT`), 20 candidates each, the same output
fields, `ef` and filter (the user's rows that are not retired: `retired == false` when the
collection has MilvusMemory's `retired` flag, `not exists metadata["superseded_by"]` on one created
before the flag, as the crate chooses), and prints p50/p99 in the same format. MODES is a comma-separated
subset of `dense,hybrid,dense-user,hybrid-user` (default all); the `-user` modes filter on the user
alone, as a plain pymilvus program would. Query vectors are random unit vectors: latency does not
depend on which vector is asked.
"""
import random
import sys
import time

import numpy as np
from pymilvus import AnnSearchRequest, DataType, MilvusClient, WeightedRanker

WORDS = "milvus index latency rust python deploy budget flight cat garden tokens chunk".split()
OUT = ["user_id", "session_id", "turn_role", "content", "created_at", "importance", "metadata"]
CANDIDATES = 20  # RetrieveQuery's candidates for top 3: max(4 * 3, 20)
KEYWORD_WEIGHT = 0.3  # mnemograph_memory::KEYWORD_WEIGHT
# MilvusMemory's scope, no retired memory: on the flag, or on the mark without it.
LIVE_FLAG = " and retired == false"
LIVE_MARK = ' and not exists metadata["superseded_by"]'


def main():
    url, collection = sys.argv[1], sys.argv[2]
    queries = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    modes = sys.argv[4].split(",") if len(sys.argv) > 4 else ("dense", "hybrid", "dense-user", "hybrid-user")
    client = MilvusClient(uri=url)
    fields = client.describe_collection(collection)["fields"]
    flag = any(f["name"] == "retired" and f["type"] == DataType.BOOL for f in fields)
    live = LIVE_FLAG if flag else LIVE_MARK
    if any(not m.endswith("-user") for m in modes):
        print(f'pymilvus scope: user_id == "…"{live}')
    rng = random.Random(7)
    ef = {"params": {"ef": 64}}
    for mode in modes:
        times = []
        for _ in range(queries):
            user = f"bench-u{rng.randrange(1000)}"
            flt = f'user_id == "{user}"'  # fixed, trusted ids here; production code must escape
            if not mode.endswith("-user"):
                flt += live
            vec = np.random.default_rng(rng.randrange(1 << 30)).normal(size=384)
            vec = (vec / np.linalg.norm(vec)).tolist()
            text = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
            t = time.perf_counter()
            if mode.startswith("dense"):
                client.search(collection, data=[vec], anns_field="embedding", filter=flt, limit=CANDIDATES,
                              output_fields=OUT, search_params=ef)
            else:
                dense = AnnSearchRequest(data=[vec], anns_field="embedding", param=ef, limit=CANDIDATES, expr=flt)
                sparse = AnnSearchRequest(data=[text], anns_field="sparse", param={}, limit=CANDIDATES, expr=flt)
                ranker = WeightedRanker(1.0, KEYWORD_WEIGHT, norm_score=True)
                client.hybrid_search(collection, [dense, sparse], ranker, limit=CANDIDATES, output_fields=OUT)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        p = lambda q: times[round((len(times) - 1) * q)]
        label = "dense" if mode.startswith("dense") else "hybrid, server-fused"
        if mode.endswith("-user"):
            label += " (user filter only)"
        print(f"pymilvus {label}: {queries} searches, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms")


if __name__ == "__main__":
    main()
