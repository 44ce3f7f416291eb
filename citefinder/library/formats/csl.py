"""CSL-JSON reader, as exported by Zotero ("Export Collection" -> CSL JSON) or Better BibTeX
(whose ``citation-key``/``id`` becomes :attr:`Paper.key`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import RecordError, arxiv_id_in_text, build_paper, decode_text
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

# CSL item type -> BibTeX entry type.
_ENTRY_TYPES = {
    "article-journal": "article",
    "paper-conference": "inproceedings",
    "book": "book",
    "chapter": "incollection",
    "thesis": "phdthesis",
    "report": "techreport",
}


def _author(person: Any) -> str:
    if isinstance(person, str):
        return person
    if not isinstance(person, dict):
        return ""
    if person.get("literal"):
        return str(person["literal"])
    parts = [person.get("given"), person.get("non-dropping-particle"), person.get("family"), person.get("suffix")]
    return " ".join(str(p) for p in parts if p)


def _year(issued: Any) -> Any:
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return parts[0][0]
        return issued.get("raw") or issued.get("literal")
    return issued


def _text(value: Any) -> Any:
    # Some exporters write single-valued fields as lists.
    return value[0] if isinstance(value, list) and value else value


def paper_from_csl(item: dict[str, Any], source: str) -> Paper:
    """A Paper from one CSL-JSON item."""
    arxiv = item.get("arxiv_id") or arxiv_id_in_text(str(item.get("number") or "")) or arxiv_id_in_text(
        str(_text(item.get("container-title")) or "")
    )
    csl_type = str(item.get("type") or "")
    return build_paper(
        source,
        title=_text(item.get("title")),
        authors=[_author(p) for p in item.get("author") or [] if p],
        year=_year(item.get("issued")),
        venue=_text(item.get("container-title")) or _text(item.get("event-title")),
        abstract=item.get("abstract"),
        doi=item.get("DOI") or item.get("doi"),
        arxiv_id=arxiv,
        url=item.get("URL") or item.get("url"),
        entry_type=_ENTRY_TYPES.get(csl_type, "misc" if csl_type else None),
        # Better BibTeX writes the citation key as "citation-key" and as "id"; Zotero's own export
        # writes an item URI as "id", which clean_key rejects.
        key=item.get("citation-key") or item.get("citationKey") or item.get("id"),
    )


def read_csl_json(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from a CSL-JSON file: a list of items, or an object with ``"items"``."""
    name = path.name
    try:
        data = json.loads(decode_text(path.read_bytes()))
    except json.JSONDecodeError as e:
        yield ImportFailure(f"{name}:{e.lineno}", f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
        return
    if isinstance(data, dict):
        data = data.get("items", [data] if "title" in data else None)
    if not isinstance(data, list):
        yield ImportFailure(name, "expected CSL-JSON: a list of items (or an object with an \"items\" list)")
        return
    for i, item in enumerate(data, start=1):
        where = f"{name} item {i}"
        if not isinstance(item, dict):
            yield ImportFailure(where, f"item {i} is not a JSON object")
            continue
        try:
            yield paper_from_csl(item, name)
        except RecordError as e:
            label = item.get("id") or item.get("citation-key")
            yield ImportFailure(where, f"item {i}{f' ({label})' if label else ''} {e}")
