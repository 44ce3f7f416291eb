"""Backs bench/RESULTS.md, section "Fourth session (2026-11-26): the cross-encoder trained longer, the check reading it,
the fusion re-tuned with the memory".

Does a cross-encoder tell a slot's real key from another key of the same .bib? (drafts-dev TRAINING part)

    python bench/probes/check_cross.py --data .gpu/data.json.xz --model NAME=FOLDER ... [--slots 400]

For a seeded sample of the training part's slots (the dense agent's query text, as bench/train28/build_data.py
wrote it), the gold entry of the paper's own refs.bib (as written: what the check's libraries hold) against
``--others`` entries of the same .bib drawn at random: the share of (gold, other) pairs each scorer orders
right (its pair AUC), for every cross-encoder given and for the base dense cosine; and the cross-encoders'
pairs/s on this CPU. The check asks exactly this of a swapped key.
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the check's own cross-encoder scorer
from check_eval import CrossScores  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", action="append", default=[], help="NAME=FOLDER of a cross-encoder")
    ap.add_argument("--slots", type=int, default=400)
    ap.add_argument("--others", type=int, default=4)
    ap.add_argument("--bib", default="refs.bib")
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(2)
    with lzma.open(a.data, "rt", encoding="utf-8") as f:
        drafts = [d for d in json.load(f)["drafts"] if d["part"] == "train"]
    rnd = random.Random(28)
    items = []  # (query, gold text, [other texts])
    for d in drafts:
        refs = d["refs"][a.bib]
        for q, gold in zip(d["queries"], d["gold"], strict=True):
            g = [k for k in gold if k in refs]
            if not g:
                continue
            pool = [k for k in refs if k not in gold]
            items.append((q, refs[g[0]], [refs[k] for k in rnd.sample(pool, min(a.others, len(pool)))]))
    items = rnd.sample(items, min(a.slots, len(items)))
    out: dict = {"slots": len(items), "bib": a.bib}
    from citefinder.library.encoders.embedder import Embedder, minilm_path

    emb = Embedder(str(minilm_path()))
    wins = total = 0
    for q, gold, others in items:
        v = np.asarray(emb.encode([q, gold, *others]), dtype=np.float32)
        s = v[1:] @ v[0]
        wins += int(sum(s[0] > x for x in s[1:]))
        total += len(others)
    out["dense_base"] = round(wins / total, 4)
    for spec in a.model:
        name, folder = spec.split("=", 1)
        scorer = CrossScores(folder)
        wins = total = 0
        for q, gold, others in items:
            s = scorer(q, [gold, *others])
            wins += int(sum(s[0] > y for y in s[1:]))
            total += len(others)
        out[name] = {"pair_auc": round(wins / total, 4), "pairs_per_s": round(scorer.pairs / scorer.seconds, 1)}
        print(name, out[name], flush=True)
    print(json.dumps(out, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
