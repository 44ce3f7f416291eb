"""Backs bench/RESULTS.md, section "The names change and the hub check, paper by paper (issue 4b)".

The names agents' fusion weight and the hub check (citefinder/select/hubs.py), paper by paper, replayed on a saved
drafts-dev run (bench/drafts_eval.py --traces):

    python bench/probes/names_hub.py bench/out/test-head.json [--weights 1,0.5,0.25,0]

Per names weight (``names`` and ``names-weak`` scaled together from the shipped fusion): the saved agent lists fused
again, the top-1's confidence computed again (bench/tune.py top1_rows) and the threshold rule applied, no hub check:
fused hit@1, fills and right fills. Then the hub check off and on over the run as saved (bench/probes/hub_selection.py's
replay, names read again).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench/probes"))


def by_weight(outcomes: list[dict], scale: float, threshold: float) -> dict[str, list[int]]:
    """paper -> [slots, fused hits@1, filled, right] with the names agents' weights times ``scale``."""
    import tune

    from citefinder.rank import fuse as fuse_mod

    shipped = fuse_mod.learned_fusion("slots")
    weights = {**shipped.weights, **{a: shipped.weights.get(a, 0.0) * scale for a in ("names", "names-weak")}}
    original = fuse_mod.learned_fusion
    fuse_mod.learned_fusion = lambda kind="slots": replace(original(kind), weights=weights)  # type: ignore[assignment]
    try:
        from citefinder.rank.calibration import default_calibration

        cal = default_calibration()
        groups: list[str] = []
        kept = [o for o in outcomes if o.get("lists")]
        feats, labels = tune.top1_rows(kept, 0, groups)
    finally:
        fuse_mod.learned_fusion = original  # type: ignore[assignment]
    out: dict[str, list[int]] = {}
    for f, label, paper in zip(feats, labels, groups, strict=True):
        row = out.setdefault(paper, [0, 0, 0, 0])
        row[0] += 1
        row[1] += label
        if cal.probability(f) >= threshold:
            row[2] += 1
            row[3] += label
    return out


def hub(outcomes: list[dict], threshold: float, on: bool) -> dict[str, list[int]]:
    from hub_selection import unheld

    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.select import hubs
    from citefinder.ui.workspace import result_from_dict

    out: dict[str, list[int]] = {}
    done: dict[str, list] = {}
    for o in outcomes:
        paper = o["id"].split(":")[0]
        r = unheld(result_from_dict(o["result"]))
        if r.slot is not None:
            r = replace(r, query=reformulate(r.slot)[0])
        if on:
            r = hubs.hold_back(r, done.setdefault(paper, []), threshold)
        done.setdefault(paper, []).append(r)
        row = out.setdefault(paper, [0, 0, 0, 0])
        row[0] += 1
        if r.selection.status == "found" and r.selection.paper is not None:
            row[2] += 1
            row[3] += int(r.selection.paper.doc_id in o["gold"])
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("--weights", default="1,0.5,0.25,0")
    p.add_argument("--threshold", type=float, default=0.55)
    args = p.parse_args()
    data = json.loads(args.run.read_text())
    outcomes = data["outcomes"]
    sizes = data.get("library_sizes") or {}
    for o in outcomes:
        o["library_size"] = sizes.get(o["id"].split(":")[0], 0)
    cols: list[tuple[str, dict[str, list[int]]]] = []
    for w in (float(x) for x in args.weights.split(",")):
        cols.append((f"names x{w:g}", by_weight(outcomes, w, args.threshold)))
    if all(o.get("result") for o in outcomes):
        cols.append(("hub off", hub(outcomes, args.threshold, False)))
        cols.append(("hub on", hub(outcomes, args.threshold, True)))
    papers = sorted(cols[0][1]) + ["all"]
    for _, col in cols:
        col["all"] = [sum(v[i] for k, v in col.items() if k != "all") for i in range(4)]
    print(f"{args.run.name}: names weights scaled from the shipped fusion (no hub check); hub replayed on the run\n")
    print("| paper | slots | " + " | ".join(f"{name}: hit@1 · filled / right" for name, _ in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for paper in papers:
        cells = []
        for name, col in cols:
            n, hits, filled, right = col.get(paper, [0, 0, 0, 0])
            hit = f"{hits / max(1, n):.3f} · " if not name.startswith("hub") else ""
            cells.append(f"{hit}{filled} / {right}")
        print(f"| {paper} | {cols[0][1].get(paper, [0])[0]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
