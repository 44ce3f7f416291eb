"""Backs bench/RESULTS.md, section "One number per candidate (`bench/lower_ranks.py`)".

How likely is a candidate below the top to be the cited paper? Fit the map the Cite page shows for ranks 2..5.

    python bench/drafts_eval.py --part train --traces --out bench/out/drafts-train-i22.json
    python bench/lower_ranks.py bench/out/drafts-train-i22.json [--check bench/out/drafts-test-i22.json]

The confidence model (``citefinder/data/confidence.json``) is fit on top candidates; read for a lower one its
number often exceeds the top's (377 of 1,101 training slots) and overstates how often it is right. This fits,
on the training part only, a logistic map from (the model's number, capped at the number of the candidate
above; the rank) to "this candidate is gold", for ranks 2..5, and prints its coefficients (the constants of
``citefinder.rank.calibration.LOWER_RANKS``) and the reliability of the shown numbers before and after, by
rank and by bucket. ``--check`` prints the same reliability for another run (the test part, read once).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from citefinder.rank.calibration import shown_probabilities  # noqa: E402

TOP = 5


def rows(path: Path, lower: tuple[float, float, float] | None) -> list[tuple[int, float, float, bool]]:
    """(rank, capped model number, shown number, gold) for the top candidates of every answerable slot."""
    out = []
    for o in json.loads(path.read_text())["outcomes"]:
        if not o["answerable"] or not o.get("result"):
            continue
        select = next(t for t in o["result"]["traces"] if t["agent"] == "select")
        hits = select["top"][:TOP]
        capped = shown_probabilities([h["score"] for h in hits], lower=None)
        shown = shown_probabilities([h["score"] for h in hits], lower=lower)
        out += [(r, c, s, h["doc_id"] in o["gold"]) for r, (h, c, s) in enumerate(zip(hits, capped, shown), 1)]
    return out


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def report(name: str, data: list[tuple[int, float, float, bool]]) -> None:
    print(f"\n{name}: mean shown number vs share gold, by rank")
    print("| rank | candidates | capped model number | shown | share gold |\n|---|---|---|---|---|")
    for r in range(1, TOP + 1):
        x = [t for t in data if t[0] == r]
        print(f"| {r} | {len(x)} | {sum(t[1] for t in x) / len(x):.3f} | {sum(t[2] for t in x) / len(x):.3f} | "
              f"{sum(t[3] for t in x) / len(x):.3f} |")
    print("\nranks 2..5 by shown number")
    print("| shown | candidates | mean shown | share gold |\n|---|---|---|---|")
    edges = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.01)
    for lo, hi in zip(edges, edges[1:], strict=False):
        x = [t for t in data if t[0] > 1 and lo <= t[2] < hi]
        if x:
            print(f"| {lo:.2f}-{min(hi, 1):.2f} | {len(x)} | {sum(t[2] for t in x) / len(x):.3f} | "
                  f"{sum(t[3] for t in x) / len(x):.3f} |")


def main() -> int:
    from sklearn.linear_model import LogisticRegression

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("train", type=Path)
    p.add_argument("--check", type=Path)
    args = p.parse_args()
    data = [t for t in rows(args.train, None) if t[0] > 1]
    X = [[logit(c), math.log(r)] for r, c, _, _ in data]
    y = [g for *_, g in data]
    model = LogisticRegression(C=1.0, max_iter=2000).fit(X, y)
    lower = (float(model.intercept_[0]), float(model.coef_[0][0]), float(model.coef_[0][1]))
    print(f"LOWER_RANKS = ({lower[0]:.4f}, {lower[1]:.4f}, {lower[2]:.4f})  # intercept, logit(number), log(rank)")
    report("training part, capped only", rows(args.train, None))
    report("training part, with the map", rows(args.train, lower))
    if args.check:
        report(f"{args.check.name}, with the map", rows(args.check, lower))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
