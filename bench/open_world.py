"""Fit and measure the literature's open-world check of a fill (citefinder/select/open_world.py; issue 43 item 2).

    python bench/literature_eval.py drafts --literature /work/lit/papers-333k --part train --removed-share 0.5 \
        --out bench/out/lit-train.json
    python bench/open_world.py fit bench/out/lit-train.json              # writes citefinder/data/open_world.json
    python bench/open_world.py report bench/out/lit-test.json [--rule FILE]

``bench/literature_eval.py drafts --removed-share 0.5`` cites every slot of each draft against its own .bib, a
fixed half of the slots whose paper papers-333k holds with that paper removed from the library (the pipeline's
``exclude``), and asks the literature for every slot; each row keeps the fill's confidence (``own_p``), the
literature's best confidence (``lit_p``) and whether that paper is the cited one.

``fit`` (TRAINING part only): a logistic model of "the fill is right" over logit(own_p) and logit(lit_p), on the
filled slots; then the withdrawal threshold: the highest ``below`` whose training slots lose at most
``--max-lost`` of the other slots' right fills (share of those slots), i.e. the most wrong fills withdrawn for
that cost. ``report``: per paper, the removed slots' wrong fills before and after, the right fills of the others
before and after, and how often the paper offered first is the cited one.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from common import commands

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "citefinder/data/open_world.json"
MAX_LOST = 0.01


def _logit(p: float) -> float:
    q = min(max(float(p), 1e-4), 1 - 1e-4)
    return math.log(q / (1 - q))


def load(paths: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for p in paths:
        for r in json.loads(p.read_text())["rows"]:
            if r.get("own_p") is None:
                raise SystemExit(f"{p}: rows without own_p: run bench/literature_eval.py drafts of this commit")
            rows.append({**r, "paper": r["id"].split(":")[0]})
    return rows


def outcome(rows: list[dict[str, Any]], withdrawn: Any) -> dict[str, Any]:
    """Removed slots: how many keep a (wrong) fill; other slots: how many have a right fill."""
    removed = [r for r in rows if r["removed"]]
    other = [r for r in rows if not r["removed"] and r["own_gold"]]
    kept = [r for r in removed if r["selected"] and not withdrawn(r)]
    right = [r for r in other if r["selected"] in r["own_gold"] and not withdrawn(r)]
    offered = [r for r in removed if r["selected"] and withdrawn(r)]
    return {"removed": len(removed), "wrong_fills": len(kept), "wrong_share": len(kept) / max(1, len(removed)),
            "other": len(other), "right_fills": len(right), "right_share": len(right) / max(1, len(other)),
            "withdrawn_removed": len(offered), "offered_is_gold": sum(bool(r["lit_top_gold"]) for r in offered)}


def cmd_fit(paths: list[Path], max_lost: float) -> None:
    from sklearn.linear_model import LogisticRegression

    from citefinder.select.open_world import OpenWorld

    rows = load(paths)
    filled = [r for r in rows if r["selected"] and r["lit_p"] is not None]
    X = np.asarray([[_logit(r["own_p"]), _logit(r["lit_p"])] for r in filled])
    y = np.asarray([int(r["selected"] in r["own_gold"]) for r in filled])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(X, y)
    a, (b, c) = float(model.intercept_[0]), (float(x) for x in model.coef_[0])
    base = outcome(rows, lambda r: False)
    best = None
    for below in [x / 100 for x in range(0, 96)]:
        rule = OpenWorld(a, b, c, below)
        got = outcome(rows, lambda r, rule=rule: r["lit_p"] is not None and rule.withdraws(r["own_p"], r["lit_p"]))
        if base["right_share"] - got["right_share"] <= max_lost + 1e-9:
            best = (below, got)
    assert best is not None
    below, got = best
    print(f"{len(filled)} filled slots ({int(y.sum())} right); p_own_right = sigmoid({a:.3f} + {b:.3f} logit(own) + "
          f"{c:.3f} logit(literature)); withdrawn below {below}")
    print(f"training: before {base}\n          after  {got}")
    names = ", ".join(p.name for p in paths)
    rule = OpenWorld(round(a, 5), round(b, 5), round(c, 5), below,
                     provenance=f"bench/open_world.py fit on {names} (drafts-dev training part only; a fixed half of "
                                f"the slots whose paper papers-333k holds cited with it removed from the library): "
                                f"{len(filled)} fills; below {below}: the highest losing <= {max_lost:.0%} of the "
                                f"other slots' right fills; training removed slots' wrong fills "
                                f"{base['wrong_fills']}/{base['removed']} -> {got['wrong_fills']}/{got['removed']}, "
                                f"other slots' right fills {base['right_fills']} -> {got['right_fills']} of "
                                f"{got['other']}")
    OUT.write_text(json.dumps(rule.to_dict(), indent=1) + "\n")
    print(f"wrote {OUT}")


def cmd_report(paths: list[Path], rule_path: Path | None) -> None:
    from citefinder.select.open_world import OpenWorld

    rule = OpenWorld.from_dict(json.loads((rule_path or OUT).read_text()))
    rows = load(paths)

    def withdrawn(r: dict[str, Any]) -> bool:
        return r["lit_p"] is not None and rule.withdraws(r["own_p"], r["lit_p"])

    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r["paper"]].append(r)
    print("| paper | removed slots | wrong fills there: before -> after | withdrawn (first offered is the cited "
          "paper) | other slots | right fills there: before -> after |")
    print("|---|---|---|---|---|---|")
    for paper in sorted(by) + ["all"]:
        group = rows if paper == "all" else by[paper]
        b, a = outcome(group, lambda r: False), outcome(group, withdrawn)
        name = f"**{paper}**" if paper == "all" else paper
        print(f"| {name} | {b['removed']} | {b['wrong_fills']} ({b['wrong_share']:.1%}) -> {a['wrong_fills']} "
              f"({a['wrong_share']:.1%}) | {a['withdrawn_removed']} ({a['offered_is_gold']}) | {b['other']} | "
              f"{b['right_fills']} ({b['right_share']:.1%}) -> {a['right_fills']} ({a['right_share']:.1%}) |")


def main() -> int:
    p, sub = commands(__doc__)
    f = sub.add_parser("fit")
    f.add_argument("files", nargs="+", type=Path)
    f.add_argument("--max-lost", type=float, default=MAX_LOST)
    r = sub.add_parser("report")
    r.add_argument("files", nargs="+", type=Path)
    r.add_argument("--rule", type=Path)
    args = p.parse_args()
    if args.cmd == "fit":
        cmd_fit(args.files, args.max_lost)
    else:
        cmd_report(args.files, args.rule)
    return 0


if __name__ == "__main__":
    sys.exit(main())
