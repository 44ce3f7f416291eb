"""Correct a stored paper by hand (a PDF's title read wrong, a missing year, a key to match the draft).

Goes through :meth:`Library.update_papers`: the paper is embedded again when its title or abstract
changed, and BM25, the dedupe keys and the agents' derived indexes are rebuilt by the store's commit.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Sequence

from citefinder.errors import LibraryError
from citefinder.library.formats.common import RecordError
from citefinder.library.store import Library
from citefinder.library.validate import checked_paper
from citefinder.types import Paper

log = logging.getLogger(__name__)

UNSET = object()  # "leave this field as it is" (None means "clear it" for year and key)


def parse_authors(text: str) -> tuple[str, ...]:
    """Authors typed one per line, or separated by ";" or " and " (BibTeX style)."""
    parts = re.split(r"\n|;|\s+and\s+", text)
    return tuple(" ".join(p.split()) for p in parts if p.strip())


def parse_year(text: str) -> int | None:
    """A year typed in a form: empty means none; anything but a whole number is refused."""
    text = text.strip()
    if not text:
        return None
    if not re.fullmatch(r"\d{1,4}", text):
        raise LibraryError(f"The year {text!r} is not a year: give four digits, or leave it empty.")
    return int(text)


def edit_paper(library: Library, doc_id: str, *, title: str | None = None, authors: Sequence[str] | None = None,
               year: int | None | object = UNSET, abstract: str | None = None,
               key: str | None | object = UNSET) -> Paper:
    """Change the given fields of the stored paper ``doc_id``; returns the paper as now stored.

    Raises LibraryError (with what to do) for an unknown paper, an empty title, a bad year or a key
    another paper already has.
    """
    found = library.get([doc_id])
    if not found:
        raise LibraryError(f"No paper {doc_id!r} in the library at {library.path}: it may have been removed. "
                           "Reload the page.")
    old = found[0]
    changes: dict[str, object] = {}
    if title is not None:
        changes["title"] = title
    if authors is not None:
        changes["authors"] = tuple(a.strip() for a in authors if a.strip())
    if abstract is not None:
        changes["abstract"] = abstract.strip()
    if year is not UNSET:
        if year is not None and (not isinstance(year, int) or isinstance(year, bool) or not 0 < year < 10000):
            raise LibraryError(f"The year {year!r} is not a year: give four digits, or leave it empty.")
        changes["year"] = year
    if key is not UNSET:
        new_key = str(key).strip() if key else None
        if new_key and any(c.isspace() or c in ',{}"%#' for c in new_key):
            raise LibraryError(f"The key {new_key!r} cannot be a BibTeX key: no spaces or , {{ }} \" % #.")
        if new_key:
            other = library.by_key(new_key)
            if other is not None and other.doc_id != doc_id:
                raise LibraryError(f"The key {new_key!r} is already the key of “{other.title}”: choose another.")
        changes["key"] = new_key
    try:
        new = checked_paper(replace(old, **changes))  # type: ignore[arg-type]
    except RecordError as e:
        raise LibraryError(f"The paper cannot be saved: it {e}.") from e
    if new == old:
        return old
    log.info("editing %s: %s", doc_id, ", ".join(sorted(changes)))
    library.update_papers([new])
    return library.get([doc_id])[0]
