"""Your entries, completed: the abstract and identifiers a source holds of each paper of the library that lacks
them, stored in the library record with where they came from.

For each paper without an abstract, a DOI or an arXiv id, the same work is found in the source by
:func:`citefinder.sources.same.find_same` (DOI, then arXiv id, then title + year + first author through the
one identity rule). What the paper lacks is taken from it: the abstract into :attr:`Paper.abstract`, the DOI
and arXiv id (and the source's own ids) into :attr:`Paper.ids`, each with a ``(field, source, id)`` line of
:attr:`Paper.provenance`. The user's own fields are never replaced, and :attr:`Paper.bibtex` (the user's .bib
entry, which exports write byte for byte) and the fields an export writes for other papers (``doi``,
``arxiv_id``) are never touched. A title two works could be, or a title match without the year and author that
confirm it (or with a generic title), is left alone and listed. A paper the source
gave nothing new (already enriched, or the source has no more of it) is not written, so a second run
changes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from citefinder.library.identity import first_author_surname, normalize_arxiv_id, normalize_doi
from citefinder.sources.base import Source, SourceRecord
from citefinder.sources.same import find_same
from citefinder.types import Paper

if TYPE_CHECKING:
    from citefinder.library.store import Library

log = logging.getLogger(__name__)

Status = Literal["enriched", "nothing new", "ambiguous", "not found"]
Progress = Callable[[int, int], None]
WRITE_BATCH = 500  # papers written (and their abstracts embedded) per library commit


@dataclass(frozen=True)
class Outcome:
    """What enrichment did for one paper: ``gained`` the fields it got ("abstract", "doi", "arxiv", other id
    schemes), from ``source_id`` found by ``via``; for an ambiguous title, the works it could be."""

    doc_id: str
    label: str  # the citation key, else the title
    status: Status
    gained: tuple[str, ...] = ()
    source_id: str | None = None
    via: str | None = None
    candidates: tuple[str, ...] = ()  # "source_id: title (year, first author)" of each work an ambiguous title names
    why: str = ""  # why an ambiguous title was left alone

    def line(self) -> str:
        if self.status == "enriched":
            return f"{self.label}: gained {', '.join(self.gained)} from {self.source_id} (by {self.via})"
        if self.status == "ambiguous":
            why = f" [{self.why}]" if self.why else ""
            return f"{self.label}: ambiguous, left alone: {'; '.join(self.candidates)}{why}"
        if self.status == "nothing new":
            return f"{self.label}: nothing new in {self.source_id}"
        return f"{self.label}: not found"


@dataclass(frozen=True)
class EnrichReport:
    """Every paper asked about, and what it gained. ``embedded``: papers whose vectors were computed again
    (their abstract is new)."""

    source: str
    library_papers: int
    outcomes: tuple[Outcome, ...] = ()
    embedded: int = 0
    elapsed_s: float = 0.0

    def gained(self, what: str) -> int:
        return sum(what in o.gained for o in self.outcomes)

    def of(self, status: Status) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    def summary(self) -> str:
        ids = sum(bool(set(o.gained) - {"abstract"}) for o in self.outcomes)
        return (f"{self.source}: {len(self.outcomes)} of {self.library_papers} papers lacked an abstract or an id; "
                f"{self.gained('abstract')} gained an abstract, {self.gained('doi')} a DOI, {self.gained('arxiv')} "
                f"an arXiv id ({ids} gained an id); {len(self.of('nothing new'))} found with nothing new, "
                f"{len(self.of('ambiguous'))} ambiguous (left alone), {len(self.of('not found'))} not found; "
                f"{self.elapsed_s:.1f} s")


def lacks(paper: Paper) -> tuple[str, ...]:
    """What enrichment can add to ``paper``: "abstract", "doi", "arxiv" (none when it has them all)."""
    have = {scheme for scheme, _ in paper.ids}
    out = []
    if not paper.abstract.strip():
        out.append("abstract")
    if not normalize_doi(paper.doi) and "doi" not in have:
        out.append("doi")
    if not normalize_arxiv_id(paper.arxiv_id) and "arxiv" not in have:
        out.append("arxiv")
    return tuple(out)


def completed(paper: Paper, record: SourceRecord) -> tuple[Paper, tuple[str, ...]]:
    """``paper`` with what ``record`` (the same work) adds to it, and the names of what was added. Only what the
    paper lacks is taken; its own fields and its .bib entry are kept."""
    other = record.paper
    want = set(lacks(paper))
    have = {scheme for scheme, _ in paper.ids}
    gained: list[str] = []
    abstract = paper.abstract
    if "abstract" in want and other.abstract.strip():
        abstract = other.abstract
        gained.append("abstract")
    ids = list(paper.ids)
    found = [("doi", normalize_doi(other.doi)), ("arxiv", normalize_arxiv_id(other.arxiv_id))]
    for scheme, value in found:
        if value and scheme in want:
            ids.append((scheme, value))
            gained.append(scheme)
    for scheme, value in other.ids:  # the source's own ids (openalex, s2, ...)
        if scheme not in have and scheme not in {s for s, _ in ids}:
            ids.append((scheme, value))
            gained.append(scheme)
    if not gained:
        return paper, ()
    marks = tuple((f, record.source, record.source_id) for f in gained)
    kept = tuple(p for p in paper.provenance if p[0] not in gained)
    return replace(paper, abstract=abstract, ids=tuple(ids), provenance=kept + marks), tuple(gained)


def enrich(library: "Library", source: Source, *, progress: Progress | None = None,
           papers: Sequence[Paper] | None = None) -> EnrichReport:
    """Complete the library's papers (or ``papers`` of it) from ``source``; see the module docstring.
    ``progress(done, total)`` as the papers are looked up."""
    t0 = time.perf_counter()
    every = list(papers) if papers is not None else list(library.iter_papers())
    asked = [p for p in every if lacks(p)]
    matches = find_same(source, asked, progress=progress)
    outcomes: list[Outcome] = []
    changed: list[Paper] = []
    for paper, match in zip(asked, matches, strict=True):
        label = paper.key or paper.title[:80]
        if match.ambiguous:
            outcomes.append(Outcome(paper.doc_id, label, "ambiguous",
                                    candidates=tuple(_described(r) for r in match.ambiguous), why=match.why))
        elif match.found is None:
            outcomes.append(Outcome(paper.doc_id, label, "not found"))
        else:
            new, gained = completed(paper, match.found)
            status: Status = "enriched" if gained else "nothing new"
            outcomes.append(Outcome(paper.doc_id, label, status, gained, match.found.source_id, match.via))
            if gained:
                changed.append(new)
    embedded = 0
    for start in range(0, len(changed), WRITE_BATCH):
        embedded += library.update_papers(changed[start:start + WRITE_BATCH])
    report = EnrichReport(source.name, len(every), tuple(outcomes), embedded, time.perf_counter() - t0)
    log.info("%s", report.summary())
    return report


def _described(record: SourceRecord) -> str:
    p = record.paper
    who = first_author_surname(p) or "no author"
    return f"{record.source_id}: {p.title[:80]} ({p.year or 'no year'}, {who})"


_NAMES = {"abstract": "abstract", "doi": "DOI", "arxiv": "arXiv id"}


def provenance_text(paper: Paper) -> str:
    """Where the fields enrichment added came from, one part per record: "abstract, arXiv id from papers-333k,
    arxiv:1706.03762"; "" for a paper all of whose fields are the user's."""
    by_record: dict[tuple[str, str], list[str]] = {}
    for name, source, source_id in paper.provenance:
        if name == "record":  # a mark on the whole record (the shipped sample's), not a field found
            continue
        by_record.setdefault((source, source_id), []).append(_NAMES.get(name, f"{name} id"))
    return "; ".join(f"{', '.join(fields)} from {source}, {source_id}" for (source, source_id), fields in
                     by_record.items())
