"""The literature tier: papers you don't have yet, offered beside your own for a slot, never filled in.

A slot's candidates come from the user's library first. When the user asks for every slot (``when="always"``),
or when nothing of theirs is confident (``"unsure"``: the selector filled nothing, or its pick's calibrated
confidence is below ``confidence_threshold`` or not *likely right*: :func:`citefinder.pipeline.doubt.needs_literature`),
the slot's query also goes to the literature:

- a **literature library folder** (a library built from the public dumps, e.g. papers-333k): the same engine —
  the retrieval agents of :data:`LITERATURE_AGENTS`, the tuned fusion, the calibrated confidence — runs over
  the folder opened in place without writing (:class:`~citefinder.library.readonly.ReadOnlyLibrary`); a folder
  built with its own citation-context memory (how the literature cites its papers) adds the memory agents
  (cited-as, cited-like) and how often it cites each paper, a prior (:mod:`citefinder.pipeline.cited`);
- an **online source** (any :class:`~citefinder.sources.base.Source`): the records its ``search`` answers are
  ranked by the same agents over them (:class:`~citefinder.library.pool.PaperPool`), the source's own order
  fused in as one more list ("source"). An online source plugs in by providing the Source alone.

The papers found are marked ``Candidate.origin`` (the source's name: *not in your library*), carry their
stage scores and a "literature" score (rank, confidence), and go into :attr:`SlotResult.literature` — never
into the candidates the selector reads, so no literature paper is ever auto-filled. The ones the user's
library holds already (the same work by :mod:`citefinder.library.identity`) are left out. Every run leaves a
"literature" trace (the literature's own agent traces in its details); a slot that did not ask says why.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from citefinder.errors import CitefinderError
from citefinder.pipeline.offers import (
    DraftFacts,
    ListTops,
    OfferModel,
    evidence,
    moved_first,
    offer_order,
    probability_of,
    with_slot_features,
)
from citefinder.pipeline.priors import NEWEST_NEEDS, OwnPapers, Priors
from citefinder.select.named import named_first
from citefinder.types import Candidate, Hit, Paper, Query, SlotResult, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.rank.fuse import Fusion
    from citefinder.sources.base import Source, SourceRecord

log = logging.getLogger(__name__)

When = Literal["unsure", "always"]
WHEN: tuple[When, ...] = ("unsure", "always")
# The agents that read a literature library: the user's own keys and citation memory are not the literature's;
# the memory agents read the literature folder's own memory (skipped, saying why, in a folder without one).
LITERATURE_AGENTS = ("bm25", "dense", "title", "names", "names-weak", "authors", "near", "context", "draft")
MEMORY_AGENTS = ("cited-as", "cited-like")
# The literature's own dense first pass (index/static.py): asked of every literature library, skipped without them.
STATIC_AGENTS = ("static", "static-context", "static-draft")
SHOWN = 10  # literature papers offered per slot
CONSIDERED = 100  # the literature's fused candidates each given a probability (the offers are its best)
SOURCE_K = 30  # records asked of an online source per slot
SOURCE_WEIGHT = 0.3  # the source's own order in the fusion (untuned: no online source was measured)


@dataclass(frozen=True)
class Ranked:
    """One slot's literature: candidates best first, each one's calibrated confidence, the stages' traces, and
    how often the literature cites each candidate where it is known (:func:`citefinder.pipeline.cited.cited_counts`)."""

    candidates: tuple[Candidate, ...]
    confidences: Mapping[str, float]
    traces: tuple[StageTrace, ...]
    counts: Mapping[str, int] = field(default_factory=dict)


class LiteratureSearch(Protocol):
    """What ranks a slot's query in one literature source; ``name`` marks its papers (``Candidate.origin``)."""

    name: str

    def rank(self, query: Query) -> Ranked: ...


def literature_settings(settings: "Settings") -> "Settings":
    """The settings the engine runs with over the literature: its agents (those the settings name that read a
    literature library, else :data:`LITERATURE_AGENTS`), no LLM, no sample papers, no second paper."""
    from citefinder.retrieve.registry import agent_names

    known = LITERATURE_AGENTS + MEMORY_AGENTS
    agents = tuple(a for a in agent_names(settings) if a in known) or known
    agents += tuple(a for a in STATIC_AGENTS if a not in agents)
    return settings.model_copy(update={"agents": agents, "suggest_sample": True, "llm_model": None,
                                       "fused_top_n": max(settings.fused_top_n, CONSIDERED),
                                       "llm_rewrite": False, "second_paper": False, "reranker": None})


