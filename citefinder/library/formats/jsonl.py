"""JSON Lines reader, streamed line by line (``.jsonl``, ``.ndjson``, gzipped ``.jsonl.gz``).

One object per line: ``{"doc_id", "title", "abstract", "authors": [..], "year", "venue",
"arxiv_id"}`` and optionally ``doi``, ``url``, ``pages``, ``volume``, ``entry_type``, ``key`` (the user's citation
key) and ``cited_by`` (how often the
literature cites it; ``cited_by_count`` and ``citationcount`` are read too). A bad line is reported
with its line number and the other lines are still read; a truncated gzip file keeps every line before the break.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import re
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import RecordError, build_paper, citation_count, json_kind
from citefinder.text.decode import decode_text, sniff_encoding
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

_AUTHOR_SEPARATOR = re.compile(r"\s+and\s+|\s*;\s*")
MAX_LINE_CHARS = 10_000_000  # one record; a longer "line" is a file without newlines, not a paper


def _authors(value: Any) -> Any:
    if isinstance(value, str):
        return _AUTHOR_SEPARATOR.split(value)
    if isinstance(value, list):
        return [a if isinstance(a, str) else (a.get("name") or "") if isinstance(a, dict) else a
                for a in value if isinstance(a, (str, dict))]
    return value  # None, or a wrong type build_paper reports


# The JSONL fields a record may give, by their Paper names (``authors`` is read by :func:`_authors`).
FIELDS = ("title", "year", "venue", "abstract", "doi", "arxiv_id", "url", "entry_type", "doc_id", "key", "pages",
          "volume")


def paper_from_record(record: dict[str, Any], source: str) -> Paper:
    """A Paper from one JSONL object; the given ``doc_id`` is kept when present."""
    paper = build_paper(source, authors=_authors(record.get("authors")), **{f: record.get(f) for f in FIELDS})
    count = citation_count(*(record.get(f) for f in ("cited_by", "cited_by_count", "citationcount", "citationCount")))
    return replace(paper, cited_by=count) if count is not None else paper


def _lines(fh: gzip.GzipFile | io.BufferedReader) -> Iterator[str]:
    """Decoded lines: a UTF-16/UTF-8 BOM (or UTF-16 without one) fixes the encoding of the whole
    file; otherwise each line is decoded on its own (UTF-8, else cp1252)."""
    buffered = io.BufferedReader(fh) if not hasattr(fh, "peek") else fh
    encoding = sniff_encoding(buffered.peek(4096)[:4096])
    if encoding:
        yield from io.TextIOWrapper(buffered, encoding=encoding, errors="replace", newline=None)
        return
    for raw in buffered:
        yield decode_text(raw)


def parse_line(line: str, where: str, lineno: int) -> dict[str, Any] | ImportFailure:
    """One JSON object, or an ImportFailure saying what is wrong with the line."""
    if len(line) > MAX_LINE_CHARS:
        return ImportFailure(where, f"line {lineno} is {len(line):,} characters long; one record per line expected")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        return ImportFailure(where, f"line {lineno} is not valid JSON ({e.msg} at column {e.colno})")
    except RecursionError:
        return ImportFailure(where, f"line {lineno} is nested too deeply to be a paper record")
    if not isinstance(record, dict):
        return ImportFailure(where, f"line {lineno} is a JSON {json_kind(record)}, expected an object")
    return record


def read_jsonl(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from a JSON Lines file (gzipped when the name ends in ``.gz``), one line at a time."""
    name = path.name
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(_lines(fh), start=1):
                line = raw.strip().lstrip("\ufeff")
                if not line:
                    continue
                where = f"{name}:{lineno}"
                record = parse_line(line, where, lineno)
                if isinstance(record, ImportFailure):
                    yield record
                    continue
                try:
                    yield paper_from_record(record, name)
                except RecordError as e:
                    yield ImportFailure(where, f"line {lineno} {e}")
    except (OSError, EOFError, zlib.error) as e:
        # A truncated or damaged gzip file: every line before the break was read.
        kept = f"lines 1-{lineno} were read" if lineno else "nothing could be read"
        yield ImportFailure(name, f"could not read past line {lineno}: the file is truncated or damaged "
                            f"({e}); {kept}. Re-download or re-export it and import it again.")
