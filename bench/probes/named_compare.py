"""Two bench/drafts_eval.py runs (--traces) compared per paper: before (named_rule off) and after (on).

    python bench/probes/named_compare.py BEFORE.json AFTER.json

Per paper: hit@1 of the candidates as shown (the named paper put first counts), the selector's fills, right fills and
precision before and after, and from the after run's traces what the name rule did (``details["named"]``): fills
withheld (and how many of them were wrong before), named papers filled instead of another pick (and how many right).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def per_paper(run: dict) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for o in run["outcomes"]:
        s = out[o["id"].split(":")[0]]
        gold = set(o["gold"])
        s["slots"] += 1
        cands = (o.get("result") or {}).get("candidates") or []
        s["hit1"] += bool(cands) and cands[0]["paper"]["doc_id"] in gold
        s["filled"] += o["selected"] is not None
        s["right"] += o["selected"] in gold if o["selected"] else 0
        trace = next((t for t in (o.get("result") or {}).get("traces", []) if t["agent"] == "select"), None)
        note = (trace or {}).get("details", {}).get("named") or {}
        if note.get("action") == "withheld":
            s["withheld"] += 1
            s["withheld_wrong"] += note.get("before") not in gold
        elif note.get("action") == "filled":
            s["instead"] += 1
            s["instead_right"] += note.get("selected") in gold
    return out


def main() -> None:
    before, after = (per_paper(json.loads(Path(p).read_text())) for p in sys.argv[1:3])
    print("| paper | slots | hit@1 before | after | filled before | right | precision | filled after | right | "
          "precision | withheld (wrong) | named paper instead (right) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    total_b: dict[str, int] = defaultdict(int)
    total_a: dict[str, int] = defaultdict(int)
    for paper in sorted(before):
        b, a = before[paper], after[paper]
        for k, v in b.items():
            total_b[k] += v
        for k, v in a.items():
            total_a[k] += v
        print(_row(paper, b, a))
    print(_row("**all**", total_b, total_a))


def _row(name: str, b: dict[str, int], a: dict[str, int]) -> str:
    def pr(r: int, f: int) -> str:
        return f"{r / f:.1%}" if f else "-"

    n = max(1, b["slots"])
    return (f"| {name} | {b['slots']} | {b['hit1'] / n:.3f} | {a['hit1'] / n:.3f} | {b['filled']} | {b['right']} | "
            f"{pr(b['right'], b['filled'])} | {a['filled']} | {a['right']} | {pr(a['right'], a['filled'])} | "
            f"{a['withheld']} ({a['withheld_wrong']}) | {a['instead']} ({a['instead_right']}) |")


if __name__ == "__main__":
    main()
