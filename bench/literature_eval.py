"""The literature tier measured (issue 36, "Discovery"): papers you don't have yet, found in a literature library.

    python bench/literature_eval.py drafts --literature /work/lit/papers-333k --part train \
        --out bench/out/lit-train.json
    python bench/literature_eval.py citeme --literature /work/lit/papers-333k --out bench/out/lit-citeme.json
    python bench/literature_eval.py cold --literature /work/lit/papers-333k

``drafts``: each drafts-dev paper's own .bib is its library (bench/drafts_split.json's part; the libraries are
kept under --libraries and reused). Every slot is cited by the whole engine with the literature tier asked for
every slot. A slot whose cited papers are in the literature (``contexts.jsonl`` gives their papers-333k doc_ids)
is cited with those entries left out of the paper's library — as if the author had not added them yet (the
pipeline's ``exclude``: the agents' lists without them, the confidence over the smaller library) — and scored
by where the gold lands among the literature candidates (R@1, R@10; and the same counting only the slots whose
own best paper is unsure, the default ``when``). Every other slot is scored by the user's own paper first
(hit@1, the selection) with and without the tier, and every slot checks that no literature paper was selected.

``citeme``: CiteME's test excerpts searched in the literature library alone (the engine over the read-only
view, as the tier runs it): R@1/5/10 and the selection, to set beside the 50k library's figure.

``cold``: a fresh process opens the literature library and searches one slot: the tier's cold start.

``index``: a library folder (a COPY of a literature library, never the one searched read-only) opened as a library
and the derived indexes of the literature agents built into it, the exact-search vectors included whatever the
size (the read-only view reads ``indexes/vectors`` only when it is current; ``library embed`` above
``exact_dense_max`` papers leaves it to Chroma's HNSW index).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CITEFINDER_SHARED_DATA", ROOT.parent / "shared/data"))  # as tests/conftest.py


class GoldWorks:
    """Which literature candidates are a slot's cited paper: its doc_id in the literature folder, else the same
    work by the identity rule (a shared DOI or arXiv id; a shared title unless the year or first author says
    otherwise): an online source names its records by the identity rule, not by the folder's ids."""

    def __init__(self, folder: Path) -> None:
        from citefinder.sources.local import LocalLiterature

        self.local = LocalLiterature.open(folder)

    def rank(self, candidates: list, gold: list[str]) -> int | None:
        from citefinder.library.identity import dedupe_keys, same_work

        papers = self.local.get(gold) if gold else []
        keys = {k: p for p in papers for k in dedupe_keys(p)}
        for n, c in enumerate(candidates, 1):
            if c.doc_id in gold or any(k in keys and same_work(k, keys[k], c.paper) for k in dedupe_keys(c.paper)):
                return n
        return None


