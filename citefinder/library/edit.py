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


def _stored(library: Library, doc_id: str) -> Paper:
    found = library.get([doc_id])
    if not found:
        raise LibraryError(f"No paper {doc_id!r} in the library at {library.path}: it may have been removed. "
                           "Reload the page.")
    return found[0]


def edit_paper(library: Library, doc_id: str, *, title: str | None = None, authors: Sequence[str] | None = None,
               year: int | None | object = UNSET, abstract: str | None = None,
               key: str | None | object = UNSET, venue: str | None | object = UNSET,
               doi: str | None | object = UNSET, url: str | None | object = UNSET) -> Paper:
    """Change the given fields of the stored paper ``doc_id``; returns the paper as now stored. A paper with
    its own .bib entry (:attr:`Paper.bibtex`) gets the same change in that entry, the rest of it untouched.

    Raises LibraryError (with what to do) for an unknown paper, an empty title, a bad year or a key
    another paper already has.
    """
    old = _stored(library, doc_id)
    changes: dict[str, object] = {}
    for name, value in (("venue", venue), ("doi", doi), ("url", url)):
        if value is not UNSET:
            changes[name] = " ".join(str(value).split()) or None if value is not None else None
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
        changes["key"] = new_key
    _check_key(library, doc_id, changes.get("key"))
    try:
        new = checked_paper(replace(old, **changes))  # type: ignore[arg-type]
    except RecordError as e:
        raise LibraryError(f"The paper cannot be saved: it {e}.") from e
    if new == old:
        return old
    if new.abstract != old.abstract:  # the user's own abstract now, not the one enrichment found
        new = replace(new, provenance=tuple(p for p in new.provenance if p[0] != "abstract"))
    new = replace(new, bibtex=entry_with(old, new))
    log.info("editing %s: %s", doc_id, ", ".join(sorted(changes)))
    library.update_papers([new])
    return library.get([doc_id])[0]


FIELD_NAMES = (("title", "title"), ("authors", "authors"), ("year", "year"), ("key", "citation key"),
               ("venue", "venue"), ("doi", "DOI"), ("url", "URL"), ("abstract", "abstract"))


def changed_fields(old: Paper, new: Paper) -> list[str]:
    """What an edit changed, in words ("URL added", "year changed", "DOI removed"), in the form's order."""
    out = []
    for name, label in FIELD_NAMES:
        a, b = getattr(old, name), getattr(new, name)
        if a != b:
            out.append(f"{label} {'added' if not a else 'removed' if not b else 'changed'}")
    if not out and old.bibtex != new.bibtex:
        out.append("BibTeX entry changed")
    return out


def _check_key(library: Library, doc_id: str, key: object) -> None:
    if isinstance(key, str) and key:
        other = library.by_key(key)
        if other is not None and other.doc_id != doc_id:
            raise LibraryError(f"The key {key!r} is already the key of “{other.title}”: choose another.")


_VENUE_FIELDS = ("journal", "booktitle", "howpublished", "institution", "school", "publisher")


def entry_with(old: Paper, new: Paper) -> str | None:
    """``old``'s own .bib entry with the fields that differ in ``new`` written in (escaped for BibTeX), the
    rest of the text as it was; None when ``old`` has no entry of its own."""
    from citefinder.library import bibentry
    from citefinder.library.bibnames import author_field
    from citefinder.library.bibtext import escape_latex, latex_text

    if not old.bibtex:
        return None
    parts = bibentry.parts(old.bibtex)
    entry = parts.entry
    values: dict[str, str | None] = {}
    if new.title != old.title:
        values["title"] = latex_text(new.title)  # math and braces typed are kept (issue 51)
    if new.authors != old.authors:
        values["author"] = author_field(new.authors) or None  # organisations braced, "et al." as "and others"
    if new.year != old.year:
        values["year"] = str(new.year) if new.year else None
    if new.doi != old.doi:
        values["doi"] = new.doi
    if new.url != old.url:
        values["url"] = new.url
    if new.abstract != old.abstract and ("abstract" in bibentry.field_spans(entry) or new.abstract):
        values["abstract"] = escape_latex(new.abstract) or None
    if new.venue != old.venue:
        spans = bibentry.field_spans(entry)
        name = next((f for f in _VENUE_FIELDS if f in spans),
                    "booktitle" if bibentry.entry_type(entry) in ("inproceedings", "incollection") else "journal")
        values[name] = escape_latex(new.venue) if new.venue else None
    entry = bibentry.set_fields(entry, values)
    if new.key and new.key != old.key:
        entry = bibentry.with_key(entry, new.key)
    return bibentry.stored_text(parts.strings, entry, parts.parents)


def edit_bibtex(library: Library, doc_id: str, text: str) -> Paper:
    """Replace the stored paper's BibTeX entry with ``text`` (every field the entry has can be edited this way):
    the paper's title, authors, year, venue, DOI, key ... are read from it as an import would; the abstract is
    kept unless the entry gives one. Returns the paper as now stored."""
    import tempfile
    from pathlib import Path

    from citefinder.library.formats.bib import read_bib

    old = _stored(library, doc_id)
    with tempfile.TemporaryDirectory(prefix="citefinder-edit-") as tmp:
        path = Path(tmp) / "entry.bib"
        path.write_text(text, encoding="utf-8")
        items = list(read_bib(path))
    papers = [p for p in items if isinstance(p, Paper)]
    if len(papers) != 1:
        problems = "; ".join(f.reason for f in items if not isinstance(f, Paper))
        raise LibraryError("The BibTeX text must hold exactly one entry"
                           + (f" ({len(papers)} found)" if papers else f": {problems or 'none found'}") + ".")
    read = papers[0]
    _check_key(library, doc_id, read.key)
    new = replace(read, doc_id=old.doc_id, abstract=read.abstract or old.abstract, source=old.source,
                  position=old.position)
    try:
        new = checked_paper(new)
    except RecordError as e:
        raise LibraryError(f"The paper cannot be saved: it {e}.") from e
    log.info("editing the BibTeX entry of %s", doc_id)
    library.update_papers([new])
    return library.get([doc_id])[0]
