"""Context records: one citing sentence and the paper it cites, read from a context pack (JSONL).

The pack schema (README, "Context packs"): ``{"id", "text" (the sentence, this citation written
[CITATION], others [OTHER]), "prev", "next", "cited": {"title", "year", "authors", "doc_id", "doi",
"arxiv_id"}, "citing": {"paper", "title", "year"}, "group", "source", "license", "split"}``; only
``text`` and ``cited.title`` are required. A bad line becomes an :class:`ImportFailure` naming its
line; the other lines are still read. Field filters (``split=train``, ``source!=aan``,
``citing.paper=github:x/y``) keep a measurement honest.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.library.identity import dedupe_keys, normalize_title, surname
from citefinder.text.decode import decode_text
from citefinder.types import ImportFailure, Paper

ORIGINS = ("pack", "latex", "user")
MAX_TEXT_CHARS = 5000  # one sentence (and its marker); a longer "sentence" is a page, not a context
_MARKERS = re.compile(r"\[(?:CITATION|OTHER|MATH)\]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class ContextRecord:
    """One (citing sentence, cited paper) pair. ``origin``: a pack, the user's LaTeX, or the user's pick."""

    text: str
    title: str
    year: int | None = None
    authors: tuple[str, ...] = ()
    doc_id: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    prev: str | None = None
    next: str | None = None
    citing: str = ""
    citing_title: str | None = None
    citing_year: int | None = None
    group: str | None = None
    source: str | None = None
    license: str | None = None
    split: str | None = None
    origin: str = "pack"
    pack_id: str | None = None  # the record's own "id" in its pack
    abstract: str | None = None  # the cited paper's abstract where the source gives one (a .bib entry's)

    @property
    def rid(self) -> str:
        """What makes a record the same record again (a re-import adds nothing): its sentence, the cited
        work (title and its DOI, arXiv id, or year and first author: two works of one title stay two) and the
        citing paper, normalised."""
        return record_id(self.text, self.title, self.citing, self.year, self.first_author, self.doi, self.arxiv_id)

    def cited_paper(self) -> Paper:
        return Paper(self.doc_id or "", self.title, self.authors, self.year, doi=self.doi, arxiv_id=self.arxiv_id)

    def match_keys(self) -> tuple[str, ...]:
        """The identity keys (:func:`citefinder.library.identity.dedupe_keys`) the cited paper can be
        matched by, strongest first; ``id:<doc_id>`` after DOI and arXiv id."""
        keys = [k for k in dedupe_keys(replace(self.cited_paper(), title="")) if not k.startswith("title:")]
        if self.doc_id:
            keys.append(f"id:{self.doc_id}")
        if title := _title_key(self.title):
            keys.append(f"title:{title}")
        return tuple(keys)

    @property
    def first_author(self) -> str | None:
        return _surname(self.authors[0]) or None if self.authors else None


# Titles and names repeat across a pack (86k records cite 26k titles): normalised once each.
_title_key = lru_cache(maxsize=1 << 16)(normalize_title)
_surname = lru_cache(maxsize=1 << 16)(surname)


RID_VERSION = "2"  # 1: sentence | title | citing; 2: the cited work's identity too


def record_id(text: str, title: str, citing: str, year: int | None, first_author: str | None, doi: str | None,
              arxiv_id: str | None) -> str:
    """:attr:`ContextRecord.rid` from a record's fields (the memory recomputes stored ids with it)."""
    work = (f"doi:{doi.casefold()}" if doi else f"arxiv:{arxiv_id.casefold()}" if arxiv_id
            else f"{year or ''}:{(first_author or '').casefold()}")
    basis = f"{_SPACES.sub(' ', text.casefold()).strip()}|{_title_key(title)}|{work}|{citing}"
    return hashlib.sha1(basis.encode("utf-8")).hexdigest()


def plain_text(text: str) -> str:
    """A record's sentence as the agents read it: the [CITATION]/[OTHER]/[MATH] markers removed."""
    return _SPACES.sub(" ", _MARKERS.sub(" ", text)).strip()


