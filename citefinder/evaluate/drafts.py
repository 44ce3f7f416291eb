"""End-to-end evaluation on real drafts, the way a user meets CiteFinder.

A draft folder (schema of ``../shared/data/drafts-dev/<paper>/``) holds ``draft.txt`` with
``[CITATION]`` markers, the paper's own bibliography (``refs.bib`` / ``refs-enriched.bib``) and
``gold.jsonl`` (the BibTeX keys of each slot). :func:`evaluate_draft` imports the .bib into a
library of its own, fills the draft with :meth:`Pipeline.cite_text`, and scores every slot by
bib key: a key counts as the paper its entry became in the library (its own record, or the record
it was deduplicated into — matched by DOI, arXiv id or normalised title, as the importer does).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from citefinder.evaluate.dataset import EvalItem
from citefinder.evaluate.runner import ItemOutcome, agent_lists, best_gold_rank, score, stage_runs
from citefinder.types import Paper

if TYPE_CHECKING:
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

Progress = Callable[[str, int, int], None]


def key_to_doc_id(library: "Library", bib: Path) -> dict[str, str]:
    """Each BibTeX key of ``bib`` -> the doc_id of the library paper its entry is (or was merged into),
    by the importer's own reader and duplicate rule (:meth:`Library.match`)."""
    from citefinder.library.formats.bib import read_bib

    out: dict[str, str] = {}
    for paper in read_bib(bib):
        if isinstance(paper, Paper) and paper.key and paper.key not in out:
            doc_id = library.match(paper)
            if doc_id is not None:
                out[paper.key] = doc_id
    return out


def open_draft_library(settings: Any, bib: Path, folder: Path, embedder: Any = None) -> "Library":
    """The library of ``bib`` in ``folder``: imported once, reused while the .bib is unchanged."""
    import hashlib
    import shutil

    from citefinder.library.store import Library

    digest = hashlib.sha1(bib.read_bytes()).hexdigest()
    stamp = folder / "source.sha1"
    if folder.exists() and (not stamp.exists() or stamp.read_text().strip() != digest):
        if any(folder.iterdir()) and not (folder / "library.json").is_file():  # only a library it made is replaced
            from citefinder.errors import InputError

            raise InputError(f"{folder} is not a library CiteFinder made; choose another --libraries folder "
                             "(nothing was removed).")
        shutil.rmtree(folder)
    fresh = not folder.exists()
    library = Library.open(settings.with_overrides(library=folder), embedder=embedder)
    if fresh or library.count() == 0:
        library.import_files([bib])
        stamp.write_text(digest)  # inside the library folder CiteFinder made: its own file
    return library


def evaluate_draft(
    paper_dir: Path,
    library: "Library",
    pipeline: "Pipeline",
    *,
    bib_name: str = "refs-enriched.bib",
    keep_traces: bool = False,
) -> list[ItemOutcome]:
    """Fill ``paper_dir/draft.txt`` and score each slot against ``gold.jsonl`` (slot order = gold order)."""
    text = (paper_dir / "draft.txt").read_text(encoding="utf-8")
    gold_lines = [json.loads(line) for line in (paper_dir / "gold.jsonl").read_text().splitlines() if line.strip()]
    doc_of = key_to_doc_id(library, paper_dir / bib_name)
    results = pipeline.cite_text(text)
    if len(results) != len(gold_lines):
        raise ValueError(f"{paper_dir.name}: {len(results)} slots found but gold.jsonl has {len(gold_lines)} lines")
    outcomes = []
    for result, g in zip(results, gold_lines, strict=True):
        gold = tuple(dict.fromkeys(doc_of[k] for k in g["keys"] if k in doc_of))
        runs = stage_runs(result, pipeline.fusion)
        sel = result.selection
        outcomes.append(
            ItemOutcome(
                id=f"{paper_dir.name}:{g['slot']}",
                text=result.slot.sentence if result.slot else "",
                gold=gold,
                answerable=bool(gold),
                runs=runs,
                lists={k: [(h.doc_id, h.rank, round(h.score, 5)) for h in v] for k, v in agent_lists(result).items()},
                gold_rank={stage: best_gold_rank(run, gold) for stage, run in runs.items()},
                selected=sel.paper.doc_id if sel.status == "found" and sel.paper else None,
                selected_all=tuple(p.doc_id for p in sel.papers) if sel.status == "found" else (),
                selected_title=sel.paper.title if sel.status == "found" and sel.paper else None,
                status=sel.status,
                confidence=sel.confidence,
                method=sel.method,
                elapsed_s=sum(t.elapsed_s for t in result.traces),
                stage_s={t.agent: t.elapsed_s for t in result.traces},
                result=result.to_dict() if keep_traces else None,
            )
        )
    return outcomes


