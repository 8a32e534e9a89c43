"""The same searches as examples/latency.rs, from pymilvus, against the collection it left behind.

    $HOME/.cache/graph-rs-milvus/venv/bin/python crates/mnemograph-memory-milvus/examples/latency_pymilvus.py URL COLLECTION [QUERIES]

Times a filtered dense search and a dense + BM25 hybrid search with RRF(60), 20 candidates each,
on random users, and prints p50/p99 in the same format. Query vectors are random unit vectors:
latency does not depend on which vector is asked.
"""
import random
import sys
import time

import numpy as np
from pymilvus import AnnSearchRequest, MilvusClient, RRFRanker

WORDS = "milvus index latency rust python deploy budget flight cat garden tokens chunk".split()
OUT = ["user_id", "session_id", "turn_role", "content", "created_at", "importance", "metadata"]


def main():
    url, collection = sys.argv[1], sys.argv[2]
    queries = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    client = MilvusClient(uri=url)
    rng = random.Random(7)
    for mode in sys.argv[4].split(",") if len(sys.argv) > 4 else ("Dense", "Hybrid"):
        times = []
        for _ in range(queries):
            user = f"bench-u{rng.randrange(1000)}"
            flt = f'user_id == "{user}"'  # fixed, trusted ids here; production code must escape
            vec = np.random.default_rng(rng.randrange(1 << 30)).normal(size=384)
            vec = (vec / np.linalg.norm(vec)).tolist()
            text = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
            t = time.perf_counter()
            if mode == "Dense":
                client.search(collection, data=[vec], anns_field="embedding", filter=flt, limit=20,
                              output_fields=OUT, search_params={"params": {"ef": 64}})
            else:
                dense = AnnSearchRequest(data=[vec], anns_field="embedding", param={"params": {"ef": 64}},
                                         limit=20, expr=flt)
                sparse = AnnSearchRequest(data=[text], anns_field="sparse", param={}, limit=20, expr=flt)
                client.hybrid_search(collection, [dense, sparse], RRFRanker(60), limit=20, output_fields=OUT)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        p = lambda q: times[round((len(times) - 1) * q)]
        print(f"pymilvus {mode}: {queries} searches, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms")


if __name__ == "__main__":
    main()