def drafts(args: argparse.Namespace, make_search: Any = None, variants: Any = None) -> dict:
    """``make_search(settings, library)``: the literature searched (default: the folder ``--literature`` through
    :class:`LibraryLiterature`); a search that counts its calls says how many the last one sent
    (``last_calls``). ``variants(library)``: other tiers by name, asked for the removed slots only and scored
    beside the main one (``rows[i]["variants"]``). ``args.warm``: every slot's tier asked twice, the second
    time timed as ``lit_warm_s`` (an online source's cache answers it) and checked to give the same papers."""
    from citefinder.config import Settings
    from citefinder.evaluate.drafts import key_to_doc_id, open_draft_library
    from citefinder.library.identity import surname
    from citefinder.pipeline.doubt import needs_literature
    from citefinder.pipeline.literature import LibraryLiterature, LiteratureTier
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.pipeline.priors import Priors
    from citefinder.retrieve.agents.draft import draft_context
    from citefinder.text.slots import find_slots

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    papers = args.papers.split(",") if args.papers else split[args.part]
    contexts: dict[tuple[str, int], dict] = {}
    for line in (DATA / "drafts-dev/contexts.jsonl").read_text().splitlines():
        row = json.loads(line)
        contexts[(row["paper"], row["slot"])] = row
    settings = Settings().with_overrides(**({"query_encoder": args.query_encoder} if args.query_encoder else {}))
    t0 = time.perf_counter()
    search = None
    rows = []
    years: dict[str, dict] = {}
    for n, name in enumerate(papers, 1):
        print(f"[{n}/{len(papers)}] {name}", file=sys.stderr, flush=True)
        folder = args.libraries / f"{name}-{Path(args.bib).stem}"
        bib = DATA / "drafts-dev" / name / args.bib
        library = open_draft_library(settings, bib, folder)
        if search is None:
            search = (make_search(settings, library) if make_search is not None
                      else LibraryLiterature(lit_settings(settings, args), args.literature,
                                             embedder=library.embedder))
            gold_works = GoldWorks(args.literature)
        doc_of = key_to_doc_id(library, bib)
        pipeline = Pipeline(library.settings, library)
        # 100 kept (R@10 reads the first 10): the rest are what a re-ranking of the tier is tuned on
        tier = LiteratureTier(search, library, when="always", threshold=settings.confidence_threshold, shown=100,
                              priors=Priors() if getattr(args, "own_order", False) else None)
        others = variants(library) if variants is not None else {}
        own_years = [p.year for p in library.iter_papers() if p.year]
        own_surnames = sorted({surname(a) for p in library.iter_papers() for a in p.authors} - {""})
        text = (DATA / "drafts-dev" / name / "draft.txt").read_text(encoding="utf-8")
        gold_lines = [json.loads(x) for x in (DATA / "drafts-dev" / name / "gold.jsonl").read_text().splitlines() if x]
        draft = draft_context(text)
        base = pipeline.exclude
        for slot, g in zip(find_slots(text, settings.context_sentences), gold_lines, strict=True):
            ctx = contexts.get((name, g["slot"]), {})
            own_gold = sorted({doc_of[k] for k in g["keys"] if k in doc_of})
            lit_gold = list(ctx.get("doc_ids") or [])
            share = getattr(args, "removed_share", 1.0)
            removed = bool(own_gold and lit_gold) and kept_out(f"{name}:{g['slot']}", share)
            if getattr(args, "removed_only", False) and not removed:
                continue
            pipeline.exclude = base | frozenset(own_gold) if removed else base
            start = time.perf_counter()
            result = (pipeline.cite_slot(slot, draft=draft, draft_slots=len(gold_lines))  # as a fill of the draft
                      if not getattr(args, "lit_only", False) else lit_only(slot, draft))
            own_s = time.perf_counter() - start
            select = result.trace("select")
            top = select.top[0].score if select is not None and select.top else 0.0
            start = time.perf_counter()
            # --only-filled: the literature asked only where a fill can be withdrawn (the open-world check's cost)
            skip = getattr(args, "only_filled", False) and result.selection.status != "found"
            extended = result if skip else tier.extend(result, top_confidence=top, exclude=pipeline.exclude)
            lit_s = time.perf_counter() - start
            calls = getattr(search, "last_calls", None)
            assert extended.candidates == result.candidates and extended.selection == result.selection
            lit_ids = [c.doc_id for c in extended.literature]
            extra: dict[str, Any] = {}
            if getattr(args, "warm", False):
                start = time.perf_counter()
                again = tier.extend(result, top_confidence=top, exclude=pipeline.exclude)
                extra.update(lit_warm_s=time.perf_counter() - start, calls_warm=getattr(search, "last_calls", None),
                             warm_same=[c.doc_id for c in again.literature] == lit_ids)
            if removed and others:
                extra["variants"] = {v: gold_works.rank(list(t.extend(result, top_confidence=top,
                                                                      exclude=pipeline.exclude).literature[:10]),
                                                        lit_gold) for v, t in others.items()}
            top10 = extended.literature[:10]
            sel = extended.selection
            rows.append({
                "id": f"{name}:{g['slot']}", "removed": removed, "own_gold": own_gold, "lit_gold": lit_gold,
                "unsure": needs_literature(result, top_confidence=top, threshold=settings.confidence_threshold),
                "lit_rank": gold_works.rank(list(extended.literature), lit_gold),
                "own_rank": next((i for i, c in enumerate(result.candidates, 1) if c.doc_id in own_gold), None),
                "selected": sel.paper.doc_id if sel.status == "found" and sel.paper else None,
                "selected_literature": any(p.doc_id in lit_ids and p.doc_id not in own_gold
                                           and not library.get([p.doc_id]) for p in sel.papers),
                "top10_ids": [c.doc_id for c in top10],
                # the literature agents' own lists, for tuning its fusion offline (bench/tune.py fusion reads them)
                "lists": {t["agent"]: [(h["doc_id"], h["rank"], h["score"]) for h in t["top"]]
                          for t in extended.trace("literature").details["traces"]
                          if t["kind"] == "retriever" and t["top"]} if removed and not skip else {},
                "lit": [[c.doc_id, c.paper.year, [surname(a) for a in c.paper.authors],
                         round(c.stage("literature").score, 4), round(c.stage("fused").score, 5),
                         {s.stage: s.rank for s in c.scores}] for c in extended.literature] if removed else [],
                # what the open-world check reads (select/open_world.py): the fill's confidence, the literature's best
                "own_p": top,
                "lit_p": extended.literature[0].stage("literature").score if extended.literature else None,
                "lit_top": extended.literature[0].doc_id if extended.literature else None,
                "lit_top_gold": gold_works.rank(list(extended.literature[:1]), lit_gold) == 1 if lit_gold else False,
                "yours_dropped": 0 if skip else len((extended.trace("literature").details or {}).get("yours", [])),
                "own_s": own_s, "lit_s": lit_s, "calls": calls, **extra,
            })
        years[name] = {"max": max(own_years, default=None), "surnames": own_surnames}
    pipeline.exclude = base
    assert search is not None
    return {"kind": "drafts", "papers": papers, "bib": args.bib, "literature": str(args.literature),
            "query_encoder": settings.query_encoder, **library_facts(search),
            "own_order": getattr(args, "own_order", False), "priors": asdict(tier.priors),
            "wall_s": time.perf_counter() - t0,
            "summary": summarize(rows), "libraries_seen": years, "rows": rows,
            # the removed slots as tune.py's outcomes: the gold is the cited paper's literature records
            "outcomes": [{"id": r["id"], "answerable": True, "gold": r["lit_gold"], "lists": r["lists"]}
                         for r in rows if r["removed"]]}


