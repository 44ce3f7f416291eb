"""PDF reading (pypdf): opening with clear errors, page text, and a best-effort Paper from page 1.

Metadata in paper PDFs is unreliable, so the title is taken from ``/Title`` only when it looks
like a title, else from the largest text near the top of page 1.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from citefinder.errors import InputError
from citefinder.library.formats.common import RecordError, arxiv_id_in_text, build_paper, clean_space
from citefinder.text.pdf import open_pdf, short_error
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

ABSTRACT_MAX_CHARS = 2000

_DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>\]\[]+)")
# "Abstract" alone on its line, or followed by punctuation ("Abstract.", "Abstract—"), or in capitals;
# not "Abstract Syntax Notation" running text.
_ABSTRACT_HEAD = re.compile(
    r"(?m)^[ \t]*(?:(?i:abstract|a[ \t]b[ \t]s[ \t]t[ \t]r[ \t]a[ \t]c[ \t]t)"
    r"(?:[ \t]*[.:\u2014\u2013-][ \t]*|[ \t]*$\n?)|ABSTRACT[ \t]+)"
)
_ABSTRACT_END = re.compile(
    r"(?im)^[ \t]*(?:(?:1|I)\.?[ \t]+)?introduction\b|^[ \t]*(?:keywords|key[ \t]?words|index[ \t]terms)\b|\n[ \t]*\n"
)
_JUNK_TITLE = re.compile(
    r"^(?:untitled|title|microsoft word\b|document\d*$)|\.(?:pdf|docx?|tex|dvi|ps|rtf)$|^[\w.-]*[_\d][\w.-]*$",
    re.IGNORECASE,
)
_NOT_NAME = re.compile(
    r"@|\b(?:univ\w*|institut\w*|department|dept|laborator\w*|lab|inc|ltd|corp\w*|college|school|"
    r"faculty|research|center|centre|academy|abstract|arxiv|preprint|proceedings|conference)\b",
    re.IGNORECASE,
)
_NAME_MARKS = re.compile(r"[\d*\u2020\u2021\u00a7\u00b6\u2217]+")
_NAME_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*")



@dataclass
class _Line:
    text: str
    size: float
    y: float


def _mult(m: list[float], n: list[float]) -> list[float]:
    """Product of two PDF matrices [a b c d e f]."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return [a * a2 + b * c2, a * b2 + b * d2, c * a2 + d * c2, c * b2 + d * d2,
            e * a2 + f * c2 + e2, e * b2 + f * d2 + f2]


def _layout_lines(page: Any) -> tuple[str, list[_Line]]:
    """Page text and its lines with their effective font size, in content order."""
    lines: list[_Line] = []

    def visit(text: str, cm: Any, tm: Any, font_dict: Any, font_size: Any) -> None:
        if not text:
            return
        try:
            m = _mult([float(v) for v in tm], [float(v) for v in cm])
            size, y = float(font_size) * math.hypot(m[2], m[3]), m[5]
        except (TypeError, ValueError):
            size, y = 0.0, 0.0
        parts = text.split("\n")
        for i, part in enumerate(parts):
            new_line = i > 0 or not lines or (part.strip() and abs(lines[-1].y - y) > 1.5 and lines[-1].text.strip())
            if new_line:
                lines.append(_Line(part, size, y))
            else:
                lines[-1].text += part
                if part.strip():
                    lines[-1].size = max(lines[-1].size, size)
                    lines[-1].y = y

    text = page.extract_text(visitor_text=visit) or ""
    return text, [_Line(clean_space(ln.text), ln.size, ln.y) for ln in lines if ln.text.strip()]


def _sensible_title(title: Any) -> str | None:
    t = clean_space(title)
    if len(t) < 8 or len(t.split()) < 2 or _JUNK_TITLE.search(t) or not re.search(r"[A-Za-z]{3}", t):
        return None
    return t


def _is_heading_or_stamp(text: str) -> bool:
    return bool(re.match(r"(?i)^(?:arxiv:|preprint|under review|published|proceedings|abstract\b)", text)) or (
        len(re.findall(r"[A-Za-z]", text)) < 4
    )


