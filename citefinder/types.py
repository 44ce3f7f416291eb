"""Typed records passed between stages.

Every record is a frozen dataclass: a stage takes records and returns new ones, it never
mutates its input. Each record has ``to_dict()`` so traces and results serialise to JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

StageStatus = Literal["ok", "skipped", "fallback", "error"]
SelectionStatus = Literal["found", "not_found"]


@dataclass(frozen=True)
class Paper:
    """One paper in the library. ``doc_id`` is stable: ``arxiv:<id>``, ``doi:<doi>`` or ``t:<hash>``."""

    doc_id: str
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    abstract: str = ""
    doi: str | None = None
    arxiv_id: str | None = None
    url: str | None = None
    entry_type: str | None = None  # BibTeX type when it came from a .bib ("article", "inproceedings", ...)
    source: str | None = None  # the file it was imported from
    # The user's citation key: the BibTeX entry key, CSL-JSON ``citation-key``/``id`` (Better BibTeX),
    # or JSONL ``key``. None when the source gave none; exports then generate one (citefinder.library.bibtex).
    key: str | None = None
    # The entry as the user's .bib has it, byte for byte (with the @string definitions it uses before it and
    # its crossref parent after it), so exports write the user's own text (citefinder.library.bibentry);
    # a complete entry made from the source record for CSL-JSON. None for papers stored before CiteFinder
    # kept it, and for other sources: exports then write complete BibTeX from the fields above.
    bibtex: str | None = None
    position: int | None = None  # 0-based place of the entry in its source file (exports in file order)
    # Other identifiers a source knows the work by, as (scheme, id): ("openalex", "W2741809807"), ("s2", "...").
    ids: tuple[tuple[str, str], ...] = ()
    # Where a field not written by the user came from, as (field, source, id in that source): an abstract found
    # by ``library enrich`` is ("abstract", "papers-333k", "arxiv:1706.03762"). The user's .bib text never changes.
    provenance: tuple[tuple[str, str, str], ...] = ()
    # How often the literature cites the work, as the source that gave it counted (OpenAlex ``cited_by_count``,
    # Semantic Scholar ``citationcount``); None when the source said nothing. The literature tier's prior reads it.
    cited_by: int | None = None
    # Where in its venue the work is: its pages ("1735--1780") and volume, as the source gave them (a dump's
    # record, an online source's); None when it said nothing. A preprint's published version reads them.
    pages: str | None = None
    volume: str | None = None

    @property
    def link(self) -> str | None:
        """A URL a reader can open: the given URL, else DOI, else arXiv."""
        if self.url:
            return self.url
        if self.doi:
            return f"https://doi.org/{self.doi}"
        if self.arxiv_id:
            return f"https://arxiv.org/abs/{self.arxiv_id}"
        return None

    def to_dict(self) -> dict[str, Any]:
        # its fields are plain values and tuples of strings: read directly (dataclasses.asdict deep-copies each
        # one, a fifth of a BM25-first import's CPU time)
        d = {name: getattr(self, name) for name in self.__dataclass_fields__}
        d["authors"] = list(self.authors)
        d["ids"] = [list(x) for x in self.ids]
        d["provenance"] = [list(x) for x in self.provenance]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Paper":
        known = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in known}
        kw["authors"] = tuple(kw.get("authors") or ())
        kw["ids"] = tuple(tuple(x) for x in kw.get("ids") or ())
        kw["provenance"] = tuple(tuple(x) for x in kw.get("provenance") or ())
        return cls(**kw)

    def source_of(self, name: str) -> tuple[str, str] | None:
        """(source, id) a field was found in by enrichment, or None when it is the user's own."""
        return next(((src, sid) for f, src, sid in self.provenance if f == name), None)


