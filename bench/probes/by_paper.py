"""Backs bench/RESULTS.md, section "The names change and the hub check, paper by paper (issue 4b)".

Saved drafts-dev runs (bench/drafts_eval.py --out) side by side, paper by paper: fused hit@1, and the selector's
fills, right fills and precision.

    python bench/probes/by_paper.py bench/out/test-before.json bench/out/test-head.json [--labels before,today]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def figures(outcomes: list[dict]) -> dict[str, dict[str, float]]:
    by: dict[str, list[dict]] = {}
    for o in outcomes:
        by.setdefault(o["id"].split(":")[0], []).append(o)
    by["all"] = outcomes
    out = {}
    for paper, items in by.items():
        answerable = [o for o in items if o["answerable"]]
        filled = [o for o in items if o["selected"]]
        right = sum(o["selected"] in o["gold"] for o in filled)
        hit1 = sum((o["gold_rank"].get("fused") or 0) == 1 for o in answerable)
        out[paper] = {"slots": len(items), "hit1": hit1 / max(1, len(answerable)), "hits": hit1,
                      "filled": len(filled), "right": right, "precision": right / max(1, len(filled))}
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--labels")
    args = p.parse_args()
    labels = args.labels.split(",") if args.labels else [r.stem for r in args.runs]
    runs = [figures(json.loads(r.read_text())["outcomes"]) for r in args.runs]
    papers = [k for k in runs[0] if k != "all"] + ["all"]
    head = " | ".join(f"{lab}: hit@1 · filled / right (precision)" for lab in labels)
    print(f"| paper | slots | {head} |\n|---|---|" + "---|" * len(labels))
    for paper in papers:
        cells = []
        for fig in runs:
            f = fig.get(paper)
            cells.append("—" if f is None else
                         f"{f['hit1']:.3f} · {f['filled']} / {f['right']} ({f['precision']:.1%})")
        print(f"| {paper} | {runs[0][paper]['slots']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
