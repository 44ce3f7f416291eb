"""Helpers shared by the format readers: decoding unknown text encodings and building a Paper."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from citefinder.library.identity import arxiv_id_from_doi, make_doc_id, normalize_arxiv_id, normalize_doi
from citefinder.text.textsafe import clean_text
from citefinder.types import Paper

log = logging.getLogger(__name__)

_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d|21\d\d)(?!\d)")
_ARXIV_IN_TEXT = re.compile(
    r"arxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+preprint\s+(?:arxiv\s*:\s*)?)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)",
    re.IGNORECASE,
)
_NOT_AUTHORS = {"others", "et al.", "et al", "and others"}
_ET_AL_END = re.compile(r"[\s,](?:et\.?\s*al\.?|and\s+others)$", re.IGNORECASE)
# What LaTeX/BibTeX accept inside \cite{...}: no space, comma, brace, double quote, hash, percent, tilde or
# backslash (an apostrophe is fine: o'neil2016weapons).
_KEY = re.compile(r"^[^\s,{}()\"#%=~\\]+$")


# What BibTeX reads as an entry's key, and \cite takes: no space, comma, brace, double quote, hash, percent or
# backslash. A URL is one (``https://doi.org/10.48550/arxiv.2106.07704``): a key a .bib defines is kept as it is.
_BIB_KEY = re.compile(r"^[^\s,{}\"#%\\]+$")


def bib_key(value: Any) -> str | None:
    """``value`` as the key of a .bib entry: every key BibTeX reads and LaTeX cites, URLs included, else None."""
    key = value.strip() if isinstance(value, str) else ""
    return key if key and _BIB_KEY.match(key) else None


def clean_key(value: Any) -> str | None:
    """``value`` as a citation key LaTeX can cite, else None (URLs such as Zotero's item ids are not keys;
    DBLP's ``DBLP:journals/corr/abs-1904-10509`` is one, slashes and all)."""
    if not isinstance(value, str):
        return None
    key = value.strip()
    if not key or "://" in key or not _KEY.match(key):
        return None
    return key


def _cut_short(names: Iterable[str]) -> tuple[str, ...]:
    """The names of an author list; "et al." / "others" after them joins the last name ("Xiao Liu et al.", as
    :func:`citefinder.library.identity.surname` reads it), so the list is still known to be cut short when it is
    written as BibTeX (``and others``)."""
    out: list[str] = []
    for name in names:
        if not name:
            continue
        if name.lower() not in _NOT_AUTHORS:
            out.append(name)
        elif out and not _ET_AL_END.search(out[-1]):
            out[-1] = f"{out[-1]} et al."
    return tuple(out)


class RecordError(ValueError):
    """A record that cannot become a Paper; the message is the reason shown to the user."""



def json_kind(value: Any) -> str:
    """How JSON names the type of ``value`` ("object", "list", "number", ...), for messages."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else type(value).__name__


def text_field(name: str, value: Any) -> str | None:
    """A field that must be text: strings are cleaned (see :func:`citefinder.text.textsafe.clean_text`),
    numbers written out, a list of texts gives its first; anything else is a RecordError."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if not value:
            return None
        value = value[0]
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise RecordError(f"has a JSON {json_kind(value)} in field '{name}', expected text")


def names_field(name: str, value: Any) -> list[str]:
    """A list of person names: a list (of texts) or one text; anything else is a RecordError."""
    if value is None:
        return []
    if isinstance(value, str):
        return [clean_text(value)]
    if not isinstance(value, (list, tuple)):
        raise RecordError(f"has a JSON {json_kind(value)} in field '{name}', expected a list of names")
    return [clean_text(v) if isinstance(v, str) else str(v) for v in value
            if isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))]


def clean_space(text: Any) -> str:
    """``text`` as a string with runs of whitespace collapsed to one space."""
    if text is None:
        return ""
    return " ".join(str(text).split())


