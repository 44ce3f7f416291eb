"""The last check before a paper reaches Chroma or the pending queue: types and text Chroma accepts.

Readers already build clean papers; this guards papers built by any other code (and queued
papers from older versions), so one bad record becomes one ImportFailure instead of a failed
batch, a stopped import or a queue that never empties.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from citefinder.library.formats.common import RecordError, json_kind
from citefinder.text.textsafe import clean_text
from citefinder.types import Paper

_OPTIONAL_TEXT = ("venue", "doi", "arxiv_id", "url", "entry_type", "source", "bibtex")


def _text(name: str, value: object, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise RecordError(f"has a JSON {json_kind(value)} in field '{name}', expected text")
    return clean_text(value)


def checked_paper(paper: Paper) -> Paper:
    """``paper`` with every field of the type Chroma stores and text cleaned; RecordError otherwise."""
    doc_id = _text("doc_id", paper.doc_id, optional=False) or ""
    title = " ".join((_text("title", paper.title, optional=False) or "").split())
    if not doc_id.strip():
        raise RecordError("has no doc_id")
    if not title:
        raise RecordError("has no title")
    if not isinstance(paper.authors, (tuple, list)):
        raise RecordError(f"has a JSON {json_kind(paper.authors)} in field 'authors', expected a list of names")
    authors = tuple(_text("authors", a, optional=False) or "" for a in paper.authors)
    year = paper.year
    if year is not None and (isinstance(year, bool) or not isinstance(year, (int, float)) or year != int(year)):
        raise RecordError(f"has a JSON {json_kind(year)} in field 'year', expected a whole number")
    changes: dict[str, Any] = {
        "doc_id": doc_id,
        "title": title,
        "authors": authors,
        "year": int(year) if year is not None else None,
        "abstract": _text("abstract", paper.abstract or "", optional=False) or "",
        "position": paper.position if type(paper.position) is int else None,
    }
    changes.update({k: _text(k, getattr(paper, k), optional=True) or None for k in _OPTIONAL_TEXT})
    if all(getattr(paper, k) == v and type(getattr(paper, k)) is type(v) for k, v in changes.items()):
        return paper
    return replace(paper, **changes)