def literature_fusion(settings: "Settings") -> "Fusion":
    """The fusion over a literature library: the weights tuned for it (``citefinder/data/literature.json``, on
    training slots only) over the slot fusion's, when the settings ask for the learned fusion."""
    import json
    from importlib import resources

    from citefinder.rank.fuse import fusion_of

    if settings.fusion != "learned":
        return fusion_of(settings)
    data = json.loads(resources.files("citefinder.data").joinpath("literature.json").read_text(encoding="utf-8"))
    tuned = data.get("fusion") or {}
    # the literature's tuned weights count as tuned: no "no tuned fusion weight" warning for the static agents
    fusion = fusion_of(settings, tuned=tuned.get("weights") or {})
    if not tuned:
        return fusion
    return replace(fusion, k=int(tuned.get("k", fusion.k)), provenance=str(tuned.get("provenance", "")))


def _ranked(pipeline: "Pipeline", query: Query, size: int) -> Ranked:
    candidates, traces = pipeline.rank_query(query)
    ran = pipeline.agents_ran(traces)
    return Ranked(candidates, pipeline.calibration.confidences(candidates, ran, size), traces)


class LibraryLiterature:
    """The engine over a literature library folder, opened in place and never written."""

    def __init__(self, settings: "Settings", folder: Path | str, *, embedder: "Embedder | None" = None) -> None:
        from citefinder.library.readonly import ReadOnlyLibrary
        from citefinder.pipeline.pipeline import Pipeline

        self.view = ReadOnlyLibrary.open(folder, literature_settings(settings), embedder=embedder)
        self.name = self.view.name
        # the view has every read the agents and the pipeline make of a Library, and no write
        self.pipeline = Pipeline(self.view.settings, cast("Library", self.view),
                                 fusion=literature_fusion(self.view.settings))

    def rank(self, query: Query) -> Ranked:
        import sqlite3

        from citefinder.library.reference import damaged_input
        from citefinder.pipeline.cited import cited_counts

        try:
            ranked = _ranked(self.pipeline, query, self.view.count())
            return replace(ranked, counts=cited_counts(self.view, ranked.candidates))
        except sqlite3.DatabaseError as e:  # a file of the folder damaged past what opening it reads
            raise damaged_input(self.view.path, "literature library", e) from e


class SourceOrderAgent:
    """The order a source gave its records (agent "source"): one more list fused beside the agents'."""

    name = "source"
    uses_variants = False

    def __init__(self, records: Sequence["SourceRecord"]) -> None:
        self.k = len(records)
        self._hits = [Hit(r.paper.doc_id, n, 1.0 / n) for n, r in enumerate(records, 1)]

    def skip_reason(self, query: Query) -> str | None:
        return None if self._hits else "the source found nothing"

    def search(self, query: Query) -> list[Hit]:
        return list(self._hits)


class SourceLiterature:
    """An online source's answers for the slot, ranked by the engine's agents over them."""

    def __init__(self, settings: "Settings", source: "Source", *, embedder: "Embedder | None" = None,
                 k: int = SOURCE_K) -> None:
        self.settings = literature_settings(settings)
        self.source = source
        self.name = source.name
        self.sends = source.sends
        self.embedder = embedder
        self.k = k

    def rank(self, query: Query) -> Ranked:
        from citefinder.library.pool import PaperPool
        from citefinder.pipeline.pipeline import Pipeline
        from citefinder.rank.fuse import fusion_of
        from citefinder.retrieve.registry import make_agents
        from citefinder.sources.base import search_text

        start = time.perf_counter()
        sent = search_text(query)  # what the source's disclosure says it is sent, and nothing else
        records = self.source.search(sent, self.k)
        t_source = StageTrace(agent=f"{self.name} search", inputs={"text": sent},
                              params={"k": self.k, "sends": self.source.sends},
                              message=f"{len(records)} records", elapsed_s=time.perf_counter() - start)
        if not records:
            return Ranked((), {}, (t_source,))
        pool = PaperPool(self.settings, [r.paper for r in records], name=self.name, embedder=self.embedder)
        fusion = fusion_of(self.settings)
        fusion = replace(fusion, weights={**fusion.weights, SourceOrderAgent.name: SOURCE_WEIGHT})
        library = cast("Library", pool)
        pipeline = Pipeline(pool.settings, library, fusion=fusion,
                            agents=make_agents(pool.settings, library) + [SourceOrderAgent(records)])
        ranked = _ranked(pipeline, query, pool.count())
        counts = {c.doc_id: c.paper.cited_by for c in ranked.candidates if c.paper.cited_by is not None}
        return replace(ranked, traces=(t_source,) + ranked.traces, counts=counts)


