"""Read papers from files: BibTeX, JSON Lines (optionally gzipped), CSL-JSON, paper PDFs, and the dumps of
the literature (the arXiv metadata snapshot, OpenAlex works, Semantic Scholar papers).

:func:`read_papers` streams ``Paper`` records and ``ImportFailure`` reasons; it never raises for
bad content, so one broken record never loses the rest of a file. A file's type is its suffix, except for
JSON Lines, ``.json`` and ``.gz`` files, whose first record says which dump they are (:func:`sniff_format`):
the arXiv snapshot is named ``.json``, OpenAlex parts ``part_000.gz``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Iterator

from citefinder.library.formats import arxiv, openalex, s2
from citefinder.library.formats.arxiv import read_arxiv
from citefinder.library.formats.bib import read_bib
from citefinder.library.formats.csl import read_csl_json
from citefinder.library.formats.jsonl import paper_from_record, read_jsonl
from citefinder.library.formats.lines import DumpFormat, first_record
from citefinder.library.formats.openalex import read_openalex
from citefinder.library.formats.pdf import read_pdf
from citefinder.library.formats.s2 import read_s2, read_s2_abstracts
from citefinder.text.decode import binary_kind
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

Reader = Callable[[Path], Iterator["Paper | ImportFailure"]]

READERS: dict[str, Reader] = {
    ".bib": read_bib,
    ".jsonl": read_jsonl,
    ".jsonl.gz": read_jsonl,
    ".ndjson": read_jsonl,
    ".ndjson.gz": read_jsonl,
    ".json": read_csl_json,
    ".pdf": read_pdf,
}
# What a file of each type should be, for "no records found in X — is it a ...?"
EXPECTED: dict[Reader, str] = {
    read_bib: "a BibTeX file (.bib) with @article{...} entries",
    read_jsonl: "a JSON Lines file with one paper object per line",
    read_csl_json: "a CSL-JSON file (a list of items, e.g. exported from Zotero)",
    read_pdf: "a paper PDF",
    read_arxiv: "an arXiv metadata snapshot (JSON Lines)",
    read_openalex: "an OpenAlex works file (JSON Lines)",
    read_s2: "a Semantic Scholar papers file (JSON Lines)",
    read_s2_abstracts: "a Semantic Scholar papers file (JSON Lines)",
}
SUPPORTED = ("BibTeX (.bib), JSON Lines (.jsonl, .jsonl.gz, .ndjson), CSL-JSON (.json, e.g. from Zotero), PDF (.pdf), "
             "or a dump: the arXiv metadata snapshot, OpenAlex works, Semantic Scholar papers (JSON Lines, .gz too)")


def _jsonl_topics(record: dict[str, Any]) -> tuple[str, ...]:
    value = record.get("categories")
    return tuple(str(v) for v in value) if isinstance(value, list) else tuple(str(value or "").split())


# The line formats a dump import reads with positions, filters and resume (citefinder.library.dumps);
# "jsonl" is CiteFinder's own JSON Lines (doc_id, title, abstract, authors, year, venue, arxiv_id).
DUMP_FORMATS: dict[str, DumpFormat] = {
    "arxiv": arxiv.FORMAT,
    "openalex": openalex.FORMAT,
    "s2": s2.FORMAT,
    "jsonl": DumpFormat("jsonl", lambda r: "title" in r, paper_from_record, _jsonl_topics),
}
S2_ABSTRACTS = "s2-abstracts"
_DUMP_READERS: dict[str, Reader] = {"arxiv": read_arxiv, "openalex": read_openalex, "s2": read_s2,
                                    S2_ABSTRACTS: read_s2_abstracts}


def sniff_format(path: Path) -> str | None:
    """Which dump a JSON Lines file (plain or gzip, whatever its name) holds, by its first record's keys:
    "arxiv" (authors_parsed / versions), "openalex" (abstract_inverted_index / authorships / an openalex.org
    id), "s2" (corpusid / externalids), "s2-abstracts" (the abstracts dataset), "jsonl" (CiteFinder's own:
    a title), or None (not JSON Lines of objects)."""
    record = first_record(path)
    if record is None:
        return None
    for name in ("arxiv", "openalex", "s2"):
        if DUMP_FORMATS[name].looks_like(record):
            return name
    if s2.looks_like_abstracts(record):
        return S2_ABSTRACTS
    return "jsonl" if "title" in record else None


def reader_for(path: Path) -> Reader | None:
    """The reader for ``path``'s suffix (case-insensitive), or None when unsupported; JSON Lines, ``.json`` and
    ``.gz`` files that hold a dump get the dump's reader (:func:`sniff_format`)."""
    name = path.name.lower()
    by_suffix = next((READERS[s] for s in sorted(READERS, key=len, reverse=True) if name.endswith(s)), None)
    if by_suffix in (read_jsonl, read_csl_json, None) and (by_suffix is not None or name.endswith(".gz")):
        dump = _DUMP_READERS.get(sniff_format(path) or "") if path.is_file() else None
        return dump or by_suffix
    return by_suffix


