"""Backs bench/RESULTS.md, section "The hub check and the names change on real drafts (drafts-dev, by the fixed split)".

The hub check (citefinder/select/hubs.py) replayed on saved drafts-dev runs (bench/drafts_eval.py --traces):
for each factor and alike-level, how many slots stay filled, how many of them right. Fit on the training part:

    python bench/probes/hub_selection.py bench/out/drafts-train-before.json            # choose HUB_FACTOR / ALIKE
    python bench/probes/hub_selection.py bench/out/drafts-test-before.json --only 0.6  # the chosen one, on test

A replay: the slots after a held-back one see the same co-cited seeds as in the saved run (the live
pipeline would give them one seed less); bench/RESULTS.md has the live before/after too.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from pathlib import Path

from citefinder.retrieve.query.reformulate import reformulate
from citefinder.select import hubs
from citefinder.ui.workspace import result_from_dict


def unheld(r):  # type: ignore[no-untyped-def]
    """A saved result as it was before a hub check of the run that saved it (its pick and confidence back)."""
    select = r.trace("select")
    hub = select.details.get("hub") if select is not None else None
    if not hub:
        return r
    before = float(re.search(r"drops from ([0-9.]+)", hub["why"]).group(1))
    paper = next(c.paper for c in r.candidates if c.doc_id == hub["paper"])
    return replace(r, selection=replace(r.selection, status="found", paper=paper, confidence=before))


def replay(outcomes: list[dict], factor: float, alike: float, threshold: float, after: int = 1) -> tuple[int, int]:
    hubs.ALIKE = alike
    filled = right = 0
    by_paper: dict[str, list] = {}
    for o in outcomes:
        by_paper.setdefault(o["id"].split(":")[0], []).append(o)
    for items in by_paper.values():
        done: list = []
        for o in items:
            r = unheld(result_from_dict(o["result"]))
            if r.slot is not None:  # the saved query keeps no names: read them again as the pipeline does
                r = replace(r, query=reformulate(r.slot)[0])
            r = hubs.hold_back(r, done, threshold, factor, after)
            done.append(r)
            if r.selection.status == "found" and r.selection.paper is not None:
                filled += 1
                right += int(r.selection.paper.doc_id in o["gold"])
    return filled, right


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("--threshold", type=float, default=0.55)
    p.add_argument("--only", type=float)
    args = p.parse_args()
    outcomes = [o for o in json.loads(args.run.read_text())["outcomes"] if o.get("result")]
    print(f"{args.run.name}: {len(outcomes)} slots")
    print("| factor | alike | after | filled | right | precision |\n|---|---|---|---|---|---|")
    factors = [args.only] if args.only else [1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
    for factor in factors:
        for alike in ([hubs.ALIKE] if args.only or factor == 1.0 else [0.15, 0.25, 0.35]):
            for after in ([hubs.HUB_AFTER] if args.only or factor == 1.0 else [1, 2, 3]):
                filled, right = replay(outcomes, factor, alike, args.threshold, after)
                print(f"| {factor} | {alike} | {after} | {filled} | {right} | {right / max(1, filled):.3f} |")


if __name__ == "__main__":
    main()
