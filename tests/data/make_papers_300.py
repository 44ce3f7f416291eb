"""Write ``papers-300.jsonl``: the tests' small library, sampled once from the benchmark library.

Run from the repository root (needs ``../shared/data``): ``python tests/data/make_papers_300.py``.
The file is committed so a test session reads 300 records instead of decompressing 50,000. It holds
the gold papers of the first 24 answerable CiteME excerpts first (``test_store`` uses the first 40
records), then seeded random distractors, in that order.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED_DATA = Path(os.environ.get("CITEFINDER_SHARED_DATA", HERE.parents[2] / "shared" / "data"))
SAMPLE_SIZE = 300
N_GOLD_ITEMS = 24
SEED = 13


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def sample(shared: Path = SHARED_DATA) -> list[dict]:
    items = [i for i in read_jsonl(shared / "citeme.jsonl") if i["answerable"] and i["gold"]][:N_GOLD_ITEMS]
    gold = {g for i in items for g in i["gold"]}
    papers = read_jsonl(shared / "papers-50k.jsonl.gz")
    chosen = [p for p in papers if p["doc_id"] in gold]
    rest = [p for p in papers if p["doc_id"] not in gold]
    random.Random(SEED).shuffle(rest)
    return chosen + rest[: SAMPLE_SIZE - len(chosen)]


if __name__ == "__main__":
    records = sample()
    out = HERE / "papers-300.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"wrote {len(records)} records to {out}")
