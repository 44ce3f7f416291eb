"""The name rule (citefinder/select/named.py) replayed on a saved drafts-dev run made without it
(bench/drafts_eval.py --traces with CITEFINDER_NAMED_RULE=false): per paper, the selector's fills before and after,
what the rule withheld (and how many of those fills were wrong) and what it filled instead (and how many of those
are right). Choose on the TRAINING part; the test part is reported, never tuned on. Replayed slot by slot (the
hub check and the one-sentence rule of the real fill are not run again: bench/drafts_eval.py measures those).

    python bench/named_replay.py bench/out/before-train.json [--libraries DIR] [--variant NAME]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("--libraries", type=Path, help="the run's libraries folder (default: the one it names)")
    p.add_argument("--show", action="store_true", help="print every slot the rule changed")
    p.add_argument("--literature", type=Path, help="a literature library folder the rule also asks (read in place)")
    p.add_argument("--check", action="store_true", help="also: how often the check's name rule flags the right key "
                   "and a random other key put in its place (single-key slots)")
    args = p.parse_args()

    import random

    from citefinder.config import Settings, offline_environment
    from citefinder.library.readonly import ReadOnlyLibrary
    from citefinder.select.named import Owners, decide, overruled
    from citefinder.types import Candidate, Paper, Selection

    offline_environment()
    run = json.loads(args.run.read_text())
    root = args.libraries or Path(run["libraries"])
    threshold = float(run["settings"]["confidence_threshold"])
    stem = Path(run["bib"]).stem
    per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    owners: dict[str, Owners] = {}
    check: dict[str, int] = defaultdict(int)
    every: dict[str, list] = {}
    rng = random.Random(43)
    lit = ReadOnlyLibrary.open(args.literature, Settings()) if args.literature else None
    for o in run["outcomes"]:
        paper = o["id"].split(":")[0]
        if paper not in owners:
            owners[paper] = Owners(ReadOnlyLibrary.open(root / f"{paper}-{stem}", Settings()), lit)
        r = o["result"]
        gold = set(o["gold"])
        sel = r["selection"]
        before = o["selected"]
        stats = per[paper]
        stats["slots"] += 1
        stats["filled_before"] += before is not None
        stats["right_before"] += before in gold if before else 0
        after = before
        if before is not None:
            cands = tuple(Candidate.from_dict(c) for c in r["candidates"][:10])
            chosen = next((c.paper for c in cands if c.doc_id == before), None) or Paper.from_dict(sel["paper"])
            focus = (r["slot"] or {}).get("focus") or (r["slot"] or {}).get("sentence") or ""
            d = decide(focus, cands, Selection("found", chosen, sel["confidence"], sel["method"]), owners[paper],
                       threshold)
            if d is not None:
                stats["named"] += 1
                if d.action != "kept":
                    after = d.selection.paper.doc_id if d.selection.status == "found" and d.selection.paper else None
                    stats["changed"] += 1
                    stats["changed_wrong_before"] += before not in gold
                    if after is None:
                        stats["withheld"] += 1
                        stats["withheld_wrong"] += before not in gold
                    else:
                        stats["promoted"] += 1
                        stats["promoted_right"] += after in gold
                        stats["promoted_was_right"] += before in gold
                    if args.show:
                        mark = "RIGHT->" if before in gold else "wrong->"
                        mark += "right" if after in gold else ("none" if after is None else "wrong")
                        print(f"{o['id']} {mark} [{d.action}] {d.why[:220]}\n   {o['text'][:160]}")
        if args.check and len(gold) == 1:
            cands = tuple(Candidate.from_dict(c) for c in r["candidates"][:10])
            focus = (r["slot"] or {}).get("focus") or (r["slot"] or {}).get("sentence") or ""
            lib = owners[paper].library
            if paper not in every:
                every[paper] = list(lib.iter_papers())
            gp = next(iter(lib.get(sorted(gold))), None)
            if gp is not None:
                check["gold"] += 1
                flagged = overruled(focus, gp, cands, owners[paper])
                check["flag_gold"] += flagged is not None
                if flagged is not None and args.show:
                    print(f"{o['id']} CHECK false alarm: {flagged[0][:200]}\n   {o['text'][:160]}")
                other = rng.choice([x for x in every[paper] if x.doc_id not in gold])
                check["swap"] += 1
                check["flag_swap"] += overruled(focus, other, cands, owners[paper]) is not None
        stats["filled_after"] += after is not None
        stats["right_after"] += after in gold if after else 0
    if check:
        print(f"check: correct citations the name rule flags (false alarms added) {check['flag_gold']} of "
              f"{check['gold']}; a random other key of the .bib put in their place, flagged by the rule "
              f"{check['flag_swap']} of {check['swap']}")
    print("| paper | slots | filled before | right | precision | filled after | right | precision | withheld "
          "(wrong before) | named paper filled instead (right; was right) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    total: dict[str, int] = defaultdict(int)
    for paper, s in sorted(per.items()):
        for k, v in s.items():
            total[k] += v
        print(_row(paper, s))
    print(_row("**all**", total))


def _row(name: str, s: dict[str, int]) -> str:
    def pr(right: int, filled: int) -> str:
        return f"{right / filled:.1%}" if filled else "-"

    return (f"| {name} | {s['slots']} | {s['filled_before']} | {s['right_before']} | "
            f"{pr(s['right_before'], s['filled_before'])} | {s['filled_after']} | {s['right_after']} | "
            f"{pr(s['right_after'], s['filled_after'])} | {s['withheld']} ({s['withheld_wrong']}) | "
            f"{s['promoted']} ({s['promoted_right']}; {s['promoted_was_right']}) |")


if __name__ == "__main__":
    main()
