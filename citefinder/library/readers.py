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
    by :func:`citefinder.library.dedupe.make_doc_id`).
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
        yield from reader(path)
    except OSError as e:
        yield ImportFailure(path.name, f"could not read the file: {e}")
