"""An import the user can check: each skipped duplicate with the stored paper it matched, and the
papers made from PDFs (their title and authors are read from the first page, so worth a look).

Wraps :meth:`Library.import_files` (the store's dedupe rule decides): the records read are remembered,
and afterwards every record that was not stored is matched with :meth:`Library.match`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from citefinder.library.formats.common import RecordError
from citefinder.library.store import Library, Progress
from citefinder.library.validate import checked_paper
from citefinder.types import ImportReport, Paper

MAX_LISTED = 1000  # duplicates listed per import (the count in the report is always complete)


@dataclass(frozen=True)
class Duplicate:
    """A record the import skipped, and the stored paper it duplicates."""

    source: str  # the file the record came from
    title: str  # the skipped record's title
    matched_id: str
    matched_title: str
    matched_key: str | None = None


@dataclass(frozen=True)
class ImportReview:
    report: ImportReport
    duplicates: tuple[Duplicate, ...] = ()
    pdf_papers: tuple[Paper, ...] = ()  # stored papers made from PDFs, as stored
    more_duplicates: int = 0  # duplicates not listed (over MAX_LISTED)


def import_reviewed(library: Library, paths: Sequence[Path | str], *, progress: Progress | None = None,
                    max_listed: int = MAX_LISTED) -> ImportReview:
    """Import ``paths`` like :meth:`Library.import_files`; also say what each duplicate matched.

    Raises what :meth:`Library.import_files` raises (an ``ImportAbortedError`` carries its report).
    """
    seen: list[Paper] = []
    report = library.import_files(paths, progress=progress, on_read=seen.append)
    return review(library, report, seen, max_listed=max_listed)


def review(library: Library, report: ImportReport, seen: Sequence[Paper], *,
           max_listed: int = MAX_LISTED) -> ImportReview:
    """Match the records of ``seen`` that ``report`` did not add to the stored papers they duplicate."""
    added = set(report.added_ids)
    claimed: set[str] = set()
    skipped: list[tuple[Paper, str]] = []
    for paper in seen:
        if paper.doc_id in added and paper.doc_id not in claimed:
            claimed.add(paper.doc_id)  # the record that was stored (a later one with the same id is a duplicate)
            continue
        try:
            checked = checked_paper(paper)
        except RecordError:
            continue  # a failure, listed in the report's failures
        match = library.match(checked)
        if match is not None:
            skipped.append((checked, match))
    listed = skipped[:max_listed]
    stored = {p.doc_id: p for p in library.get(list(dict.fromkeys([m for _, m in listed] + list(report.added_ids))))}
    duplicates = tuple(
        Duplicate(source=p.source or "", title=p.title, matched_id=m,
                  matched_title=stored[m].title if m in stored else "",
                  matched_key=stored[m].key if m in stored else None)
        for p, m in listed)
    pdfs = tuple(stored[i] for i in report.added_ids
                 if i in stored and (stored[i].source or "").lower().endswith(".pdf"))
    return ImportReview(report, duplicates, pdfs, more_duplicates=len(skipped) - len(listed))
