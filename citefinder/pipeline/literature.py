"""The literature tier: papers you don't have yet, offered beside your own for a slot, never filled in.

A slot's candidates come from the user's library first. When the user asks for every slot (``when="always"``),
or when nothing of theirs is confident (``"unsure"``: the selector filled nothing, or its pick's calibrated
confidence is below ``confidence_threshold``), the slot's query also goes to the literature:

- a **literature library folder** (a library built from the public dumps, e.g. papers-333k): the same engine —
  the retrieval agents of :data:`LITERATURE_AGENTS`, the tuned fusion, the calibrated confidence — runs over
  the folder opened in place without writing (:class:`~citefinder.library.readonly.ReadOnlyLibrary`);
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
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from citefinder.errors import CitefinderError
from citefinder.library.identity import Identity, dedupe_keys, identity, same_work
from citefinder.types import Candidate, Hit, Paper, Query, SlotResult, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.embedder import Embedder
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.rank.fuse import Fusion
    from citefinder.sources.base import Source, SourceRecord

log = logging.getLogger(__name__)

When = Literal["unsure", "always"]
WHEN: tuple[When, ...] = ("unsure", "always")
# The agents that read a literature library: the user's own keys and citation memory are not the literature's.
LITERATURE_AGENTS = ("bm25", "dense", "title", "names", "names-weak", "authors", "near", "context", "draft")
# The literature's own dense first pass (index/static.py): asked of every literature library, skipped without them.
STATIC_AGENTS = ("static", "static-context", "static-draft")
SHOWN = 10  # literature papers offered per slot
SOURCE_K = 30  # records asked of an online source per slot
SOURCE_WEIGHT = 0.3  # the source's own order in the fusion (untuned: no online source was measured)


@dataclass(frozen=True)
class Ranked:
    """One slot's literature: candidates best first, each one's calibrated confidence, the stages' traces."""

    candidates: tuple[Candidate, ...]
    confidences: Mapping[str, float]
    traces: tuple[StageTrace, ...]


class LiteratureSearch(Protocol):
    """What ranks a slot's query in one literature source; ``name`` marks its papers (``Candidate.origin``)."""

    name: str

    def rank(self, query: Query) -> Ranked: ...


def literature_settings(settings: "Settings") -> "Settings":
    """The settings the engine runs with over the literature: its agents (those the settings name that read a
    literature library, else :data:`LITERATURE_AGENTS`), no LLM, no sample papers, no second paper."""
    from citefinder.retrieve.registry import agent_names

    agents = tuple(a for a in agent_names(settings) if a in LITERATURE_AGENTS) or LITERATURE_AGENTS
    agents += tuple(a for a in STATIC_AGENTS if a not in agents)
    return settings.model_copy(update={"agents": agents, "suggest_sample": True, "llm_model": None,
                                       "llm_rewrite": False, "second_paper": False, "reranker": None})


