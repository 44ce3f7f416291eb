"""The dense agent alone on CiteME, base query side vs the trained query encoder, over a pool this machine can embed.

    python bench/train28/citeme_dense.py --distractors 2000 --out bench/out/citeme-dense.json

The pool is every answerable CiteME item's gold paper (papers-50k) plus ``--distractors`` papers-50k records drawn
with seed 0, embedded once by the base model (as every library stores them); each item's query is what the dense
agent embeds for its slot. Scored per split (train and test): R@1, R@10, MRR of the first gold paper. A proxy for
the 50k library (a smaller pool is easier), the same pool for both query sides.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared/data"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--distractors", type=int, default=2000)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from citefinder.config import offline_environment
    from citefinder.library.encoders.embedder import MINILM, Embedder
    from citefinder.library.encoders.query_side import TRAINED, query_side
    from citefinder.library.records import embedding_text
    from citefinder.retrieve.agents.dense import dense_text
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots
    from citefinder.types import Paper

    offline_environment()
    items = [json.loads(x) for x in (DATA / "citeme.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    items = [i for i in items if i.get("answerable") and i.get("gold")]
    gold = {g for i in items for g in i["gold"]}
    with gzip.open(DATA / "papers-50k.jsonl.gz", "rt", encoding="utf-8") as f:
        records = [json.loads(x) for x in f]
    rnd = random.Random(0)
    others = [r for r in records if r["doc_id"] not in gold]
    pool = [r for r in records if r["doc_id"] in gold] + rnd.sample(others, args.distractors)
    ids = [r["doc_id"] for r in pool]
    base = Embedder(MINILM)
    docs = base.encode([embedding_text(Paper(r["doc_id"], r["title"], abstract=r.get("abstract") or "")) for r in pool])
    queries = []
    for item in items:
        slots = find_slots(item["text"].replace("[CITATIONS]", "[CITATION]"), 0)
        queries.append(dense_text(reformulate(slots[0] if slots else item["text"])[0]))
    out: dict = {"pool": len(pool), "distractors": args.distractors, "seed": 0}
    for name, embedder in (("base", base), ("trained", query_side(TRAINED, base).embedder)):
        scores = np.asarray(embedder.encode(queries)) @ np.asarray(docs).T
        for split in ("train", "test"):
            ranks = []
            for item, row in zip(items, scores, strict=True):
                if item["split"] != split:
                    continue
                g = [ids.index(d) for d in item["gold"] if d in ids]
                ranks.append(1 + int((row > max(row[i] for i in g)).sum()))
            n = len(ranks)
            out[f"{name}-{split}"] = {
                "n": n,
                "r1": round(sum(r == 1 for r in ranks) / n, 4),
                "r10": round(sum(r <= 10 for r in ranks) / n, 4),
                "mrr": round(sum(1 / r for r in ranks) / n, 4),
            }
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
