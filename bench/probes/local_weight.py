"""Backs bench/RESULTS.md, section "One paper per marker of a sentence (issue 5)".

How much a slot's own part of its sentence (``Query.local``) should weigh in the BM25/title and dense queries,
probed on the slots that share their sentence with other markers (drafts-dev, TRAINING part only):

    python bench/probes/local_weight.py --part train [--papers a,b]

For each variant the slot is ranked again (``Pipeline.rank_slot``, the draft's context given, no co-cited
seeds) over the library bench/drafts_eval.py built for the paper (run that first); printed: hit@1 and MRR of
the fused list and of the bm25, title and dense lists over those slots.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIN_WORDS = 3


def variants() -> dict[str, tuple[object, object]]:
    """name -> (Query.focus, dense text) as functions of a query."""
    def repeated(sep: str, r: int, only: bool):  # type: ignore[no-untyped-def]
        """The slot's own part ``r`` times (then the whole sentence unless ``only``), joined by ``sep``."""
        def f(q):  # type: ignore[no-untyped-def]
            if q.local and q.local != q.text:
                return sep.join([q.local] * r if only else [q.local] * r + [q.text])
            return q.text
        return f

    def focus(r: int, only: bool = False):  # type: ignore[no-untyped-def]
        return repeated(" ", r, only)

    def enough(q) -> bool:  # type: ignore[no-untyped-def]
        return len([w for w in q.local.split() if len(w) > 3]) >= MIN_WORDS

    def focus_if(q):  # type: ignore[no-untyped-def]
        if q.local and q.local != q.text:
            return q.local if enough(q) else f"{q.local} {q.local} {q.text}"
        return q.text

    def dense_if(q):  # type: ignore[no-untyped-def]
        if q.local and q.local != q.text:
            return q.local if enough(q) else f"{q.local}. {q.text}"
        return q.text

    def dense(r: int, only: bool = False):  # type: ignore[no-untyped-def]
        return repeated(". ", r, only)

    return {
        "shipped: focus local x2 + text, dense local. text": (focus(2), dense(1)),
        "focus x3": (focus(3), dense(1)),
        "focus x4": (focus(4), dense(1)),
        "focus local only": (focus(1, True), dense(1)),
        "dense local x2": (focus(2), dense(2)),
        "dense local only": (focus(2), dense(1, True)),
        "focus x3, dense local x2": (focus(3), dense(2)),
        "focus x4, dense local x2": (focus(4), dense(2)),
        "focus local only, dense local only": (focus(1, True), dense(1, True)),
        "focus local only, dense local x2": (focus(1, True), dense(2)),
        "local only when it has 3+ words of 4+ letters (both)": (focus_if, dense_if),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--part", default="train", choices=("train", "test"))
    p.add_argument("--papers")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    p.add_argument("--only", help="variant names, |-separated")
    args = p.parse_args()

    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import key_to_doc_id, open_draft_library
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.retrieve.agents import dense as dense_mod
    from citefinder.retrieve.agents.draft import draft_context
    from citefinder.text.slots import find_slots
    from citefinder.types import Query

    offline_environment()
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    papers = args.papers.split(",") if args.papers else split[args.part]
    settings = Settings()
    todo = variants()
    if args.only:
        todo = {k: v for k, v in todo.items() if k in args.only.split("|")}
    ranks: dict[str, dict[str, list[int | None]]] = {name: {} for name in todo}
    embedder = None
    for paper in papers:
        bib = args.data / paper / "refs-enriched.bib"
        library = open_draft_library(settings, bib, ROOT / "bench/out/drafts-libs" / f"{paper}-refs-enriched", embedder)
        embedder = library.embedder
        pipeline = Pipeline(library.settings, library)
        doc_of = key_to_doc_id(library, bib)
        text = (args.data / paper / "draft.txt").read_text(encoding="utf-8")
        gold = [json.loads(x) for x in (args.data / paper / "gold.jsonl").read_text().splitlines() if x.strip()]
        draft = draft_context(text)
        for slot, g in zip(find_slots(text), gold, strict=True):
            wanted = {doc_of[k] for k in g["keys"] if k in doc_of}
            if "[OTHER]" not in slot.focus or not wanted:
                continue
            for name, (focus, dense) in todo.items():
                Query.focus = property(focus)  # type: ignore[method-assign,assignment]
                dense_mod.dense_text = dense  # type: ignore[assignment]
                _, cands, traces = pipeline.rank_slot(slot, draft=draft)
                lists = {t.agent: [h.doc_id for h in t.top] for t in traces if t.kind == "retriever"}
                lists["fused"] = [c.doc_id for c in cands]
                for agent in ("fused", "bm25", "title", "dense"):
                    order = lists.get(agent, [])
                    rank = next((i for i, d in enumerate(order, 1) if d in wanted), None)
                    ranks[name].setdefault(agent, []).append(rank)
        print(f"{paper}: {len(ranks[next(iter(todo))].get('fused', []))} slots so far", flush=True)
    print("| variant | slots | fused hit@1 | fused MRR | bm25 hit@1 | title hit@1 | dense hit@1 |")
    print("|---|---|---|---|---|---|---|")
    for name, by in ranks.items():
        def h1(a: str, by: dict[str, list[int | None]] = by) -> float:
            return sum(r == 1 for r in by.get(a, [])) / max(1, len(by.get(a, [])))
        mrr = sum(1 / r for r in by.get("fused", []) if r) / max(1, len(by.get("fused", [])))
        print(f"| {name} | {len(by.get('fused', []))} | {h1('fused'):.3f} | {mrr:.3f} | {h1('bm25'):.3f} | "
              f"{h1('title'):.3f} | {h1('dense'):.3f} |")


if __name__ == "__main__":
    main()
