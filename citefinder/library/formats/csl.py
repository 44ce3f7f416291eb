"""CSL-JSON reader, as exported by Zotero ("Export Collection" -> CSL JSON) or Better BibTeX
(whose ``citation-key``/``id`` becomes :attr:`Paper.key`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import RecordError, arxiv_id_in_text, build_paper, names_field
from citefinder.text.decode import decode_text
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


def _people(value: Any) -> list[str]:
    if isinstance(value, dict):
        value = [value]
    return [_author(p) for p in _name_items(value) if p]


def _name_items(value: Any) -> list[Any]:
    """The items of a CSL name list; a number or other non-list is a RecordError."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        names_field("author", value)  # raises RecordError naming the type
    return list(value)


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


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# CSL fields a BibTeX entry keeps beside the Paper's own (CSL name -> BibTeX name).
_EXTRA = {"page": "pages", "volume": "volume", "issue": "number", "publisher": "publisher",
          "publisher-place": "address", "ISBN": "isbn", "ISSN": "issn", "edition": "edition"}


def paper_from_csl(item: dict[str, Any], source: str) -> Paper:
    """A Paper from one CSL-JSON item, with a complete BibTeX entry of the item (pages, volume, issue,
    publisher... kept: :func:`citefinder.library.bibtex.record_entry`) as its own text."""
    from dataclasses import replace

    from citefinder.library.bibtex import escape_latex, record_entry

    paper = _paper(item, source)
    extra = {bib: _text(item.get(csl)) for csl, bib in _EXTRA.items() if item.get(csl) not in (None, "")}
    people = item.get("author")
    written = [_bib_name(p, escape_latex) for p in people] if isinstance(people, list) else []
    if written and all(written) and len(written) == len(paper.authors):
        extra["author"] = " and ".join(written)
    return replace(paper, bibtex=record_entry(paper, extra))


def _bib_name(person: Any, escape: Any) -> str:
    """A CSL name as BibTeX reads it without guessing: "von Last, Jr, First", an organisation braced."""
    if not isinstance(person, dict):
        return ""
    if person.get("literal"):
        return "{" + escape(str(person["literal"])) + "}"
    family = " ".join(str(p) for p in (person.get("non-dropping-particle"), person.get("family")) if p)
    parts = [family, str(person.get("suffix") or ""), str(person.get("given") or "")]
    return ", ".join(escape(p) for p in parts if p) if family else ""


def _paper(item: dict[str, Any], source: str) -> Paper:
    arxiv = _str(item.get("arxiv_id")) or arxiv_id_in_text(str(item.get("number") or "")) or arxiv_id_in_text(
        str(_text(item.get("container-title")) or "")
    )
    csl_type = str(item.get("type") or "")
    return build_paper(
        source,
        title=_text(item.get("title")),
        authors=_people(item.get("author")),
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
    """Papers from a CSL-JSON file: a list of items, or an object with ``"items"``.

    A broken or absurdly nested item in a list is reported with its number and line, and the
    items after it are still read.
    """
    name = path.name
    text = decode_text(path.read_bytes()).lstrip("\ufeff")
    try:
        data = json.loads(text)
    except RecursionError:
        if not text.lstrip().startswith("["):
            yield ImportFailure(name, "the JSON is nested too deeply to be CSL-JSON")
            return
        # too deep somewhere: read the list item by item so one bad item does not lose the others
        yield from _items_one_by_one(text, name)
        return
    except json.JSONDecodeError as e:
        yield ImportFailure(f"{name}:{e.lineno}", f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
        return
    if isinstance(data, dict):
        data = data.get("items", [data] if "title" in data else None)
    if not isinstance(data, list):
        yield ImportFailure(name, "expected CSL-JSON: a list of items (or an object with an \"items\" list)")
        return
    for i, item in enumerate(data, start=1):
        yield _item(item, i, f"{name} item {i}", name)


def _item(item: Any, i: int, where: str, name: str) -> Paper | ImportFailure:
    if not isinstance(item, dict):
        return ImportFailure(where, f"item {i} is not a JSON object")
    try:
        return paper_from_csl(item, name)
    except RecordError as e:
        label = item.get("id") or item.get("citation-key")
        label = label if isinstance(label, (str, int)) else None
        return ImportFailure(where, f"item {i}{f' ({label})' if label else ''} {e}")


def _items_one_by_one(text: str, name: str) -> Iterator[Paper | ImportFailure]:
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    i = 0
    while True:
        pos = _skip_space(text, pos)
        if pos >= len(text):
            yield ImportFailure(name, f"the list of items is not closed (file ends after item {i})")
            return
        if text[pos] == "]":
            return
        i += 1
        line = text.count("\n", 0, pos) + 1
        where = f"{name} item {i} (line {line})"
        end: int | None
        try:
            item, end = decoder.raw_decode(text, pos)
            yield _item(item, i, where, name)
        except (RecursionError, json.JSONDecodeError) as e:
            end = _value_end(text, pos)
            reason = "is nested too deeply to be a paper record" if isinstance(e, RecursionError) else (
                f"is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
            yield ImportFailure(where, f"item {i} {reason}")
            if end is None:
                yield ImportFailure(name, f"could not find where item {i} ends; the items after it were not read")
                return
        pos = _skip_space(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _value_end(text: str, pos: int) -> int | None:
    """Index just after the JSON value starting at ``pos`` (brackets and strings matched, no recursion)."""
    depth, in_string, escaped = 0, False, False
    for j in range(pos, len(text)):
        c = text[j]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth <= 0:
                return j + 1
        elif depth == 0 and c == ",":
            return j
    return None
