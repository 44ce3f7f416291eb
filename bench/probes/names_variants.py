"""Backs bench/RESULTS.md, section "The names change and the hub check, paper by paper (issue 4b)".

Variants of how the names next to a marker are read and weighed, replayed on a saved drafts-dev run
(bench/drafts_eval.py --traces; choose on the TRAINING part, then report the test part):

    python bench/probes/names_variants.py bench/out/train-head.json [--papers a,b]

Per variant, each slot's ``names`` and ``names-weak`` lists are made again over the paper's library (the one
bench/drafts_eval.py built, under bench/out/drafts-libs), the other agents' saved lists kept, fused with the shipped
fusion and the top-1's confidence computed again (no hub check): fused hit@1, fills and right fills per paper.
Variants: the decay of the n-th name (``names.DECAY``: 1 / n**DECAY) and the closing aside moved last
(``mentions.ASIDES``: "Y, following the X design, [CITATION]").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

VARIANTS = {"shipped (decay 1, asides as written)": (1.0, False), "asides last": (1.0, True),
            "decay 1.5": (1.5, False), "decay 2": (2.0, False), "decay 2, asides last": (2.0, True)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("--papers")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    p.add_argument("--threshold", type=float, default=0.55)
    args = p.parse_args()

    import tune

    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import open_draft_library
    from citefinder.rank.calibration import default_calibration
    from citefinder.retrieve.agents import names as names_mod
    from citefinder.retrieve.query import mentions
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots

    offline_environment()
    data = json.loads(args.run.read_text())
    sizes = data.get("library_sizes") or {}
    by_paper: dict[str, list[dict]] = {}
    for o in data["outcomes"]:
        o["library_size"] = sizes.get(o["id"].split(":")[0], 0)
        by_paper.setdefault(o["id"].split(":")[0], []).append(o)
    papers = args.papers.split(",") if args.papers else list(by_paper)
    cal = default_calibration()
    settings = Settings()
    table: dict[str, dict[str, list[int]]] = {v: {} for v in VARIANTS}
    embedder = None
    for paper in papers:
        bib = args.data / paper / "refs-enriched.bib"
        library = open_draft_library(settings, bib, ROOT / "bench/out/drafts-libs" / f"{paper}-refs-enriched", embedder)
        embedder = library.embedder
        slots = find_slots((args.data / paper / "draft.txt").read_text(encoding="utf-8"))
        outs = by_paper[paper]
        assert len(slots) == len(outs), paper
        agents = {True: names_mod.NamesAgent(settings, library, strong=True),
                  False: names_mod.NamesAgent(settings, library, strong=False)}
        for variant, (decay, asides) in VARIANTS.items():
            names_mod.DECAY, mentions.ASIDES = decay, asides
            row = table[variant].setdefault(paper, [0, 0, 0, 0])
            for slot, o in zip(slots, outs, strict=True):
                query = reformulate(slot)[0]
                lists = {k: v for k, v in (o.get("lists") or {}).items() if k not in ("names", "names-weak")}
                if query.names:
                    for agent in agents.values():
                        hits = agent.search(query)
                        if hits:
                            lists[agent.name] = [(h.doc_id, h.rank, h.score) for h in hits]
                feats, labels = tune.top1_rows([replace_lists(o, lists)], o["library_size"])
                if not feats:
                    row[0] += 1
                    continue
                row[0] += 1
                row[1] += labels[0]
                if cal.probability(feats[0]) >= args.threshold:
                    row[2] += 1
                    row[3] += labels[0]
        names_mod.DECAY, mentions.ASIDES = 1.0, True
        print(f"{paper} done", file=sys.stderr, flush=True)
    print(f"{args.run.name}: names lists made again per variant, no hub check\n")
    print("| paper | slots | " + " | ".join(f"{v}: hit@1 · filled / right" for v in VARIANTS) + " |")
    print("|---|---|" + "---|" * len(VARIANTS))
    for paper in papers + ["all"]:
        cells = []
        for v in VARIANTS:
            rows = table[v].values() if paper == "all" else [table[v][paper]]
            n, hits, filled, right = (sum(r[i] for r in rows) for i in range(4))
            cells.append(f"{hits / max(1, n):.3f} · {filled} / {right} ({right / max(1, filled):.1%})")
        n = sum(r[0] for r in (table[next(iter(VARIANTS))].values() if paper == "all"
                               else [table[next(iter(VARIANTS))][paper]]))
        print(f"| {paper} | {n} | " + " | ".join(cells) + " |")


def replace_lists(o: dict, lists: dict) -> dict:
    return {**o, "lists": lists}


if __name__ == "__main__":
    main()
