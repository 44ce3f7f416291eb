"""Per paper, before and after ``library enrich``: two drafts runs of the same part (``bench/drafts_eval.py``, the
second with ``--enrich-from``) compared slot by slot, and the slots split by whether their gold entry gained an
abstract (does partial enrichment tilt the ranking against the entries it left without one?).

    python bench/enrich_compare.py BEFORE.json AFTER.json [--fusion FILE] [--markdown]

``--fusion FILE``: fuse both runs' saved agent lists again with that fusion file's "slots" weights (a probe
of a fusion change, training part only) instead of reading the runs' own fused ranks.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any


def fused_ranks(outcomes: list[dict[str, Any]], fusion: dict[str, Any] | None) -> dict[str, int | None]:
    """Each slot's rank of its first gold paper in the fused list (the run's own, or ``fusion`` applied)."""
    out: dict[str, int | None] = {}
    for o in outcomes:
        if fusion is None:
            out[o["id"]] = o["gold_rank"].get("fused")
            continue
        weights, k = fusion["weights"], float(fusion["k"])
        scores: dict[str, float] = defaultdict(float)
        for name, hits in (o.get("lists") or {}).items():
            w = float(weights.get(name, fusion.get("default_weight", 0.0)))
            for doc, rank, _ in hits:
                scores[doc] += w / (k + rank)
        order = sorted(scores, key=lambda d: (-scores[d], d))
        gold = set(o["gold"])
        out[o["id"]] = next((i for i, d in enumerate(order, 1) if d in gold), None)
    return out


def figures(rows: list[tuple[int | None, dict[str, Any]]]) -> dict[str, float]:
    n = len(rows)
    picked = [o for _, o in rows if o["selected"]]
    right = [o for o in picked if o["selected"] in o["gold"]]
    return {"slots": n, "hit@1": sum(r == 1 for r, _ in rows) / max(1, n),
            "hit@5": sum(r is not None and r <= 5 for r, _ in rows) / max(1, n),
            "filled": len(picked), "right": len(right), "precision": len(right) / max(1, len(picked))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--fusion", type=Path, help="a fusion.json whose 'slots' fusion both runs are fused with again")
    p.add_argument("--libraries", type=Path, help="the after run's --libraries folder, for a run that did not "
                   "record which entries gained an abstract")
    args = p.parse_args()
    before, after = (json.loads(x.read_text()) for x in (args.before, args.after))
    fusion = json.loads(args.fusion.read_text())["slots"] if args.fusion else None
    enriched = after.get("enriched") or {}
    found = {(paper, doc_id) for paper, e in enriched.items() for doc_id in e.get("abstract_ids", ())}
    if args.libraries:  # a run made before abstract_ids were recorded: read its libraries (read-only)
        from citefinder.library.reference import stored_papers

        for paper in enriched:
            folder = next(args.libraries.glob(f"{paper}-*-from-*"))
            found |= {(paper, p.doc_id) for p in stored_papers(folder) if p.source_of("abstract")}
    per_paper_found = {paper: e.get("abstract_found", 0) for paper, e in enriched.items()}
    ranks = [fused_ranks(run["outcomes"], fusion) for run in (before, after)]
    a_out = {o["id"]: o for o in after["outcomes"]}
    groups: dict[str, list[tuple[str, int | None, int | None, dict, dict]]] = defaultdict(list)
    for o in before["outcomes"]:
        if not o["answerable"]:
            continue
        paper = o["id"].split(":")[0]
        groups[paper].append((o["id"], ranks[0][o["id"]], ranks[1][o["id"]], o, a_out[o["id"]]))
    print("| paper | slots | entries given an abstract | hit@1 before -> after | hit@5 before -> after | selector "
          "right/filled before -> after |")
    print("|---|---|---|---|---|---|")
    every: list[tuple[str, int | None, int | None, dict, dict]] = []
    for paper in before["papers"]:
        rows = groups[paper]
        every += rows
        b, a = figures([(r0, o0) for _, r0, _, o0, _ in rows]), figures([(r1, o1) for _, _, r1, _, o1 in rows])
        print(f"| {paper} | {len(rows)} | {per_paper_found.get(paper, '-')} | {b['hit@1']:.3f} -> {a['hit@1']:.3f} | "
              f"{b['hit@5']:.3f} -> {a['hit@5']:.3f} | {b['right']}/{b['filled']} -> {a['right']}/{a['filled']} |")
    b, a = figures([(r0, o0) for _, r0, _, o0, _ in every]), figures([(r1, o1) for _, _, r1, _, o1 in every])
    print(f"| **all** | {len(every)} | {sum(per_paper_found.values())} | {b['hit@1']:.3f} -> {a['hit@1']:.3f} | "
          f"{b['hit@5']:.3f} -> {a['hit@5']:.3f} | {b['right']}/{b['filled']} ({b['precision']:.1%}) -> "
          f"{a['right']}/{a['filled']} ({a['precision']:.1%}) |")
    if found:
        print("\nSlots by whether a gold entry gained an abstract:")
        print("| slots | n | hit@1 before -> after | hit@5 before -> after |\n|---|---|---|---|")
        for label, test in (("a gold entry gained an abstract", True), ("no gold entry gained one", False)):
            rows = [x for x in every if any((x[0].split(":")[0], g) in found for g in x[3]["gold"]) == test]
            b = figures([(r0, o0) for _, r0, _, o0, _ in rows])
            a = figures([(r1, o1) for _, _, r1, _, o1 in rows])
            print(f"| {label} | {len(rows)} | {b['hit@1']:.3f} -> {a['hit@1']:.3f} | "
                  f"{b['hit@5']:.3f} -> {a['hit@5']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
