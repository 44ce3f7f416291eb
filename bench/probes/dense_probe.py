"""Backs bench/RESULTS.md, section "An embedder from citing sentences (issue 20 part 4)".

Probe: another embedder on real drafts, as an extra dense agent over the slot or in place of the library's.

    python bench/probes/dense_probe.py --embedder FOLDER --name incite \\
        --train bench/out/drafts-train.json --test bench/out/drafts-test.json [--out bench/out/dense-probe-incite.json]

For each drafts_eval output (train and test part), embeds every paper of each draft's library with the
candidate embedder (cached under bench/out/dense-probe-cache/NAME/), embeds each slot's dense query (the
dense agent's text, from the same fill), and adds the exact-cosine ranking as a list named NAME. Then,
offline, as `bench/tune.py fusion` does: the fusion weights and k are tuned on the TRAIN part only
(coordinate ascent, MRR) for three agent sets — the shipped agents (the baseline, re-tuned the same way),
the shipped agents plus NAME ("an extra dense agent"), and the shipped agents with NAME in place of
"dense" ("the library's embedder") — and each tuned fusion is scored on the TEST part. Nothing is
written to citefinder/data.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from probe_support import add_list  # noqa: E402


def tune(outcomes: list[dict], agents: list[str]) -> tuple[dict[str, float], int]:
    """bench/tune.py's coordinate ascent (weights per agent, then k) on one training file; no file written."""
    from tune import K_GRID, WEIGHT_GRID, Packed

    packed = Packed(outcomes, agents)
    w, k = np.ones(len(agents)), 60.0
    best = packed.mrr(w, k)
    for _round in range(3):
        improved = False
        for kk in K_GRID:
            if (v := packed.mrr(w, kk)) > best + 1e-6:
                best, k, improved = v, kk, True
        for j in range(len(agents)):
            for x in WEIGHT_GRID:
                trial = w.copy()
                trial[j] = x
                if trial.sum() and (v := packed.mrr(trial, k)) > best + 1e-6:
                    best, w, improved = v, trial, True
        if not improved:
            break
    w = w / w.max()
    return {a: round(float(x), 3) for a, x in zip(agents, w, strict=True)}, int(k)


def score(outcomes: list[dict], weights: dict[str, float], k: int) -> dict[str, float]:
    from tune import _metrics

    from citefinder.rank.fuse import Fusion

    m = _metrics(outcomes, Fusion("rrf", k, weights=weights, default_weight=0.0), list(weights))
    return {key: round(m.get(key, 0.0), 4) for key in ("hit@1", "hit@5", "hit@10", "mrr", "queries")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", required=True, help="minilm, mpnet or a model folder")
    ap.add_argument("--name", required=True, help="name of the added list")
    ap.add_argument("--train", type=Path, required=True)
    ap.add_argument("--test", type=Path, required=True)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from citefinder.config import offline_environment
    from citefinder.library.encoders.embedder import Embedder

    offline_environment()
    embedder = Embedder(args.embedder, 256, 32)
    cache = ROOT / "bench/out/dense-probe-cache" / args.name
    cache.mkdir(parents=True, exist_ok=True)
    parts = {}
    for part, path in (("train", args.train), ("test", args.test)):
        result = json.loads(path.read_text())
        add_list(result, embedder, args.name, cache)
        parts[part] = result["outcomes"]
    shipped = sorted({n for o in parts["train"] for n in (o.get("lists") or {}) if "#" not in n and n != args.name})
    rows = {}
    for label, agents in (("shipped agents (re-tuned)", shipped),
                          (f"+ {args.name} (extra dense agent)", shipped + [args.name]),
                          (f"{args.name} in place of dense", [a for a in shipped if a != "dense"] + [args.name]),
                          ("dense alone", ["dense"]), (f"{args.name} alone", [args.name])):
        weights, k = tune(parts["train"], agents)
        rows[label] = {"weights": weights, "k": k, "train": score(parts["train"], weights, k),
                       "test": score(parts["test"], weights, k)}
    print("| agents (fusion tuned on train) | train MRR | test hit@1 | test hit@5 | test hit@10 | test MRR |")
    print("|---|---|---|---|---|---|")
    for label, r in rows.items():
        t = r["test"]
        print(f"| {label} | {r['train']['mrr']:.4f} | {t['hit@1']:.3f} | {t['hit@5']:.3f} | {t['hit@10']:.3f} | "
              f"{t['mrr']:.4f} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
