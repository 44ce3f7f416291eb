"""JSON Lines reader, streamed line by line (``.jsonl``, ``.ndjson``, gzipped ``.jsonl.gz``).

One object per line: ``{"doc_id", "title", "abstract", "authors": [..], "year", "venue",
"arxiv_id"}`` and optionally ``doi``, ``url`` and ``key`` (the user's citation key). A bad line is reported with its line number.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import zlib
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import RecordError, build_paper, decode_text
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

_AUTHOR_SEPARATOR = re.compile(r"\s+and\s+|\s*;\s*")


def _authors(value: Any) -> list[str]:
    if isinstance(value, str):
        return _AUTHOR_SEPARATOR.split(value)
    if isinstance(value, list):
        return [a if isinstance(a, str) else (a.get("name") or "") for a in value if isinstance(a, (str, dict))]
    return []


def paper_from_record(record: dict[str, Any], source: str) -> Paper:
    """A Paper from one JSONL object; the given ``doc_id`` is kept when present."""
    return build_paper(
        source,
        title=record.get("title"),
        authors=_authors(record.get("authors")),
        year=record.get("year"),
        venue=record.get("venue"),
        abstract=record.get("abstract"),
        doi=record.get("doi"),
        arxiv_id=record.get("arxiv_id"),
        url=record.get("url"),
        entry_type=record.get("entry_type"),
        doc_id=record.get("doc_id"),
        key=record.get("key"),
    )


def read_jsonl(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from a JSON Lines file (gzipped when the name ends in ``.gz``), one line at a time."""
    name = path.name
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                line = decode_text(raw).strip()
                if not line:
                    continue
                where = f"{name}:{lineno}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    yield ImportFailure(where, f"line {lineno} is not valid JSON ({e.msg} at column {e.colno})")
                    continue
                if not isinstance(record, dict):
                    yield ImportFailure(where, f"line {lineno} is a JSON {type(record).__name__}, expected an object")
                    continue
                try:
                    yield paper_from_record(record, name)
                except RecordError as e:
                    yield ImportFailure(where, f"line {lineno} {e}")
    except (OSError, EOFError, zlib.error) as e:
        # A truncated or non-gzip file: keep what was read, report where it broke.
        yield ImportFailure(name, f"could not read past line {lineno}: {e}")