def _join_lines(parts: list[str]) -> str:
    out = ""
    for p in parts:
        out = out + p if out.endswith("-") or not out else f"{out} {p}"
    return out


def _title_and_authors(lines: list[_Line]) -> tuple[str | None, list[str]]:
    """Largest text among the first lines (before "Abstract") and the name-like lines below it."""
    head: list[_Line] = []
    for ln in lines[:25]:
        if re.match(r"(?i)^abstract\b", ln.text):
            break
        head.append(ln)
    candidates = [i for i, ln in enumerate(head) if not _is_heading_or_stamp(ln.text)]
    if not candidates:
        return None, []
    biggest = max(head[i].size for i in candidates)
    start = next(i for i in candidates if head[i].size >= biggest - 0.5)
    end = start
    sizes = sorted(ln.size for ln in lines)
    if biggest > sizes[len(sizes) // 2] + 0.5:  # a title set larger than the body may span lines
        while end + 1 < len(head) and abs(head[end + 1].size - biggest) <= 0.5 and end - start < 3:
            end += 1
    title = _join_lines([ln.text for ln in head[start : end + 1]])
    authors: list[str] = []
    for ln in head[end + 1 : end + 5]:
        if _NOT_NAME.search(ln.text):
            continue
        for raw in _NAME_SPLIT.split(_NAME_MARKS.sub(" ", ln.text)):
            name = clean_space(raw)
            words = name.split()
            if 2 <= len(words) <= 5 and all(w[0].isupper() or w.islower() and len(w) <= 3 for w in words):
                authors.append(name)
    return title, authors[:30]


def _abstract(text: str) -> str:
    head = _ABSTRACT_HEAD.search(text)
    if not head:
        return ""
    body = text[head.end() :]
    end = _ABSTRACT_END.search(body)
    body = body[: end.start()] if end else body
    # Join lines, undoing hyphenation at line ends ("retrie-\nval" -> "retrieval").
    body = re.sub(r"(?<=[a-z])-\n(?=[a-z])", "", body)
    body = clean_space(body)
    if len(body) > ABSTRACT_MAX_CHARS:
        body = body[:ABSTRACT_MAX_CHARS].rsplit(" ", 1)[0]
    return body


def paper_from_pdf(data: bytes, name: str) -> Paper:
    """A best-effort Paper from the first page of a paper PDF.

    Raises InputError for an unreadable PDF and RecordError when no title can be found.
    """
    reader = open_pdf(data, name)
    try:
        text, lines = _layout_lines(reader.pages[0])
    except Exception as e:  # a page pypdf cannot interpret
        raise InputError(f"{name}: could not extract text from page 1 ({short_error(e)}).") from e
    if not text.strip():
        raise InputError(f"{name} has no text layer on page 1 (scanned?); run OCR on it first.")
    try:
        meta_title = reader.metadata.title if reader.metadata else None
    except Exception:  # broken /Info dictionaries are common and harmless
        meta_title = None
    layout_title, authors = _title_and_authors(lines)
    title = _sensible_title(meta_title) or layout_title
    doi = _DOI_IN_TEXT.search(text)
    arxiv = arxiv_id_in_text(text)
    year = 2000 + int(arxiv[:2]) if arxiv and re.match(r"\d{4}\.", arxiv) else None
    return build_paper(
        name,
        title=title,
        authors=authors,
        year=year,
        abstract=_abstract(text),
        doi=doi.group(1).rstrip(".,;)") if doi else None,
        arxiv_id=arxiv,
    )


def read_pdf(path: Path) -> Iterator[Paper | ImportFailure]:
    """One Paper from a paper PDF, or one ImportFailure naming the file and the reason."""
    try:
        yield paper_from_pdf(path.read_bytes(), path.name)
    except InputError as e:
        yield ImportFailure(path.name, str(e))
    except RecordError as e:
        yield ImportFailure(path.name, f"{path.name}: no title found on page 1 ({e})")
