"""Backs bench/RESULTS.md, section "Slots of several keys, counted by their set (`bench/drafts_eval.py`)".

Does proposing a second paper for a slot (``citefinder.pipeline.second``) help? On a saved drafts_eval run.

    python bench/drafts_eval.py --part train --traces --out bench/out/drafts-train-i22.json
    python bench/probes/second_paper.py bench/out/drafts-train-i22.json

Replays the rule on every slot of the run (its candidates, their confidences as the selector saw them, the
names and authors next to the marker, the selector's pick) for a grid of settings, and prints per setting
the slots whose papers are exactly the gold set, those with at least one gold paper, and the share of
proposed second papers that are gold. A gain in exact-set slots that costs no right slot elsewhere is the
reason to turn it on. Training part only: the test part is read once, by drafts_eval, with the chosen
setting.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from citefinder.pipeline.second import second_paper  # noqa: E402
from citefinder.types import AuthorMention, Candidate, Paper, Query, Selection  # noqa: E402


def replay(outcome: dict) -> tuple[Query, list[Candidate], dict[str, float], Selection]:
    result = outcome["result"]
    q = result["query"]
    query = Query(q.get("text", ""), names=tuple(q.get("names") or ()),
                  authors=tuple(AuthorMention(a["surname"], a.get("year")) for a in q.get("authors") or ()))
    select = next(t for t in result["traces"] if t["agent"] == "select")
    confidences = {h["doc_id"]: h["score"] for h in select["top"]}
    candidates = [Candidate(Paper(h["doc_id"], "")) for h in select["top"]]
    chosen = outcome["selected"]
    selection = Selection("found", Paper(chosen, "")) if chosen else Selection("not_found")
    return query, candidates, confidences, selection


def agents_first(outcome: dict, doc_id: str) -> set[str]:
    """The retrieval agents that ranked ``doc_id`` first in this slot."""
    cand = next((c for c in outcome["result"]["candidates"] if c["paper"]["doc_id"] == doc_id), None)
    return {s["stage"] for s in cand["scores"] if s["rank"] == 1 and s["stage"] not in ("fused", "rerank")} if cand else set()


def figures(outcomes: list[dict], own_first: bool = False, **rule) -> dict[str, float]:
    """The rule's figures; ``own_first``: the second paper must also be some agent's first choice."""
    exact = anykey = proposed = proposed_right = 0
    for o in outcomes:
        gold = set(o["gold"])
        query, candidates, confidences, selection = replay(o)
        if rule:
            proposal = second_paper(query, candidates, confidences, selection, **rule)
            if not own_first or (proposal.also and agents_first(o, proposal.also[0].doc_id)):
                selection = proposal
        picked = {p.doc_id for p in selection.papers}
        exact += bool(picked) and picked == gold
        anykey += bool(picked & gold)
        if selection.also:
            proposed += 1
            proposed_right += selection.also[0].doc_id in gold
    n = len(outcomes)
    return {"exact_set": exact / n, "exact_slots": exact, "any_key": anykey / n, "proposed": proposed,
            "proposed_right": proposed_right}


def main() -> int:
    data = json.loads(Path(sys.argv[1]).read_text())
    outcomes = [o for o in data["outcomes"] if o["answerable"] and o.get("result")]
    multi = sum(1 for o in outcomes if len(o["gold"]) > 1)
    print(f"{len(outcomes)} answerable slots, {multi} with several gold papers")
    base = figures(outcomes)
    print(f"| rule | exact set | any key | second papers proposed | of them gold |\n|---|---|---|---|---|\n"
          f"| none | {base['exact_set']:.4f} ({base['exact_slots']}) | {base['any_key']:.4f} | 0 | - |")
    for own_first in (False, True):
        for need_list in (True, False):
            for p in (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
                f = figures(outcomes, own_first, min_probability=p, need_list=need_list)
                print(f"| p2 >= {p}{', a list' if need_list else ''}{', an agent first' if own_first else ''} | "
                      f"{f['exact_set']:.4f} ({f['exact_slots']}) | {f['any_key']:.4f} | {f['proposed']} | "
                      f"{f['proposed_right']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
