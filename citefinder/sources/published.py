"""The published version of each .bib entry cited as a preprint, from a source (a literature library folder, an
online service, DBLP): asked by the entry's arXiv id, DOI and title, every answer that is a published version
(:func:`citefinder.library.published.published_of`) of the same work
(:func:`citefinder.library.published.same_published_work`) kept; none: nothing is said.

Of several published versions of one work (a conference paper and its journal extension under the same title),
the earliest is the one the preprint became; of one year, the record with the most of pages, DOI and volume.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citefinder.library.identity import first_author_surname, normalize_arxiv_id, normalize_doi, normalize_title
from citefinder.library.published import Published, preprint_form, published_of, same_published_work
from citefinder.sources.base import Lookup, Source
from citefinder.types import Paper

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PublishedVersion:
    """An entry (``key``) cited as a preprint (``form``: how), and its published version."""

    key: str
    title: str
    form: str
    published: Published

    def line(self) -> str:
        return (f"{self.key} is cited as a preprint ({self.form}); it was published: {self.published.line()} "
                f"(from {self.published.source})")

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "title": self.title, "form": self.form, "published": self.published.to_dict()}


def preprints(entries: Sequence[Paper]) -> list[tuple[Paper, str]]:
    """The entries cited as a preprint, each with how."""
    return [(e, form) for e in entries if (form := preprint_form(e)) is not None]


def _lookups(entry: Paper) -> list[Lookup]:
    asks = []
    if arxiv := normalize_arxiv_id(entry.arxiv_id):
        asks.append(Lookup("arxiv", arxiv))
    if (doi := normalize_doi(entry.doi)) and not doi.startswith("10.48550/"):
        asks.append(Lookup("doi", doi))
    if normalize_title(entry.title):
        asks.append(Lookup("title", entry.title, entry.year, first_author_surname(entry)))
    return asks


def best(entry: Paper, records: Sequence[tuple[Paper, str, str]]) -> Published | None:
    """The published version of ``entry`` among ``records`` (paper, source, source id), or None."""
    found = []
    for paper, source, source_id in records:
        if paper.doc_id == entry.doc_id and paper.key == entry.key and paper.bibtex == entry.bibtex:
            continue  # the entry itself
        if not same_published_work(entry, paper):
            continue
        if (version := published_of(paper, source=source, source_id=source_id)) is not None:
            found.append(version)
    if not found:
        return None
    return min(found, key=lambda v: (v.year or 9999, -sum(bool(x) for x in (v.pages, v.doi, v.volume))))


def find_published(source: Source, entries: Sequence[Paper], *, batch: int = 50,
                   progress: Progress | None = None) -> list[PublishedVersion]:
    """Each entry of ``entries`` cited as a preprint whose published version ``source`` holds, in entry order."""
    wanted = preprints(entries)
    asks = [(i, q) for i, (e, _) in enumerate(wanted) for q in _lookups(e)]
    answers: dict[int, list[tuple[Paper, str, str]]] = {}
    for start in range(0, len(asks), batch):
        chunk = asks[start:start + batch]
        for (i, _), records in zip(chunk, source.lookup([q for _, q in chunk]), strict=True):
            answers.setdefault(i, []).extend((r.paper, r.source, r.source_id) for r in records)
        if progress is not None:
            progress(min(start + batch, len(asks)), len(asks))
    out = []
    for i, (entry, form) in enumerate(wanted):
        if (version := best(entry, answers.get(i, []))) is not None:
            out.append(PublishedVersion(entry.key or entry.doc_id, entry.title, form, version))
    return out