def evaluate_drafts(
    root: Path,
    papers: list[str],
    settings: Any,
    libraries: Path,
    *,
    bib_name: str = "refs-enriched.bib",
    progress: Progress | None = None,
    keep_traces: bool = False,
    memory: Path | None = None,
    enrich_from: Any = None,
) -> dict[str, Any]:
    """Evaluate several drafts; libraries are kept in ``libraries/<paper>`` and reused while the .bib is unchanged.

    ``memory``: a citation-context memory file (``contexts.sqlite`` of a library the pack was imported
    into) each draft's library starts its own memory from (matched to its papers). ``enrich_from``: a source
    of the literature (:mod:`citefinder.sources`) each draft's library is enriched from after its import
    (``library enrich``), in libraries of their own."""
    from citefinder.pipeline.pipeline import Pipeline

    t0 = time.perf_counter()
    outcomes: list[ItemOutcome] = []
    sizes: dict[str, int] = {}
    abstracts: dict[str, list[str]] = {}
    enriched: dict[str, Any] = {}
    embedder = None
    for n, name in enumerate(papers, start=1):
        if progress:
            progress(name, n - 1, len(papers))
        folder = libraries / (f"{name}-{Path(bib_name).stem}" + (f"-from-{enrich_from.name}" if enrich_from else ""))
        library = open_draft_library(settings, root / name / bib_name, folder, embedder)
        embedder = library.embedder
        if enrich_from is not None:
            from citefinder.sources.enrich import enrich

            report = enrich(library, enrich_from)
            stored = list(library.iter_papers())
            enriched[name] = {"summary": report.summary(), "papers": len(stored),
                              "with_abstract": sum(bool(p.abstract.strip()) for p in stored),
                              "abstract_found": sum(p.source_of("abstract") is not None for p in stored),
                              "abstract_ids": sorted(p.doc_id for p in stored if p.source_of("abstract")),
                              "outcomes": [asdict(o) for o in report.outcomes]}
        if memory is not None:
            from citefinder.library.contexts.api import adopt_memory
            from citefinder.library.contexts.memory import memory_of

            if not memory_of(library).exists():
                adopt_memory(library, memory)
        sizes[name] = library.count()
        # which papers have an abstract (what the confidence's adjustment reads of the top two, replayed offline)
        abstracts[name] = sorted(p.doc_id for p in library.iter_papers() if p.abstract.strip())
        pipeline = Pipeline(library.settings, library)
        outcomes += evaluate_draft(root / name, library, pipeline, bib_name=bib_name, keep_traces=keep_traces)
    if progress:
        progress("", len(papers), len(papers))
    items = [EvalItem(o.id, o.text, o.gold, answerable=o.answerable) for o in outcomes]
    scored = score(outcomes, items)
    scored["sets"] = set_metrics(outcomes)
    return {
        "dataset": f"drafts:{root.name}",
        "papers": papers,
        "bib": bib_name,
        "items": len(outcomes),
        "library_sizes": sizes,
        "abstracts": abstracts,
        "memory": str(memory) if memory else None,
        "enriched": enriched or None,
        "libraries": str(libraries),
        "settings": settings.model_dump(mode="json", exclude={"llm_api_key", "library"}),
        "wall_s": time.perf_counter() - t0,
        **scored,
        "outcomes": [asdict(o) for o in outcomes],
    }


def set_metrics(outcomes: list[ItemOutcome]) -> dict[str, Any]:
    """How often the papers a slot cites are right, counting a slot of several keys (``\\cite{a,b}``) by its set.

    Over answerable slots: ``exact_set`` - the papers selected are exactly the slot's gold papers;
    ``any_key`` - at least one selected paper is gold; ``precision`` - the share of selected papers that are
    gold (over every paper selected); each overall and for single-key and multi-key slots apart
    (``multi``: slots whose gold holds two or more library papers)."""

    def figures(group: list[ItemOutcome]) -> dict[str, float]:
        n = len(group)
        picked = [p for o in group for p in o.selected_all]
        right = sum(1 for o in group for p in o.selected_all if p in o.gold)
        return {
            "slots": n,
            "filled": sum(1 for o in group if o.selected_all),
            "exact_set": sum(1 for o in group if o.selected_all and set(o.selected_all) == set(o.gold)) / max(1, n),
            "any_key": sum(1 for o in group if set(o.selected_all) & set(o.gold)) / max(1, n),
            "precision": right / max(1, len(picked)),
            "papers_selected": len(picked),
        }

    answerable = [o for o in outcomes if o.answerable]
    return {"all": figures(answerable), "single": figures([o for o in answerable if len(o.gold) == 1]),
            "multi": figures([o for o in answerable if len(o.gold) > 1])}