def kept_out(slot_id: str, share: float) -> bool:
    """Whether a slot whose paper the literature holds is cited with it removed from the library: a fixed, seeded
    ``share`` of them (by a hash of the slot's id, the same in every run); 1.0: all (the protocol of issue 36)."""
    import hashlib

    return share >= 1.0 or int(hashlib.sha1(f"removed:{slot_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def lit_only(slot: Any, draft: str) -> Any:
    """The slot's query as the pipeline makes it (reformulate, the draft's context), the user's own ranking left
    out: with the tier asked for every slot its literature depends on the query and the user's papers alone."""
    from dataclasses import replace

    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.types import Selection, SlotResult

    query, _ = reformulate(slot)
    if draft:
        query = replace(query, draft=f"{slot.heading}. {draft}" if slot.heading else draft)
    return SlotResult(slot, query, (), Selection("not_found"), ())


def lit_settings(settings, args: argparse.Namespace):  # noqa: ANN001, ANN201 - bench helper
    """The settings the literature is searched with: ``--lit-query-encoder`` for the literature alone."""
    encoder = getattr(args, "lit_query_encoder", None)
    return settings.with_overrides(query_encoder=encoder) if encoder else settings


def library_facts(search: Any) -> dict:
    """A literature library's query side, fusion and vectors (nothing for an online source)."""
    if not hasattr(search, "view"):
        return {}
    return {"literature_query_encoder": search.view.settings.query_encoder,
            "literature_fusion": search.pipeline.fusion.to_dict(), "with_vectors": search.view.embedded_count()}


def summarize(rows: list[dict]) -> dict:
    removed = [r for r in rows if r["removed"]]
    unsure = [r for r in removed if r["unsure"]]
    other = [r for r in rows if not r["removed"] and r["own_gold"]]

    def at(group: list[dict], k: int) -> float:
        return sum(1 for r in group if r["lit_rank"] is not None and r["lit_rank"] <= k) / max(1, len(group))

    lit_s = sorted(r["lit_s"] for r in rows)
    named = sorted({v for r in removed for v in r.get("variants", {})})
    variants = {v: {f"R@{k}": sum(1 for r in removed if (n := r["variants"].get(v)) is not None and n <= k)
                    / max(1, len(removed)) for k in (1, 5, 10)} for v in named}
    return {
        "removed_slots": len(removed),
        "lit_R@1": at(removed, 1), "lit_R@5": at(removed, 5), "lit_R@10": at(removed, 10),
        "unsure_share": len(unsure) / max(1, len(removed)),
        "lit_R@10_when_unsure": sum(1 for r in unsure if r["lit_rank"] and r["lit_rank"] <= 10) / max(1, len(removed)),
        "other_slots": len(other),
        "own_hit@1": sum(1 for r in other if r["own_rank"] == 1) / max(1, len(other)),
        "own_selected_right": sum(1 for r in other if r["selected"] in r["own_gold"]) / max(1, len(other)),
        "literature_selected": sum(1 for r in rows if r["selected_literature"]),
        "lit_ms_p50": 1000 * lit_s[len(lit_s) // 2] if lit_s else 0.0,
        "lit_ms_p95": 1000 * lit_s[int(len(lit_s) * 0.95)] if lit_s else 0.0,
        "unsure_of_other": sum(1 for r in other if r["unsure"]) / max(1, len(other)),
        **agent_recall(removed),
        **({"variants": variants} if variants else {}),
    }


def agent_recall(removed: list[dict]) -> dict:
    """Per literature agent, the share of removed slots whose gold is in its list (its top 100); "any": in one."""
    agents = sorted({a for r in removed for a in r["lists"]})

    def found(r: dict, names: list[str]) -> bool:
        return any(d in r["lit_gold"] for a in names for d, _rank, _score in r["lists"].get(a, ()))

    n = max(1, len(removed))
    return {"agents_R@100": {a: sum(found(r, [a]) for r in removed) / n for a in agents},
            "any_agent_R@100": sum(found(r, agents) for r in removed) / n}


def citeme(args: argparse.Namespace) -> dict:
    from citefinder.config import Settings
    from citefinder.evaluate.dataset import load_items
    from citefinder.evaluate.runner import run_items, score
    from citefinder.pipeline.literature import LibraryLiterature

    settings = Settings().with_overrides(**({"query_encoder": args.query_encoder} if args.query_encoder else {}))
    t0 = time.perf_counter()
    lit = LibraryLiterature(lit_settings(settings, args), args.literature)
    opened = time.perf_counter() - t0
    items = load_items(DATA / "citeme.jsonl", split=args.split)
    outcomes = run_items(lit.pipeline, items, keep_traces=False)
    scored = score(outcomes, items)
    return {"kind": "citeme", "split": args.split, "literature": str(args.literature), "open_s": opened,
            "query_encoder": lit.view.settings.query_encoder, "fusion": lit.pipeline.fusion.to_dict(),
            "papers": lit.view.count(), "with_vectors": lit.view.embedded_count(),
            "wall_s": time.perf_counter() - t0, **scored, "outcomes": [asdict(o) for o in outcomes]}


def cold(args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    from citefinder.config import Settings
    from citefinder.pipeline.literature import LibraryLiterature
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots

    imported = time.perf_counter() - t0
    lit = LibraryLiterature(lit_settings(Settings(), args), args.literature)
    opened = time.perf_counter() - t0
    slot = find_slots("Transformers replaced recurrence with self-attention entirely [CITATION].", 1)[0]
    ranked = lit.rank(reformulate(slot)[0])
    first = time.perf_counter() - t0
    again = time.perf_counter()
    lit.rank(reformulate(find_slots("Residual connections ease the training of very deep networks [CITATION].",
                                    1)[0])[0])
    return {"kind": "cold", "imports_s": imported, "open_s": opened - imported, "first_slot_s": first - opened,
            "to_first_result_s": first, "second_slot_s": time.perf_counter() - again,
            "top": [c.paper.title for c in ranked.candidates[:3]], "with_vectors": lit.view.embedded_count(),
            "exact_dense_max": lit.view.settings.exact_dense_max, "query_encoder": lit.view.settings.query_encoder,
            "agents": {t.agent: t.status for t in ranked.traces if t.kind == "retriever"},
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def index(args: argparse.Namespace) -> dict:
    from citefinder.config import Settings
    from citefinder.index.base import derived_indexes
    from citefinder.library.store import Library
    from citefinder.pipeline.literature import LITERATURE_AGENTS
    from citefinder.retrieve.registry import index_kinds

    t0 = time.perf_counter()
    settings = Settings(library=args.literature, agents=LITERATURE_AGENTS, exact_dense_max=10**9)
    library = Library.open(settings)
    kinds = index_kinds(settings, library)
    built = {}
    for kind in kinds:
        start = time.perf_counter()
        derived_indexes(library).rebuild([kind], library)
        built[kind.name] = round(time.perf_counter() - start, 1)
        print(kind.name, built[kind.name], file=sys.stderr, flush=True)
    return {"kind": "index", "literature": str(args.literature), "papers": library.count(),
            "embedded": library.embedded_count(), "built_s": built, "wall_s": time.perf_counter() - t0,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("drafts", "citeme", "cold", "index"))
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--part", choices=("train", "test"), default="train")
    p.add_argument("--papers")
    p.add_argument("--split", default="test")
    p.add_argument("--bib", default="refs.bib")
    p.add_argument("--libraries", type=Path, default=ROOT / "bench/out/drafts-libs")
    p.add_argument("--query-encoder", help="the query side of the user's library and the literature")
    p.add_argument("--lit-query-encoder", help="the query side of the literature alone")
    p.add_argument("--own-order", action="store_true",
                   help="the literature's own order (neutral priors): what literature_tune.py tunes on")
    p.add_argument("--removed-only", action="store_true",
                   help="cite only the removed slots (what the discovery figures and the fusion's tuning read); "
                        "the other slots' checks are then not made")
    p.add_argument("--removed-share", type=float, default=1.0,
                   help="drafts: the share of slots whose paper the literature holds cited with it removed from the "
                        "library (a fixed hash of the slot id; the others keep it: how an open-world check costs "
                        "right fills); default all")
    p.add_argument("--only-filled", action="store_true",
                   help="drafts: ask the literature only for slots the selector filled (what the open-world check "
                        "reads; the discovery figures then count those slots only)")
    p.add_argument("--lit-only", action="store_true",
                   help="with --removed-only: the literature's ranking alone, the user's own pipeline not run "
                        "(the tier asked for every slot ranks the same; no own-paper or unsure figures)")
    p.add_argument("--out", type=Path)
    args = p.parse_args()

    from citefinder.config import offline_environment

    offline_environment()
    load = Path("/proc/loadavg").read_text().split()[0]
    result = {"drafts": drafts, "citeme": citeme, "cold": cold, "index": index}[args.what](args)
    result["load_before"], result["load_after"] = load, Path("/proc/loadavg").read_text().split()[0]
    shown = {k: v for k, v in result.items() if k not in ("rows", "outcomes")}
    print(json.dumps(shown.get("summary", shown), indent=1, default=str)[:3000])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