def parse_year(value: Any) -> int | None:
    """The first plausible year in ``value`` (``2019``, ``"2019-06-01"``, ``"June 2019"``), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value) if 1500 <= value <= 2199 else None
    m = _YEAR.search(str(value))
    return int(m.group(1)) if m else None


def citation_count(*values: Any) -> int | None:
    """The first of ``values`` that is a citation count (a whole number >= 0, or its digits as text: OpenAlex's
    ``cited_by_count``, Semantic Scholar's ``citationcount``), else None (a missing or malformed count is not 0)."""
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and value >= 0:
            return value
    return None


_PAGES = re.compile(r"(?<![\d.])(\d{1,6})\s*(?:-{1,2}|\u2013)\s*(\d{1,6})(?![\d.])")


def pages_in(text: str | None) -> str | None:
    """A page range written in ``text`` (an arXiv ``journal-ref``: "Neural Comput. 9(8):1735-1780, 1997" ->
    "1735--1780"), else None; a span of years is not one."""
    for m in _PAGES.finditer(text or ""):
        first, last = int(m.group(1)), int(m.group(2))
        if first < last and not (1900 <= first <= 2100 and 1900 <= last <= 2100):
            return f"{first}--{last}"
    return None


def arxiv_id_in_text(text: str | None) -> str | None:
    """An arXiv id written as ``arXiv:1706.03762``, ``arXiv preprint arXiv:...`` or an arxiv.org URL."""
    m = _ARXIV_IN_TEXT.search(text or "")
    return normalize_arxiv_id(m.group(1)) if m else None


def build_paper(
    source: str,
    *,
    title: Any,
    authors: Any = (),
    year: Any = None,
    venue: Any = None,
    abstract: Any = None,
    doi: Any = None,
    arxiv_id: Any = None,
    url: Any = None,
    entry_type: Any = None,
    doc_id: Any = None,
    key: Any = None,
    pages: Any = None,
    volume: Any = None,
) -> Paper:
    """A validated Paper from loosely typed fields; raises RecordError when there is no title or a
    field holds the wrong kind of value (an object where text belongs).

    DOIs and arXiv ids are normalised (an arXiv DOI or arxiv.org URL also gives the arXiv id);
    ``doc_id`` is kept when given, else made by :func:`make_doc_id`. ``key`` (the user's citation
    key) is kept when LaTeX can cite it (:func:`clean_key`), else dropped with a debug note.
    """
    title = clean_space(text_field("title", title))
    if not title:
        raise RecordError("has no title")
    names = _cut_short(clean_space(a) for a in names_field("author", authors) if a)
    venue, abstract = text_field("venue", venue), text_field("abstract", abstract)
    doi, url, arxiv_id = text_field("doi", doi), text_field("url", url), text_field("arxiv_id", arxiv_id)
    entry_type, doc_id = text_field("entry_type", entry_type), text_field("doc_id", doc_id)
    if isinstance(year, (dict, list, tuple)):
        year = None
    norm_doi = normalize_doi(doi) if doi else None
    if doi and not norm_doi:
        log.debug("%s: ignoring malformed DOI %r", source, doi)
    url = clean_space(url) or None
    norm_arxiv = ((normalize_arxiv_id(arxiv_id) if arxiv_id else None) or arxiv_id_from_doi(norm_doi)
                  or arxiv_id_in_text(url))
    paper = Paper(
        doc_id="",
        title=title,
        authors=names,
        year=parse_year(year),
        venue=clean_space(venue) or None,
        abstract=clean_space(abstract),
        doi=norm_doi,
        arxiv_id=norm_arxiv,
        url=url,
        entry_type=(clean_space(entry_type) or None),
        source=source,
        key=clean_key(key),
        pages=clean_space(text_field("pages", pages)) or None,
        volume=clean_space(text_field("volume", volume)) or None,
    )
    if key and paper.key is None:
        log.debug("%s: ignoring citation key %r (not citable in LaTeX)", source, key)
    given = clean_space(doc_id)
    return replace(paper, doc_id=given or make_doc_id(paper))