def open_literature(spec: "str | Path | Source", settings: "Settings", *,
                    embedder: "Embedder | None" = None) -> LiteratureSearch:
    """The literature ``spec`` names: a Source object, a literature library folder, or an online source's name
    (:func:`citefinder.sources.registry.open_source`)."""
    from citefinder.sources.registry import open_source, resolve

    if not isinstance(spec, (str, Path)):
        return SourceLiterature(settings, spec, embedder=embedder)
    named = resolve(spec)  # the one rule of every command and page: a folder, or a service
    if named.kind == "folder" and named.folder is not None and named.folder.is_dir():
        return LibraryLiterature(settings, named.folder, embedder=embedder)  # no library there: it says so
    return SourceLiterature(settings, open_source(spec, settings), embedder=embedder)


class LiteratureTier:
    """Adds a slot's literature candidates to its result (see the module docstring).

    ``library``: the user's library (what is "yours"); ``threshold``: the confidence under which a slot asks in
    ``"unsure"`` mode; ``band``: a pick that is not *likely right* asks too
    (:func:`citefinder.pipeline.doubt.needs_literature`); ``shown``: literature papers kept per slot."""

    def __init__(self, search: LiteratureSearch, library: "Library", *, when: When = "unsure",
                 threshold: float = 0.55, shown: int = SHOWN, priors: Priors | None = None, band: bool = True,
                 model: OfferModel | None = None, also_yours: Sequence[Paper] = ()) -> None:
        if when not in WHEN:
            raise ValueError(f"when must be one of {', '.join(WHEN)}, not {when!r}")
        self.search = search
        self.name = search.name
        self.library = library
        self.when = when
        self.threshold = threshold
        self.band = band
        self.shown = shown
        self.priors = priors if priors is not None else Priors.shipped()
        self.model = model if model is not None else OfferModel.shipped()
        self.also_yours = tuple(also_yours)  # papers of a paired .bib the library may not hold
        self._own: tuple[tuple[str, frozenset[str]], OwnPapers] | None = None
        self.sends: str = getattr(search, "sends", "")  # what a search sends off this machine ("" for a folder)
        self._failed = 0  # slots whose search failed (the first is said, the others in their traces)
        self._lock = threading.Lock()

    def extend(self, result: SlotResult, *, top_confidence: float,
               exclude: frozenset[str] = frozenset(), check: bool = False) -> SlotResult:
        """``result`` with its literature candidates and a "literature" trace. ``top_confidence``: the calibrated
        confidence of the user's best candidate; ``exclude``: the user's papers left out of suggestions (they do
        not count as the user's here either); ``check``: the pick is checked against the literature (the
        open-world check) whatever its confidence, and the trace says so (never a confidence it does not have)."""
        from citefinder.pipeline.doubt import doubt

        start = time.perf_counter()
        asked = self.when == "always"
        # a checked pick asks as a pick of no confidence would, and says why in its own words
        doubtful = doubt(result, top_confidence=0.0 if check else top_confidence, threshold=self.threshold,
                         band=self.band)
        if doubtful and check:
            doubtful = f"your pick ({top_confidence:.2f}) is checked against the literature's papers"
        sure = not doubtful
        why = "asked for every slot" if asked else doubtful
        params: dict[str, Any] = {"source": self.name, "when": self.when, "threshold": self.threshold,
                                  "shown": self.shown, "priors": asdict(self.priors)}
        if not asked and sure:
            trace = StageTrace("literature", "skipped", message=f"skipped: your paper is confident "
                               f"({top_confidence:.2f} >= {self.threshold:.2f})", params=params)
            return replace(result, traces=result.traces + (trace,))
        try:
            ranked = self.search.rank(result.query)
        except CitefinderError as e:  # an optional stage: the slot keeps its own result, the trace says why
            with self._lock:
                first, self._failed = self._failed == 0, self._failed + 1
            # said once a run (a fill asks for every slot; an offline source fails every one alike)
            log.log(logging.WARNING if first else logging.DEBUG, "the literature (%s) could not be searched: %s; "
                    "going on without it", self.name, e)
            trace = StageTrace("literature", "error", message=f"{self.name}: {e}", inputs={"why": why},
                               params=params, elapsed_s=time.perf_counter() - start)
            return replace(result, traces=result.traces + (trace,))
        own = self._own_papers(exclude)
        kept: list[Candidate] = []
        yours: list[str] = []
        for c in ranked.candidates[:CONSIDERED]:
            if own.holds(c.paper):
                yours.append(c.doc_id)
            else:
                kept.append(c)
        focus = result.slot.focus or result.slot.sentence if result.slot else ""
        # a named work's own papers (select/named.py): evidence of their own, found even where the ranking missed
        named_list = named_first(focus, kept, getattr(self.search, "view", None), own.holds)
        named = moved_first(named_list, kept)
        pool = [*[c for c in named_list if c.doc_id in named], *[c for c in kept if c.doc_id not in named]]
        offers, feats = self._offers(pool, ranked, own, named)
        found = tuple(replace(c, origin=self.name).with_score("literature", n, p)
                      for n, (c, p) in enumerate(offers[: self.shown], 1))
        trace = StageTrace(
            "literature", "ok",
            message=f"{len(found)} papers not in your library from {self.name}, in order of their probability"
                    + (f"; {len(yours)} of its top papers are yours already" if yours else ""),
            inputs={"why": why}, params={**params, "model": self.model.provenance, "floor": self.model.floor},
            top=tuple(Hit(c.doc_id, n, round(probability_of(c), 4)) for n, c in enumerate(found, 1)),
            elapsed_s=time.perf_counter() - start,
            details={"yours": yours, "traces": [t.to_dict() for t in ranked.traces],
                     "evidence": {c.doc_id: {k: round(v, 4) for k, v in feats[c.doc_id].items() if v}
                                  for c in found},
                     "cited": {c.doc_id: ranked.counts[c.doc_id] for c in found if c.doc_id in ranked.counts}})
        return replace(result, literature=found, traces=result.traces + (trace,))

    def _offers(self, pool: list[Candidate], ranked: Ranked, own: OwnPapers,
                named: set[str]) -> tuple[list[tuple[Candidate, float]], dict[str, dict[str, float]]]:
        """The pool's papers with their probability (:mod:`citefinder.pipeline.offers`), highest first."""
        tops = ListTops.of(ranked.traces)
        # the years say how recent the draft is only in a library of some size (priors.NEWEST_NEEDS)
        facts = DraftFacts(own.years if len(own.years) >= NEWEST_NEEDS else ())
        feats = dict(zip([c.doc_id for c in pool], with_slot_features([
            evidence(c, tops, own=own.features(c.paper), facts=facts, named=c.doc_id in named,
                     cited=ranked.counts.get(c.doc_id, 0)) for c in pool]), strict=True))
        ps = [self.model.probability(feats[c.doc_id]) for c in pool]
        return [(pool[i], ps[i]) for i in offer_order(ps)], feats

    def _own_papers(self, exclude: frozenset[str]) -> OwnPapers:
        stamp = (self.library.generation(), exclude)
        if self._own is None or self._own[0] != stamp:
            papers = [p for p in self.library.iter_papers() if p.doc_id not in exclude]
            # the paired .bib's entries are the user's too (the same work under another key is not offered)
            self._own = (stamp, OwnPapers(papers, self.library, also=self.also_yours))
        return self._own[1]