@dataclass(frozen=True)
class Slot:
    """A citation slot found in a text: where it is and the context around it."""

    index: int  # 0-based order in the text
    start: int  # character span of the marker in the original text
    end: int
    marker: str  # the marker text as it appeared, e.g. "[CITATION]"
    sentence: str  # the sentence holding the slot, markers shown as [CITATION]
    context: str  # sentence plus neighbours, the slot as [CITATION], other markers removed
    # the sentence with this slot as [CITATION] and every other marker group as [OTHER]: which part is this slot's
    focus: str = ""
    heading: str = ""  # the nearest section heading above the slot ("" when none)
    window: str = ""  # the sentence with one neighbour on each side, this slot as [CITATION], other markers removed
    # The LaTeX cite command the draft wrote for this slot (``\\citep``, ``\\autocite*``), "" for a plain
    # marker such as [CITATION]. Slots of one command with several placeholders (``\\citep{?, ?}``)
    # share ``start``/``end``/``marker`` and are filled together, in index order.
    command: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AuthorMention:
    """An author named in the text next to a slot: "Vaswani et al. (2017)" -> ("Vaswani", 2017)."""

    surname: str
    year: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Query:
    """What the reformulator hands the retrieval agents; each agent reads the parts it wants."""

    text: str  # cleaned context used for retrieval (the slot's sentence, plus neighbours if configured)
    keywords: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()  # extra queries (e.g. an LLM rewrite); each is retrieved and fused
    local: str = ""  # the slot's own part of its sentence (between its neighbouring markers); "" = all of it
    names: tuple[str, ...] = ()  # names written next to the marker (acronyms, model names), nearest first
    authors: tuple[AuthorMention, ...] = ()  # author mentions next to the marker, nearest first
    draft: str = ""  # the draft's own title/abstract and the slot's section heading, when a whole draft is cited
    near: str = ""  # the few words right next to the marker (before it, or after it when it is the subject)
    window: str = ""  # the slot's sentence with one neighbour on each side (cleaned)
    # library papers the draft cites near the slot (filled \cite keys next to it, confident picks of the
    # slots before it): the seeds of the co-cited agent
    cocited: tuple[str, ...] = ()

    @property
    def focus(self) -> str:
        """The text the lexical agents (bm25, title) search: the slot's own part of its sentence when the sentence
        holds other markers ("... adaptive moment estimation [CITATION], regularized by randomly dropping units
        [OTHER], ..."), else the context. The other markers' words name other papers: on drafts-dev's training part,
        among the 377 slots sharing their sentence, the fused list's first paper was right for 154 with the slot's
        part alone, 147 with it written twice before the sentence (bench/probes/local_weight.py at bc9259c)."""
        if self.local and self.local != self.text:
            return self.local
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "keywords": list(self.keywords),
            "variants": list(self.variants),
            "local": self.local,
            "names": list(self.names),
            "authors": [a.to_dict() for a in self.authors],
            "draft": self.draft,
            "near": self.near,
            "window": self.window,
            "cocited": list(self.cocited),
        }


@dataclass(frozen=True)
class Hit:
    """One retriever's answer for one document: 1-based rank and the retriever's own score."""

    doc_id: str
    rank: int
    score: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StageScore:
    """A candidate's rank and score in one stage (retriever, fusion, rerank)."""

    stage: str
    rank: int
    score: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Candidate:
    """A paper on its way through the pipeline; scores accumulate per stage, never overwrite.

    ``origin``: "" for a paper of the user's library; else the literature source it was found in (a literature
    library, an online service): a paper *not in your library*, shown beside the slot and never selected
    (:mod:`citefinder.pipeline.literature`)."""

    paper: Paper
    scores: tuple[StageScore, ...] = ()
    origin: str = ""

    @property
    def doc_id(self) -> str:
        return self.paper.doc_id

    @property
    def in_library(self) -> bool:
        """Is the paper one of the user's own (not found in the literature beside the library)?"""
        return not self.origin

    def stage(self, name: str) -> StageScore | None:
        for s in self.scores:
            if s.stage == name:
                return s
        return None

    def with_score(self, stage: str, rank: int, score: float) -> "Candidate":
        kept = tuple(s for s in self.scores if s.stage != stage)
        return replace(self, scores=kept + (StageScore(stage, rank, float(score)),))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"paper": self.paper.to_dict(), "scores": [s.to_dict() for s in self.scores]}
        if self.origin:
            out.update(origin=self.origin, in_library=False)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Candidate":
        scores = tuple(StageScore(str(s["stage"]), int(s["rank"]), float(s["score"])) for s in d.get("scores") or ())
        return cls(Paper.from_dict(d["paper"]), scores, str(d.get("origin") or ""))


