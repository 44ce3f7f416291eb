"""The arXiv metadata snapshot: the JSON Lines file arXiv publishes (its Kaggle mirror's
``arxiv-metadata-oai-snapshot.json``), one paper a line::

    {"id": "0704.0001", "submitter": ..., "authors": "C. Bal\\'azs, E. L. Berger, ...", "title": ...,
     "comments": ..., "journal-ref": ..., "doi": ..., "report-no": ..., "categories": "hep-ph cs.LG",
     "license": ..., "abstract": ..., "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
     "update_date": "2008-11-13", "authors_parsed": [["Balázs", "C.", ""], ...]}

The year is the first version's (when it was posted), else the id's (``0704.0001`` -> 2007,
``hep-th/9901001`` -> 1999), else ``update_date``'s. Authors come from ``authors_parsed`` (last, first,
suffix), else from the ``authors`` text. ``journal-ref`` is the venue (where the preprint was published; its
page range, if it writes one, the pages) and ``doi`` the published version's DOI. An id some tools turned into a number
(``704.0001``) is read back. A record with a title but no id (a mirror's or a converted file's) is still
a paper, named by the identity rule.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import RecordError, build_paper, pages_in, parse_year, text_field
from citefinder.library.formats.lines import DumpFormat, read_dump
from citefinder.library.identity import normalize_arxiv_id
from citefinder.types import ImportFailure, Paper

_AUTHOR_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}$")
_OLD_ID = re.compile(r"^[a-z-]+/(\d{2})(\d{2})\d{3}$")


def looks_like(record: dict[str, Any]) -> bool:
    """An arXiv snapshot record: ``authors_parsed`` or ``versions`` beside ``categories``."""
    return ("authors_parsed" in record or "versions" in record) and "categories" in record


def arxiv_id(value: Any) -> str | None:
    """The record's ``id`` as a canonical arXiv id; a number (a CSV round trip's ``704.0001``) is read back:
    four digits before the point, and four after it before 2015 (``1501`` on: five)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        whole, _, frac = f"{value:.5f}".partition(".")
        whole = whole.zfill(4)
        frac = frac if whole >= "1501" else frac[:4]
        value = f"{whole}.{frac}"
    return normalize_arxiv_id(str(value))


def year_of_id(aid: str | None) -> int | None:
    """The year an arXiv id was issued in: ``0704.0001`` -> 2007, ``hep-th/9901001`` -> 1999."""
    m = _NEW_ID.match(aid or "") or _OLD_ID.match(aid or "")
    if not m:
        return None
    yy = int(m.group(1))
    return 1900 + yy if yy >= 91 else 2000 + yy


def _first_version_year(versions: Any) -> int | None:
    if not isinstance(versions, list):
        return None
    dated = [(str(v.get("version") or ""), parse_year(v.get("created"))) for v in versions if isinstance(v, dict)]
    years = [y for _, y in sorted(dated, key=lambda x: int(x[0][1:]) if x[0][1:].isdigit() else 0) if y]
    return years[0] if years else None


def _latex_name(name: str) -> str:
    """A name written with LaTeX accents (``Bal\\'azs``) in plain letters; most names have none."""
    if "\\" not in name and "{" not in name:
        return name
    from pylatexenc.latex2text import LatexNodes2Text

    try:
        return str(LatexNodes2Text(math_mode="text").latex_to_text(name))
    except Exception:  # noqa: BLE001 - pylatexenc raises assorted errors on odd input; keep the name then
        return name.replace("{", "").replace("}", "")


def authors(record: dict[str, Any]) -> list[str]:
    """"First Last Suffix" per author from ``authors_parsed``, else the ``authors`` text split at commas and
    "and"."""
    parsed = record.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for parts in parsed:
            if isinstance(parts, list):
                last, first, suffix = ([str(p or "").strip() for p in parts] + ["", "", ""])[:3]
                names.append(_latex_name(" ".join(x for x in (first, last, suffix) if x)))
        return [n for n in names if n]
    raw = text_field("authors", record.get("authors"))
    return [_latex_name(n) for n in _AUTHOR_SPLIT.split(" ".join((raw or "").split())) if n]


def topics(record: dict[str, Any]) -> tuple[str, ...]:
    """The record's categories (``"cs.CL cs.LG"`` -> ``("cs.CL", "cs.LG")``), the primary one first."""
    value = record.get("categories")
    if isinstance(value, list):
        return tuple(str(v) for v in value if v)
    return tuple(str(value or "").split())


def paper(record: dict[str, Any], source: str) -> Paper:
    """A Paper of one snapshot record (RecordError without a title)."""
    aid = arxiv_id(record.get("id"))
    if record.get("id") not in (None, "") and aid is None:
        raise RecordError(f"has an id that is not an arXiv id ({str(record.get('id'))[:40]!r})")
    year = _first_version_year(record.get("versions")) or year_of_id(aid) or parse_year(record.get("update_date"))
    return build_paper(source, title=record.get("title"), authors=authors(record), year=year,
                       venue=record.get("journal-ref"), abstract=record.get("abstract"), doi=_first_doi(record),
                       arxiv_id=aid, pages=pages_in(text_field("journal-ref", record.get("journal-ref"))))


def _first_doi(record: dict[str, Any]) -> str | None:
    """The ``doi`` field; arXiv writes several DOIs separated by spaces: the first is the paper's."""
    doi = text_field("doi", record.get("doi"))
    return doi.split()[0] if doi and doi.split() else None


FORMAT = DumpFormat("arxiv", looks_like, paper, topics)


def read_arxiv(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from an arXiv metadata snapshot file (plain or gzip), one line at a time."""
    return read_dump(path, FORMAT)