def own_paper(candidate: Candidate, key: str) -> Paper:
    """A literature candidate as a paper of the user's library (*Add to my library*): its ``key`` (in the user's
    style, :mod:`citefinder.library.keystyle`), no .bib text of its own (its entry is written from its fields:
    DOI, arXiv eprint), and where each field came from."""
    origin = candidate.origin or "literature"
    found = [f for f in ("title", "authors", "year", "venue", "abstract", "doi", "arxiv_id", "url")
             if getattr(candidate.paper, f)]
    return replace(candidate.paper, key=key, bibtex=None, source=f"literature:{origin}", position=None,
                   provenance=tuple((f, origin, candidate.doc_id) for f in found))


def literature_tier(settings: "Settings", library: "Library", spec: "str | Path | Source | None" = None, *,
                    when: When | None = None, search: LiteratureSearch | None = None) -> LiteratureTier | None:
    """The tier the settings configure (``literature``, ``literature_when``), or ``spec`` / ``search`` given;
    None when no literature is named."""
    spec = spec if spec is not None else (settings.literature or None)
    if search is None and spec is None:
        return None
    if search is None:
        assert spec is not None
        search = open_literature(spec, settings, embedder=library.embedder)
    return LiteratureTier(search, library, when=when or settings.literature_when,
                          threshold=settings.confidence_threshold)