@dataclass(frozen=True)
class StageTrace:
    """What one agent did: inputs, parameters, its top-k with scores, time taken, and what went wrong."""

    agent: str
    status: StageStatus = "ok"
    # "retriever" for a retrieval agent (its ``top`` is a ranked list that fusion reads), else "stage"
    kind: str = "stage"
    message: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    top: tuple[Hit, ...] = ()
    elapsed_s: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "kind": self.kind,
            "status": self.status,
            "message": self.message,
            "inputs": dict(self.inputs),
            "params": dict(self.params),
            "top": [h.to_dict() for h in self.top],
            "elapsed_s": round(self.elapsed_s, 4),
            "details": dict(self.details),
        }


@dataclass(frozen=True)
class Selection:
    """The selector's verdict for a slot. ``paper`` is always a library paper, or None when not found."""

    status: SelectionStatus
    paper: Paper | None = None
    confidence: float = 0.0
    method: str = ""  # "llm", "rerank-threshold", "manual"
    reasoning: str = ""
    # further papers the slot cites with ``paper`` (``\\cite{a,b}``), when the engine proposes several
    also: tuple[Paper, ...] = ()

    @property
    def papers(self) -> tuple[Paper, ...]:
        """Every paper selected for the slot, in cite order."""
        return ((self.paper,) + self.also) if self.paper is not None else ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "paper": self.paper.to_dict() if self.paper else None,
            "also": [p.to_dict() for p in self.also],
            "confidence": round(self.confidence, 4),
            "method": self.method,
            "reasoning": self.reasoning,
        }


@dataclass(frozen=True)
class SlotResult:
    """Everything the pipeline produced for one slot (or one search question)."""

    slot: Slot | None
    query: Query
    candidates: tuple[Candidate, ...]  # final order (after rerank)
    selection: Selection
    traces: tuple[StageTrace, ...]
    # papers not in the user's library that the literature beside it offers for the slot (``Candidate.origin``
    # set), best first; never selected: the user adds one (citefinder.pipeline.literature)
    literature: tuple[Candidate, ...] = ()

    def trace(self, agent: str) -> StageTrace | None:
        for t in self.traces:
            if t.agent == agent:
                return t
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot.to_dict() if self.slot else None,
            "query": self.query.to_dict(),
            "candidates": [c.to_dict() for c in self.candidates],
            "selection": self.selection.to_dict(),
            "traces": [t.to_dict() for t in self.traces],
            **({"literature": [c.to_dict() for c in self.literature]} if self.literature else {}),
        }


@dataclass(frozen=True)
class ImportFailure:
    """A record or file that could not be imported, and why."""

    source: str
    reason: str


@dataclass(frozen=True)
class ImportReport:
    """Summary of one import: what was added, skipped as duplicate, and what failed with reasons."""

    added: int = 0
    duplicates: int = 0
    failures: tuple[ImportFailure, ...] = ()
    added_ids: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    updated: tuple[str, ...] = ()  # stored papers this import changed (their keys): not skipped duplicates

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": list(self.updated),
            "duplicates": self.duplicates,
            "failures": [asdict(f) for f in self.failures],
            "elapsed_s": round(self.elapsed_s, 3),
        }
