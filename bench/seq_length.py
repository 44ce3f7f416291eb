"""Dense recall vs. embedding speed at max_seq_length 256 and 128 (all-MiniLM-L6-v2).

A sub-library of every gold paper of autoscholar-dev and CiteME found in papers-50k plus seeded
random distractors is embedded at both settings; queries are scored by exact cosine search.
Usage: python bench/seq_length.py [--distractors 2000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from pathlib import Path

import numpy as np

from citefinder.config import offline_environment
from citefinder.evaluate.metrics import evaluate_run
from citefinder.library.chroma_records import embedding_text
from citefinder.library.embedder import Embedder
from citefinder.types import Paper

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--distractors", type=int, default=2000)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    offline_environment()
    sets = {name: [json.loads(l) for l in (args.data / f).open()] for name, f in
            (("autoscholar", "autoscholar-dev.jsonl"), ("citeme", "citeme.jsonl"))}
    gold = {g for items in sets.values() for i in items for g in i["gold"]}
    papers = [json.loads(l) for l in gzip.open(args.data / "papers-50k.jsonl.gz", "rt")]
    keep = [p for p in papers if p["doc_id"] in gold]
    rest = [p for p in papers if p["doc_id"] not in gold]
    random.Random(0).shuffle(rest)
    keep += rest[: args.distractors]
    ids = [p["doc_id"] for p in keep]
    texts = [embedding_text(Paper(p["doc_id"], p["title"], abstract=p.get("abstract") or "")) for p in keep]
    print(f"sub-library: {len(keep)} papers ({len(keep) - args.distractors} gold)")
    for seq in (256, 128):
        emb = Embedder("minilm", max_seq_length=seq)
        emb.encode(["warm up"])
        t = time.perf_counter()
        docs = emb.encode(texts)
        dt = time.perf_counter() - t
        print(f"max_seq_length={seq}: {len(texts) / dt:.1f} papers/s")
        for name, items in sets.items():
            items = [i for i in items if i["gold"]]
            q = emb.encode([i["text"].replace("[CITATION]", "").replace("[CITATIONS]", "") for i in items])
            sims = q @ docs.T
            top = np.argsort(-sims, axis=1)[:, :100]
            run = {i["id"]: {ids[j]: float(sims[n, j]) for j in top[n]} for n, i in enumerate(items)}
            qrels = {i["id"]: {g: 1 for g in i["gold"]} for i in items}
            m = evaluate_run(qrels, run)
            print(f"  {name:<12} " + "  ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "queries") + f"  (n={int(m['queries'])})")


if __name__ == "__main__":
    main()
