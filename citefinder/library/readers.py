"""Read papers from files: BibTeX, JSON Lines (optionally gzipped), CSL-JSON and paper PDFs.

:func:`read_papers` streams ``Paper`` records and ``ImportFailure`` reasons; it never raises for
bad content, so one broken record never loses the rest of a file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Iterator

from citefinder.library.formats.bib import read_bib
from citefinder.library.formats.csl import read_csl_json
from citefinder.library.formats.jsonl import read_jsonl
from citefinder.library.formats.pdf import read_pdf
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
}
SUPPORTED = "BibTeX (.bib), JSON Lines (.jsonl, .jsonl.gz, .ndjson), CSL-JSON (.json, e.g. from Zotero) or PDF (.pdf)"


def reader_for(path: Path) -> Reader | None:
    """The reader for ``path``'s suffix (case-insensitive), or None when unsupported."""
    name = path.name.lower()
    for suffix in sorted(READERS, key=len, reverse=True):
        if name.endswith(suffix):
            return READERS[suffix]
    return None


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
    if reader is read_pdf:
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