def read_papers(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers in ``path``, and an ImportFailure for every record (or whole file) that cannot be read.

    Every Paper has ``source`` set to the file name and a ``doc_id`` (kept from JSONL, else made
    by :func:`citefinder.library.identity.make_doc_id`). A file that yields nothing (empty, junk,
    binary, comments only) gives one ImportFailure saying so; nothing in a file raises.
    """
    path = Path(path)
    reader = reader_for(path)
    if reader is None:
        yield ImportFailure(path.name, f"unsupported file type; use {SUPPORTED}")
        return
    if not path.is_file():
        yield ImportFailure(path.name, f"file not found: {path}")
        return
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError as e:
        yield ImportFailure(path.name, f"could not read the file: {e}")
        return
    if not head:
        yield ImportFailure(path.name, f"no records found in {path.name}: the file is empty")
        return
    problem = _wrong_content(path, reader, head)
    if problem:
        yield ImportFailure(path.name, problem)
        return
    n = 0
    try:
        for item in reader(path):
            n += 1
            yield item
    except OSError as e:
        yield ImportFailure(path.name, f"could not read the file: {e}")
        return
    except Exception as e:  # noqa: BLE001 - a reader bug must not lose the other files
        log.exception("reading %s failed after %d records", path, n)
        yield ImportFailure(path.name, f"could not read the file after {n} records ({type(e).__name__}: "
                            f"{str(e)[:160]}); the records before were kept")
        return
    if n == 0:
        yield ImportFailure(path.name, f"no records found in {path.name} — is it {EXPECTED[reader]}?")


def _wrong_content(path: Path, reader: Reader, head: bytes) -> str | None:
    """Why a file's first bytes show it is not of its type (a ZIP named .bib...), or None."""
    if reader is read_pdf or (reader in _DUMP_READERS.values() and head.startswith(b"\x1f\x8b")):
        return None
    gzipped = path.name.lower().endswith(".gz")
    if gzipped:
        if not head.startswith(b"\x1f\x8b"):
            return f"{path.name} is not gzip-compressed; name it .jsonl (or compress it with gzip)"
        return None
    kind = binary_kind(head)
    if kind:
        return f"{path.name} is {kind}, not {EXPECTED[reader]}"
    return None


def estimate_records(path: Path) -> int | None:
    """Line count of a JSONL file (plain or gzip), for progress totals; None for other formats."""
    name = path.name.lower()
    if not path.exists() or not (name.endswith(".jsonl") or name.endswith(".jsonl.gz") or name.endswith(".ndjson")):
        return None
    import gzip
    import zlib

    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            return sum(1 for _ in f)
    except (OSError, EOFError, ValueError, zlib.error):  # truncated or not gzip: the reader reports it
        return None

