"""Backs bench/RESULTS.md, section "How the literature cites: the citation-context memory (issue 20, 2026-11-25)".

Training-only probe of the memory agents' scoring (issue 20): how the nearest citing sentences should vote
(cited-like), on the drafts-dev TRAIN part with a memory from the pack's train split.

    python bench/probes/memory_probe.py --libraries /work/bench-libs/i20/drafts-mem

For every training slot whose gold paper the memory cites, the MRR of the gold paper in cited-like's list
under several vote rules and depths (and of cited-as's BM25 list for reference). Nothing is tuned on a
test part; the chosen rule is written into retrieve/agents/cited_like.py by hand.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared/data/drafts-dev"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--libraries", type=Path, required=True)
    ap.add_argument("--bib", default="refs-enriched.bib")
    args = ap.parse_args()
    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import key_to_doc_id
    from citefinder.index.anchors import ANCHORS
    from citefinder.index.citations import CITATION_VECTORS
    from citefinder.index.memory import memory_index
    from citefinder.index.vectors import query_vector
    from citefinder.library.store import Library
    from citefinder.retrieve.agents.dense import dense_text
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots

    offline_environment()
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    rules = {
        "max": lambda sims: sims[0],
        "max+0.1*rest": lambda sims: sims[0] + 0.1 * sum(sims[1:]),
        "max+0.3*rest": lambda sims: sims[0] + 0.3 * sum(sims[1:]),
        "sum": lambda sims: sum(sims),
        "sum sim^4": lambda sims: sum(s ** 4 for s in sims),
        "sum exp(20(sim-1))": lambda sims: sum(2.718281828 ** (20 * (s - 1)) for s in sims),
    }
    depths = (10, 25, 50, 100, 200)
    rr: dict[str, list[float]] = defaultdict(list)
    embedder = None
    covered = total = 0
    for paper in split["train"]:
        library = Library.open(Settings(library=args.libraries / f"{paper}-{Path(args.bib).stem}"), embedder=embedder)
        embedder = library.embedder
        index, _ = memory_index(library, CITATION_VECTORS)
        anchors, _ = memory_index(library, ANCHORS)
        if index is None:
            continue
        cited = set(index.doc_ids)
        text = (DATA / paper / "draft.txt").read_text(encoding="utf-8")
        gold_lines = [json.loads(x) for x in (DATA / paper / "gold.jsonl").read_text().splitlines() if x.strip()]
        doc_of = key_to_doc_id(library, DATA / paper / args.bib)
        for slot, g in zip(find_slots(text, 0), gold_lines, strict=True):
            gold = {doc_of[k] for k in g["keys"] if k in doc_of}
            if not gold:
                continue
            total += 1
            if not gold & cited:
                continue
            covered += 1
            query, _ = reformulate(slot)
            near = index.nearest(query_vector(library, dense_text(query)), max(depths))
            for depth in depths:
                for name, rule in rules.items():
                    sims: dict[str, list[float]] = defaultdict(list)
                    for _r, doc, sim in near[:depth]:
                        sims[doc].append(sim)
                    order = sorted(sims, key=lambda d: -rule(sims[d]))
                    rank = min((order.index(d) + 1 for d in gold if d in order), default=None)
                    rr[f"{name} @{depth}"].append(1 / rank if rank else 0.0)
            hits = anchors.search(query.focus, 100) if anchors is not None else []
            order = [h.doc_id for h in hits]
            rank = min((order.index(d) + 1 for d in gold if d in order), default=None)
            rr["cited-as (BM25 over anchors)"].append(1 / rank if rank else 0.0)
    print(f"{covered} of {total} answerable training slots have a gold paper the memory cites")
    for name, xs in sorted(rr.items(), key=lambda kv: -sum(kv[1])):
        print(f"{name:32s} MRR {sum(xs) / len(xs):.4f}  R@1 {sum(1 for x in xs if x == 1) / len(xs):.3f}")


if __name__ == "__main__":
    main()
