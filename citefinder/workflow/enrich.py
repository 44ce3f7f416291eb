"""Complete the entries of a library from a source: ``library enrich --from``, the Library page's *Complete from
...* (the open library and each paired .bib's) and the Cite page's (a paired .bib, also before each fill).

One call, :func:`complete`, with one typed result, :class:`Completion`: the entries completed (each field it
gained, with the record it came from), the entries the source does not hold, and the ambiguous ones left alone
(a title two works share, or a title match without the year and author that would confirm it:
:func:`citefinder.sources.same.decide`). The work is :func:`citefinder.sources.enrich.enrich`; the user's .bib
entries are never changed. Both faces call this module and only say what it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.sources.enrich import EnrichReport, Outcome, Progress, enrich
from citefinder.types import Paper

if TYPE_CHECKING:
    from citefinder.library.store import Library
    from citefinder.sources.base import Source

_FIELD_NAMES = {"abstract": "abstract", "doi": "DOI", "arxiv": "arXiv id"}


@dataclass(frozen=True)
class FieldSource:
    """Where one completed field of a paper came from: ``field`` ("abstract", "doi", "arxiv", another id
    scheme), the ``source`` ("papers-333k", "openalex") and the record's id there."""

    field: str
    source: str
    source_id: str

    def text(self) -> str:
        return f"{_FIELD_NAMES.get(self.field, f'{self.field} id')} from {self.source}, {self.source_id}"


@dataclass(frozen=True)
class Completion:
    """What :func:`complete` did to a library (``library``: its folder) from ``source``: every entry asked
    about (``report``), grouped."""

    source: str
    library: Path
    report: EnrichReport

    @property
    def completed(self) -> list[Outcome]:
        """Entries that gained a field, each with what it gained and from which record."""
        return self.report.of("enriched")

    @property
    def not_found(self) -> list[Outcome]:
        """Entries the source does not hold (by DOI, arXiv id or title + year + first author)."""
        return self.report.of("not found")

    @property
    def ambiguous(self) -> list[Outcome]:
        """Entries left alone: the works their title could be, and why the title alone did not decide."""
        return self.report.of("ambiguous")

    @property
    def nothing_new(self) -> list[Outcome]:
        return self.report.of("nothing new")

    def summary(self) -> str:
        return self.report.summary()

    def line(self, library: "Library") -> str:
        """One line for a page: how many entries have an abstract from the source (this run's and earlier runs'),
        what this run added, what was left alone and what the source does not hold."""
        total = library.count()
        found = sum(any(f == "abstract" and src == self.source for f, src, _ in p.provenance)
                    for p in library.iter_papers())
        parts = [f"{found:,} of your {total:,} {_entries(total)} gained an abstract from {self.source}"]
        ids = sum(bool(set(o.gained) - {"abstract"}) for o in self.report.outcomes)
        if ids:
            parts.append(f"{ids:,} an identifier")
        if ambiguous := self.ambiguous:
            parts.append(f"{len(ambiguous):,} ambiguous {'title' if len(ambiguous) == 1 else 'titles'} left alone")
        if missing := self.not_found:
            parts.append(f"{len(missing):,} not found")
        return "; ".join(parts) + ". Your .bib is unchanged."


def _entries(n: int) -> str:
    return "entry" if n == 1 else "entries"


def open_from(spec: str | Path, settings: Any, library: "Library") -> "Source":
    """The source ``spec`` names (a literature library folder or an online service,
    :func:`citefinder.sources.registry.open_source`), an online one caching beside ``library``."""
    from citefinder.sources.registry import open_source

    return open_source(spec, settings.with_overrides(library=library.path))


def complete(library: "Library", source: "Source", *, progress: Progress | None = None,
             papers: Sequence[Paper] | None = None) -> Completion:
    """Complete the entries of ``library`` (or ``papers`` of it) that lack an abstract, a DOI or an arXiv id
    from ``source``; ``progress(done, total)`` as they are looked up."""
    report = enrich(library, source, progress=progress, papers=papers)
    return Completion(source.name, Path(library.path), report)


def provenance(paper: Paper) -> tuple[FieldSource, ...]:
    """Where each field enrichment added to ``paper`` came from (none for a paper all of whose fields are the
    user's); the shipped sample's mark on the whole record is not a field."""
    return tuple(FieldSource(f, src, sid) for f, src, sid in paper.provenance if f != "record")


def field_source(paper: Paper, field: str) -> FieldSource | None:
    """Where ``field`` of ``paper`` came from, or None when it is the user's own."""
    return next((s for s in provenance(paper) if s.field == field), None)