def literature_fusion(settings: "Settings") -> "Fusion":
    """The fusion over a literature library: the weights tuned for it (``citefinder/data/literature.json``, on
    training slots only) over the slot fusion's, when the settings ask for the learned fusion."""
    import json
    from importlib import resources

    from citefinder.rank.fuse import fusion_of

    fusion = fusion_of(settings)
    if settings.fusion != "learned":
        return fusion
    data = json.loads(resources.files("citefinder.data").joinpath("literature.json").read_text(encoding="utf-8"))
    tuned = data.get("fusion") or {}
    if not tuned:
        return fusion
    return replace(fusion, k=int(tuned.get("k", fusion.k)), weights={**fusion.weights, **tuned["weights"]},
                   provenance=str(tuned.get("provenance", "")))


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
        return _ranked(self.pipeline, query, self.view.count())


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
        self.embedder = embedder
        self.k = k

    def rank(self, query: Query) -> Ranked:
        from citefinder.library.pool import PaperPool
        from citefinder.pipeline.pipeline import Pipeline
        from citefinder.rank.fuse import fusion_of
        from citefinder.retrieve.registry import make_agents

        start = time.perf_counter()
        records = self.source.search(query.window or query.text, self.k)
        t_source = StageTrace(agent=f"{self.name} search", inputs={"text": query.window or query.text},
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
        return replace(ranked, traces=(t_source,) + ranked.traces)


def open_literature(spec: "str | Path | Source", settings: "Settings", *,
                    embedder: "Embedder | None" = None) -> LiteratureSearch:
    """The literature ``spec`` names: a Source object, a literature library folder, or an online source's name
    (:func:`citefinder.sources.registry.open_source`)."""
    from citefinder.library.readonly import is_library_folder

    if not isinstance(spec, (str, Path)):
        return SourceLiterature(settings, spec, embedder=embedder)
    folder = Path(str(spec).strip()).expanduser()
    if is_library_folder(folder) or folder.is_dir():  # a folder that is no library says so (ReadOnlyLibrary.open)
        return LibraryLiterature(settings, folder, embedder=embedder)
    from citefinder.sources.registry import open_source

    return SourceLiterature(settings, open_source(spec, settings), embedder=embedder)


@dataclass(frozen=True)
class Priors:
    """How the user's library tilts the literature's order (tuned on training slots only:
    ``citefinder/data/literature.json``). A paper's score is ``1 / (rank + k)`` (its rank in the literature's
    fused order) times ``1 + authors * shared`` (``shared``: its authors' surnames the user's papers also have,
    at most 3) times ``1 + topic * t`` (``t`` in 0..1: how well its title matches the user's closest paper by
    BM25, against the best of the slot's candidates) times ``newer`` when it is more than ``slack`` years newer
    than the user's newest paper (once the user has :data:`NEWEST_NEEDS` dated papers). The defaults leave the
    literature's own order."""

    k: float = 1.0
    authors: float = 0.0
    topic: float = 0.0
    newer: float = 1.0
    slack: int = 1
    provenance: str = ""

    @classmethod
    def shipped(cls) -> "Priors":
        import json
        from importlib import resources

        data = json.loads(resources.files("citefinder.data").joinpath("literature.json").read_text(encoding="utf-8"))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in (data.get("priors") or {}).items() if k in known})

    @property
    def neutral(self) -> bool:
        return not self.authors and not self.topic and self.newer == 1.0


def prior_order(candidates: Sequence[Any], feats: Sequence[Mapping[str, float]],
                priors: Priors) -> list[int]:
    """The candidates' indexes in the order the priors give them (ties: the literature's own order)."""
    best_topic = max((f["topic"] for f in feats), default=0.0) or 1.0

    def score(i: int) -> float:
        f = feats[i]
        value = 1.0 / (i + 1 + priors.k) * (1 + priors.authors * f["shared"])
        value *= 1 + priors.topic * f["topic"] / best_topic
        return value * (priors.newer if f["newer"] > priors.slack else 1.0)

    return sorted(range(len(candidates)), key=lambda i: (-score(i), i))


NEWEST_NEEDS = 10  # dated papers of the user's before "newer than all of yours" counts (see _Own)


class _Own:
    """The user's papers by identity (a literature paper that is one of them is not offered as new), and what
    the priors read of them: their authors' surnames, the newest year, their BM25 index."""

    def __init__(self, papers: Sequence[Paper], library: Any = None) -> None:
        from citefinder.library.identity import surname

        self.ids = {p.doc_id for p in papers}
        self.keys: dict[str, list[Identity]] = {}
        for p in papers:
            for k in dedupe_keys(p):
                self.keys.setdefault(k, []).append(identity(p))
        self.surnames = {surname(a) for p in papers for a in p.authors} - {""}
        years = [p.year for p in papers if p.year]
        # the newest year says how recent the draft is only in a library of some size: a new user's few papers
        # do not (drafts-dev's libraries, where the prior was tuned, hold 34 to hundreds of dated entries)
        self.newest = max(years) if len(years) >= NEWEST_NEEDS else None
        self.library = library

    def features(self, paper: Paper) -> dict[str, float]:
        """What the priors read of a literature paper (see :class:`Priors`)."""
        from citefinder.library.identity import surname

        shared = min(3, sum(1 for a in paper.authors if surname(a) in self.surnames))
        newer = (paper.year - self.newest) if paper.year and self.newest else 0
        topic = 0.0
        if self.library is not None and paper.title:
            hits = [h for h in self.library.bm25_search(paper.title, 5) if h.doc_id in self.ids]
            topic = hits[0].score if hits else 0.0
        return {"shared": float(shared), "newer": float(newer), "topic": float(topic)}

    def holds(self, paper: Paper) -> bool:
        if paper.doc_id in self.ids:
            return True
        who = identity(paper)
        return any(same_work(k, i, who) for k in dedupe_keys(paper) for i in self.keys.get(k, ()))


