"""JSON Lines read with their positions, for the dumps of the literature (arXiv, OpenAlex, Semantic Scholar).

A dump is one JSON object a line, plain or gzip-compressed (told by the file's first bytes, not its name:
OpenAlex parts are ``part_000.gz``, the arXiv snapshot is ``arxiv-metadata-oai-snapshot.json``). Each line
comes with its number and the (uncompressed) byte offset after it, so an import can say where it stopped and
start there again (:mod:`citefinder.library.resume`): a plain file is seeked to the offset, a gzip file is
decompressed up to it without parsing what lies before.

A :class:`DumpFormat` names what one dump's records mean: how to recognise one, how to make a Paper of it,
and what its topics are (what ``--category`` matches).
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from citefinder.library.formats.common import RecordError, json_kind
from citefinder.text.decode import decode_text
from citefinder.types import ImportFailure, Paper

MAX_LINE_BYTES = 10_000_000  # one record; a longer "line" is a file without newlines, not a paper


@dataclass(frozen=True)
class Position:
    """A place in a dump: ``record`` lines read before it, ``offset`` (uncompressed) bytes before it."""

    record: int = 0
    offset: int = 0


@dataclass(frozen=True)
class DumpFormat:
    """One dump's records: ``looks_like(record)`` recognises one; ``paper(record, source)`` makes a Paper of it
    (RecordError when it cannot); ``topics(record)`` are the names ``--category`` matches (arXiv categories,
    OpenAlex topic/field/domain and concept names, S2 fields of study)."""

    name: str
    looks_like: Callable[[dict[str, Any]], bool]
    paper: Callable[[dict[str, Any], str], Paper]
    topics: Callable[[dict[str, Any]], tuple[str, ...]]


def source_name(path: Path) -> str:
    """How papers and failures name their file: its name, with its partition folder when it has one
    (``updated_date=2024-01-01/part_000.gz``: every OpenAlex partition has a ``part_000.gz``)."""
    return f"{path.parent.name}/{path.name}" if "=" in path.parent.name else path.name


def is_gzip(path: Path) -> bool:
    """Does the file start with gzip's magic bytes (whatever its name)?"""
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def open_dump(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed when it is gzip."""
    if is_gzip(path):
        return gzip.open(path, "rb")  # type: ignore[return-value]  # a GzipFile is a binary file
    return open(path, "rb")  # noqa: SIM115 - the caller closes it


def first_record(path: Path, *, lines: int = 20) -> dict[str, Any] | None:
    """The first JSON object among the first ``lines`` non-blank lines, or None (not JSON Lines, unreadable)."""
    try:
        with open_dump(path) as f:
            seen = 0
            for raw in f:
                if not raw.strip():
                    continue
                seen += 1
                record = _loads(raw)
                if isinstance(record, dict):
                    return record
                if seen >= lines:
                    return None
    except (OSError, EOFError, zlib.error, ValueError, RecursionError):
        return None
    return None


def _loads(raw: bytes) -> Any:
    text: bytes | str = raw.strip().lstrip(b"\xef\xbb\xbf")
    try:
        return json.loads(text)
    except UnicodeDecodeError:  # dumps are UTF-8; a stray cp1252 line is still read
        return json.loads(decode_text(raw).strip())


START = Position()


def positioned_records(path: Path,
                       start: Position = START) -> Iterator[tuple[Position, dict[str, Any] | ImportFailure]]:
    """Each line's JSON object (or an ImportFailure naming the line), with the position after the line, from
    ``start`` on. Blank lines count as records but yield nothing; a truncated gzip file ends with one
    failure saying how far it was read."""
    name = source_name(path)
    record, offset = start.record, start.offset
    try:
        with open_dump(path) as f:
            if offset:
                f.seek(offset)
            for raw in f:
                record += 1
                offset += len(raw)
                where = f"{name}:{record}"
                if not raw.strip():
                    continue
                if len(raw) > MAX_LINE_BYTES:
                    yield Position(record, offset), ImportFailure(
                        where, f"line {record} is {len(raw):,} bytes long; one record per line expected")
                    continue
                try:
                    value = _loads(raw)
                except json.JSONDecodeError as e:
                    yield Position(record, offset), ImportFailure(
                        where, f"line {record} is not valid JSON ({e.msg} at column {e.colno})")
                    continue
                except RecursionError:
                    yield Position(record, offset), ImportFailure(
                        where, f"line {record} is nested too deeply to be a paper record")
                    continue
                if not isinstance(value, dict):
                    yield Position(record, offset), ImportFailure(
                        where, f"line {record} is a JSON {json_kind(value)}, expected an object")
                    continue
                yield Position(record, offset), value
    except (OSError, EOFError, zlib.error) as e:
        kept = f"lines 1-{record} were read" if record else "nothing could be read"
        yield Position(record, offset), ImportFailure(
            name, f"could not read past line {record}: the file is truncated or damaged ({e}); {kept}. "
                  "Download it again and import it again.")


def read_dump(path: Path, fmt: DumpFormat) -> Iterator[Paper | ImportFailure]:
    """Papers of a dump file in format ``fmt``, every bad line an ImportFailure with its number (never raises
    for bad content): the plain reader :mod:`citefinder.library.readers` registers for each dump."""
    for position, item in positioned_records(path):
        yield paper_or_failure(item, fmt, source_name(path), position.record)


def paper_or_failure(item: dict[str, Any] | ImportFailure, fmt: DumpFormat, source: str,
                     line: int) -> Paper | ImportFailure:
    """The Paper of one record, or the failure that says which line could not become one and why."""
    if isinstance(item, ImportFailure):
        return item
    try:
        return fmt.paper(item, source)
    except RecordError as e:
        return ImportFailure(f"{source}:{line}", f"line {line} {e}")
