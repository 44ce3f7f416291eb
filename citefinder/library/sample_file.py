"""Which stored papers are the sample library's, and how one becomes the user's when the user's own file brings
the work again (what the importer reads; :mod:`citefinder.library.sample` holds the rest of the rule).

The shipped file decides, never a name: a file whose bytes are the shipped ``assets/sample-library.bib`` gives
papers marked as the sample's (:data:`MARK` in :attr:`Paper.provenance`, stored with each paper); a user's own
file of that name (a copy of the sample they extend) gives papers of theirs. Libraries made before the mark
existed get it once (:func:`old_sample`): the papers of that file name whose entry text is, byte for byte, an
entry of the shipped file.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from pathlib import Path

from citefinder.library import bibentry
from citefinder.library.identity import first_author_surname
from citefinder.types import Paper

SAMPLE_FILE = "sample-library.bib"
SAMPLE_ASSET = Path(__file__).resolve().parents[2] / "assets" / SAMPLE_FILE
# (field, source, id): the whole record is the shipped sample's, not the user's
MARK = ("record", "citefinder-sample", SAMPLE_FILE)
MARKED = "sample_marked"  # the manifest's note that this library's sample papers carry MARK


def is_sample(paper: Paper) -> bool:
    """Whether ``paper`` is the sample library's (imported from the shipped file's bytes)."""
    return any((field, source) == MARK[:2] for field, source, _ in paper.provenance)


def shipped_sample(path: Path) -> bool:
    """Whether the file at ``path`` is the shipped sample library, byte for byte (whatever its name)."""
    try:
        return path.stat().st_size == SAMPLE_ASSET.stat().st_size and _digest(path) == _asset_digest()
    except OSError:
        return False


def as_sample(paper: Paper) -> Paper:
    """``paper`` marked as the sample's (under the sample's file name, where the app lists it)."""
    return dataclasses.replace(paper, source=SAMPLE_FILE, provenance=(*_unmarked(paper), MARK))


def old_sample(paper: Paper) -> bool:
    """A sample paper stored before the mark existed: imported from a file of the sample's name, its entry
    text one of the shipped file's (the name alone once decided)."""
    return (not is_sample(paper) and paper.source == SAMPLE_FILE and bool(paper.bibtex)
            and paper.bibtex in _shipped_entries())


def sample_over(stored: Paper, duplicate: Paper) -> bool:
    """A sample paper that the user's own file brings again, under any key (the same key included): it becomes
    the user's (issue 29; :mod:`citefinder.library.sample`)."""
    return is_sample(stored) and not is_sample(duplicate)


def owned(stored: Paper, duplicate: Paper) -> Paper:
    """``stored`` adopting ``duplicate``'s key and entry (:func:`bibentry.adopted`: the user's .bib entry wins)
    and the fields it lacks (:func:`filled`); a sample paper also stops being one, even when the duplicate
    brings no entry text (a JSONL record)."""
    if not sample_over(stored, duplicate):
        return filled(bibentry.adopted(stored, duplicate), duplicate)
    # the sample's entry is nobody's: any entry the user's record brings replaces it
    mine = bibentry.adopted(dataclasses.replace(stored, source=None), duplicate)
    return filled(dataclasses.replace(mine, source=mine.source or duplicate.source or "imported",
                                      provenance=_unmarked(mine)), duplicate)


def filled(stored: Paper, other: Paper) -> Paper:
    """``stored`` with what ``other`` (the same work, read later) knows and it lacks: the author list when
    ``other`` names more authors beginning with the same one, the abstract, DOI, arXiv id, year, venue and URL
    when it has none. Retrieval then no longer depends on which file was imported first; the entry text
    (:attr:`Paper.bibtex`) is left to :func:`bibentry.adopted`."""
    changes: dict[str, object] = {}
    if len(other.authors) > len(stored.authors) and (
            not stored.authors or first_author_surname(stored) == first_author_surname(other)):
        changes["authors"] = other.authors
    if not stored.abstract and other.abstract:
        changes["abstract"] = other.abstract
    for name in ("doi", "arxiv_id", "year", "venue", "url"):
        if getattr(stored, name) in (None, "") and getattr(other, name) not in (None, ""):
            changes[name] = getattr(other, name)
    extra = tuple(i for i in other.ids if i not in stored.ids)
    if extra:
        changes["ids"] = stored.ids + extra
    return dataclasses.replace(stored, **changes) if changes else stored  # type: ignore[arg-type]


def _unmarked(paper: Paper) -> tuple[tuple[str, str, str], ...]:
    return tuple(p for p in paper.provenance if tuple(p[:2]) != MARK[:2])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.cache
def _asset_digest() -> str:
    return _digest(SAMPLE_ASSET)


@functools.cache
def _shipped_entries() -> frozenset[str]:
    """The shipped file's entry texts as the importer stores them."""
    from citefinder.library.formats.bib import read_bib

    try:
        return frozenset(p.bibtex for p in read_bib(SAMPLE_ASSET) if isinstance(p, Paper) and p.bibtex)
    except OSError:
        return frozenset()