def parse_filters(filters: Sequence[str]) -> list[tuple[str, bool, str]]:
    """``["split=train", "source!=aan"]`` -> ``[("split", True, "train"), ("source", False, "aan")]``."""
    out = []
    for f in filters:
        field, neg, value = f.partition("!=") if "!=" in f else f.partition("=")
        if not neg or not field.strip():
            raise InputError(f"filter {f!r}: write FIELD=VALUE or FIELD!=VALUE (e.g. split=train, source!=aan, "
                             "citing.paper=github:owner/name)")
        out.append((field.strip(), neg == "=", value.strip()))
    return out


def _field(raw: dict[str, Any], dotted: str) -> Any:
    value: Any = raw
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def keeps(raw: dict[str, Any], filters: Sequence[tuple[str, bool, str]]) -> bool:
    """Whether a raw pack record passes every filter (a missing field equals nothing)."""
    for field, equal, value in filters:
        got = _field(raw, field)
        if (str(got) == value if got is not None else False) != equal:
            return False
    return True


def _str(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, got {type(value).__name__}")
    return value.strip() or None


def _year(value: Any, what: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        year = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a year, got {value!r}") from None
    return year if 1000 <= year <= 2999 else None


def record_from_json(raw: dict[str, Any], *, origin: str = "pack") -> ContextRecord:
    """A :class:`ContextRecord` from one pack object; ValueError says what is wrong with it."""
    text = _str(raw.get("text"), "text")
    if not text:
        raise ValueError("has no citing sentence ('text')")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"has a 'text' of {len(text):,} characters; one sentence expected")
    cited = raw.get("cited")
    if not isinstance(cited, dict):
        raise ValueError("has no 'cited' object (the cited paper: title, year, authors)")
    title = _str(cited.get("title"), "cited.title")
    if not title:
        raise ValueError("has no cited title ('cited.title')")
    authors = cited.get("authors") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in re.split(r"\s+and\s+|;", authors)]
    if not isinstance(authors, list):
        raise ValueError("cited.authors must be a list of names")
    citing: dict[str, Any] = raw["citing"] if isinstance(raw.get("citing"), dict) else {}
    return ContextRecord(
        text=text, title=title, year=_year(cited.get("year"), "cited.year"),
        authors=tuple(str(a).strip() for a in authors if a is not None and str(a).strip()),
        doc_id=_str(cited.get("doc_id"), "cited.doc_id"), doi=_str(cited.get("doi"), "cited.doi"),
        arxiv_id=_str(cited.get("arxiv_id"), "cited.arxiv_id"),
        prev=_str(raw.get("prev"), "prev"), next=_str(raw.get("next"), "next"),
        citing=_str(citing.get("paper"), "citing.paper") or "", citing_title=_str(citing.get("title"), "citing.title"),
        citing_year=_year(citing.get("year"), "citing.year"), group=_str(raw.get("group"), "group"),
        source=_str(raw.get("source"), "source"), license=_str(raw.get("license"), "license"),
        split=_str(raw.get("split"), "split"), origin=origin, pack_id=_str(raw.get("id"), "id"),
    )


def read_pack(path: Path, filters: Sequence[tuple[str, bool, str]] = ()) -> Iterator[ContextRecord | ImportFailure]:
    """Records of a context pack (``.jsonl``, ``.jsonl.gz``), filtered; a bad line is reported, not fatal."""
    path = Path(path)
    name = path.name
    opener: Any = gzip.open if name.lower().endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as fh:
            for lineno, raw_line in enumerate(fh, start=1):
                line = decode_text(raw_line).strip().lstrip("\ufeff")
                if not line:
                    continue
                try:
                    raw = json.loads(line)
                except ValueError as e:
                    yield ImportFailure(f"{name}:{lineno}", f"line {lineno} is not valid JSON ({e})")
                    continue
                if not isinstance(raw, dict):
                    yield ImportFailure(f"{name}:{lineno}", f"line {lineno} is not a JSON object")
                    continue
                if not keeps(raw, filters):
                    continue
                try:
                    yield record_from_json(raw)
                except ValueError as e:
                    yield ImportFailure(f"{name}:{lineno}", f"line {lineno} {e}")
    except (OSError, EOFError, zlib.error) as e:
        kept = f"lines 1-{lineno} were read" if lineno else "nothing could be read"
        yield ImportFailure(name, f"could not read past line {lineno}: the file is missing, truncated or damaged "
                            f"({e}); {kept}")
