"""Chroma's files of an embedded library, checked before Chroma opens them, and what repair keeps of them.

Two kinds of damage Chroma itself reports badly:

- **the vector index folder is gone** (``chroma/<vector segment id>/``, Chroma's HNSW segment). Chroma opens
  the store as if nothing were wrong: the records in ``chroma.sqlite3`` are all there, the vectors it had
  flushed into the folder are not, and dense search finds only what its write-ahead queue replays. The folder
  must exist once the vector segment has flushed (its row in ``max_seq_id``); a missing folder, or one without
  its index files, is damage. ``library repair`` re-embeds the stored papers whose vectors are missing
  (:meth:`~citefinder.library.store.repair.LibraryRepairs.repair`).
- **chroma.sqlite3 is damaged** (cut short, overwritten): Chroma says "Cannot connect ... database disk image
  is malformed". It is named as damage here; ``library repair`` reads the papers the file still holds, sets the
  store aside and stores them again (:func:`salvage_papers`, :func:`set_aside`).

Only ``sqlite3`` in read-only mode reads the file here; nothing is written.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from citefinder.library.store.layout import CHROMA_DIR

log = logging.getLogger(__name__)

STORE_FILE = "chroma.sqlite3"
INDEX_FILES = ("header.bin", "data_level0.bin")  # an HNSW segment folder that has flushed holds these
VECTOR = "urn:chroma:segment/vector/hnsw-local-persisted"


def _connect(file: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{file}?mode=ro", uri=True)


def damaged_store(folder: Path) -> str | None:
    """Why ``folder``'s chroma.sqlite3 cannot be read (None: it can, or it is not there). Cheap on a store of any
    size (run on every open): the header against the file's length, then one row of each table read."""
    file = folder / CHROMA_DIR / STORE_FILE
    if not file.is_file() or file.stat().st_size == 0:
        return None
    if _cut_short(file):
        time.sleep(0.5)  # asked twice: not a checkpoint of another process caught midway
        if short := _cut_short(file):
            return short
    try:
        with closing(_connect(file)) as con:
            for table in ("segments", "embeddings", "embedding_metadata", "max_seq_id"):
                con.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()
    except sqlite3.DatabaseError as e:
        return str(e)
    return None


def _cut_short(file: Path) -> str:
    """Why the file is shorter than its header says, or not SQLite at all ("": neither)."""
    with file.open("rb") as f:
        header = f.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return "file is not a database"
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    valid = header[92:96] == header[24:28]  # the header's page count is current (SQLite's rule)
    size = file.stat().st_size
    if valid and pages and size < page * pages:
        return f"database disk image is malformed: {size} bytes of the {page * pages} it should hold"
    return ""


def lost_vector_folders(folder: Path) -> list[str]:
    """The vector segment folders (``chroma/<id>``) the store has flushed vectors into that are missing or hold
    no index ([] when all are there, or when the store cannot say)."""
    file = folder / CHROMA_DIR / STORE_FILE
    if not file.is_file():
        return []
    try:
        with closing(_connect(file)) as con:
            flushed = [r[0] for r in con.execute(
                "SELECT s.id FROM segments s JOIN max_seq_id m ON m.segment_id = s.id WHERE s.type = ?", (VECTOR,))]
            held = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    except sqlite3.DatabaseError as e:  # another Chroma schema, or a damaged file (damaged_store names it)
        log.debug("cannot read the vector segments of %s: %s", file, e)
        return []
    if not held:
        return []
    lost = []
    for segment in flushed:
        seg = folder / CHROMA_DIR / segment
        if not seg.is_dir() or not all((seg / f).is_file() for f in INDEX_FILES):
            lost.append(segment)
    return lost


def salvage_papers(folder: Path) -> tuple[list[Any], int]:
    """The papers a damaged chroma.sqlite3 still holds, and how many of its records could not be read.

    A file cut short still says in its header how many pages it had, and SQLite then refuses every read: a
    temporary copy gets the header's page count set to the pages that are there, and its tables are read in
    order until the first unreadable page (what comes before it is kept)."""
    import shutil
    import struct
    import tempfile

    from citefinder.library.records import from_record

    with tempfile.TemporaryDirectory(prefix="citefinder-salvage-") as tmp:
        copy = Path(tmp) / STORE_FILE
        shutil.copyfile(folder / CHROMA_DIR / STORE_FILE, copy)
        data = bytearray(copy.read_bytes())
        size = struct.unpack(">H", data[16:18])[0] if len(data) >= 100 else 0
        size = 65536 if size == 1 else size
        if size:
            data[28:32] = struct.pack(">I", len(data) // size)  # the pages that are there
            copy.write_bytes(bytes(data[: len(data) // size * size]))
        with closing(_connect(copy)) as con:
            ids = dict(_readable(con, "SELECT id, embedding_id FROM embeddings"))
            meta: dict[int, dict[str, Any]] = {}
            for rid, key, *typed in _readable(con, "SELECT id, key, string_value, int_value, float_value, "
                                                   "bool_value FROM embedding_metadata"):
                meta.setdefault(rid, {})[key] = next((v for v in typed if v is not None), None)
    papers = []
    for rid, eid in ids.items():
        values = meta.get(rid)
        if not values or not values.get("title"):
            continue
        document = str(values.pop("chroma:document", "") or "")
        try:
            papers.append(from_record(str(eid), {k: v for k, v in values.items() if v is not None}, document))
        except (KeyError, TypeError, ValueError):
            continue
    return papers, len(ids) - len(papers)


def _readable(con: sqlite3.Connection, query: str) -> list[tuple[Any, ...]]:
    """The rows of ``query`` up to the first one that cannot be read."""
    rows: list[tuple[Any, ...]] = []
    try:
        for row in con.execute(query):
            rows.append(tuple(row))
    except sqlite3.DatabaseError as e:
        log.info("reading a damaged chroma.sqlite3 stopped after %d rows: %s", len(rows), e)
    return rows


def set_aside(folder: Path) -> Path:
    """Move the damaged Chroma store (``chroma/``) out of the way; where it went."""
    aside = folder / f"damaged-store-{time.strftime('%Y%m%d-%H%M%S')}"
    (folder / CHROMA_DIR).rename(aside)
    return aside