class LiteratureTier:
    """Adds a slot's literature candidates to its result (see the module docstring).

    ``library``: the user's library (what is "yours"); ``threshold``: the confidence under which a slot asks in
    ``"unsure"`` mode; ``shown``: literature papers kept per slot."""

    def __init__(self, search: LiteratureSearch, library: "Library", *, when: When = "unsure",
                 threshold: float = 0.55, shown: int = SHOWN, priors: Priors | None = None) -> None:
        if when not in WHEN:
            raise ValueError(f"when must be one of {', '.join(WHEN)}, not {when!r}")
        self.search = search
        self.name = search.name
        self.library = library
        self.when = when
        self.threshold = threshold
        self.shown = shown
        self.priors = priors if priors is not None else Priors.shipped()
        self._own: tuple[tuple[str, frozenset[str]], _Own] | None = None

    def extend(self, result: SlotResult, *, top_confidence: float,
               exclude: frozenset[str] = frozenset()) -> SlotResult:
        """``result`` with its literature candidates and a "literature" trace. ``top_confidence``: the calibrated
        confidence of the user's best candidate; ``exclude``: the user's papers left out of suggestions (they do
        not count as the user's here either)."""
        start = time.perf_counter()
        asked = self.when == "always"
        sure = result.selection.status == "found" and top_confidence >= self.threshold
        why = ("asked for every slot" if asked else
               f"your best paper's confidence {top_confidence:.2f} is below {self.threshold:.2f}" if not sure
               else "")
        params: dict[str, Any] = {"source": self.name, "when": self.when, "threshold": self.threshold,
                                  "shown": self.shown, "priors": asdict(self.priors)}
        if not asked and sure:
            trace = StageTrace("literature", "skipped", message=f"skipped: your paper is confident "
                               f"({top_confidence:.2f} >= {self.threshold:.2f})", params=params)
            return replace(result, traces=result.traces + (trace,))
        try:
            ranked = self.search.rank(result.query)
        except CitefinderError as e:  # an optional stage: the slot keeps its own result, the trace says why
            log.warning("the literature (%s) could not be searched: %s", self.name, e)
            trace = StageTrace("literature", "error", message=f"{self.name}: {e}", inputs={"why": why},
                               params=params, elapsed_s=time.perf_counter() - start)
            return replace(result, traces=result.traces + (trace,))
        own = self._own_papers(exclude)
        kept: list[Candidate] = []
        yours: list[str] = []
        for c in ranked.candidates:
            if own.holds(c.paper):
                yours.append(c.doc_id)
            else:
                kept.append(c)
        if not self.priors.neutral:
            feats = [own.features(c.paper) for c in kept]
            kept = [kept[i] for i in prior_order(kept, feats, self.priors)]
        kept = kept[: self.shown]
        found = tuple(replace(c, origin=self.name).with_score("literature", n, ranked.confidences.get(c.doc_id, 0.0))
                      for n, c in enumerate(kept, 1))
        trace = StageTrace(
            "literature", "ok",
            message=f"{len(found)} papers not in your library from {self.name}"
                    + (f"; {len(yours)} of its top papers are yours already" if yours else ""),
            inputs={"why": why}, params=params,
            top=tuple(Hit(c.doc_id, n, round(ranked.confidences.get(c.doc_id, 0.0), 4))
                      for n, c in enumerate(found, 1)),
            elapsed_s=time.perf_counter() - start,
            details={"yours": yours, "traces": [t.to_dict() for t in ranked.traces]})
        return replace(result, literature=found, traces=result.traces + (trace,))

    def _own_papers(self, exclude: frozenset[str]) -> _Own:
        stamp = (self.library.generation(), exclude)
        if self._own is None or self._own[0] != stamp:
            self._own = (stamp, _Own([p for p in self.library.iter_papers() if p.doc_id not in exclude], self.library))
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
