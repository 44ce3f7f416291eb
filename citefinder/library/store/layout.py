"""A library folder's layout, read in one place: what its files are called, what makes a folder a library, and
how its SQLite files are opened without writing a byte.

The store (:mod:`citefinder.library.store`), the read-only view of a literature library
(:mod:`citefinder.library.readonly`), the reference library of ``check --against``
(:mod:`citefinder.library.reference`) and the literature source (:mod:`citefinder.sources.local`) all read a
folder through these names and this rule.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

MANIFEST = "library.json"  # what the folder holds (citefinder.library.store.manifest)
CHROMA_DIR = "chroma"  # the Chroma store (papers, metadata, vectors)
STORE = f"{CHROMA_DIR}/chroma.sqlite3"  # its SQLite file
PENDING = "pending.sqlite"  # the embedding queue (papers stored, vectors to come)
BM25_DIR = "bm25"  # the BM25 index, derived from the stored papers
INDEXES_DIR = "indexes"  # the other derived indexes (citefinder.index.base)
DATABASES = (STORE, PENDING)  # the folder's SQLite files


def is_library_folder(folder: Path | str) -> bool:
    """Does ``folder`` hold a CiteFinder library: its manifest, its Chroma store or its embedding queue (a folder
    made before manifests has only the store; one imported BM25-first may hold its papers in the queue alone)?"""
    root = Path(folder)
    return any((root / name).is_file() for name in (MANIFEST, *DATABASES))


def not_a_library(folder: Path | str, role: str = "folder") -> str:
    """The message for a folder named as a library that holds none."""
    return (f"The {role} {folder} is not a CiteFinder library folder (it has no {MANIFEST}, {STORE} nor "
            f"{PENDING}); build one with `citefinder --library FOLDER library import FILE` (a dump: add "
            "--defer-embedding).")


def connect_read_only(path: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """An SQLite file of a library folder opened without writing a byte (``immutable`` when even a read-only
    opening would need to write: a WAL store in a folder SQLite may not write its ``-shm`` beside)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=check_same_thread)
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
        return con
    except sqlite3.Error:
        return sqlite3.connect(f"file:{path}?immutable=1", uri=True, check_same_thread=check_same_thread)
