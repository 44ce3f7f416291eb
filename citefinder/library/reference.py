"""A reference library, read without writing a byte: the papers of another library folder (e.g. one built
from papers-333k) to tell whether a .bib entry names a real paper and whether its fields agree.

The folder's Chroma store (``chroma/chroma.sqlite3``) and embedding queue are read with SQLite in
read-only mode, so a shared or read-only reference is never locked, migrated or repaired, and 50,000
papers read in about a second. Entries are matched as the library matches duplicates
(:mod:`citefinder.library.identity`): DOI, arXiv id, normalised title.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from citefinder.errors import LibraryDamagedError, LibraryError
from citefinder.library.identity import dedupe_keys, same_work
from citefinder.library.records import from_record
from citefinder.library.store.layout import (
    DATABASES,
    PENDING,
    STORE,
    connect_read_only,
    is_library_folder,
    not_a_library,
)
from citefinder.types import Paper

log = logging.getLogger(__name__)




def damaged_input(folder: Path, role: str, error: BaseException) -> LibraryDamagedError:
    """The error for a folder CiteFinder only reads (a literature library, a reference library) whose database
    is damaged: it names *that* folder as what it is, says nothing in it was changed, and does not send the user
    to ``library repair`` of their own library (which is not concerned)."""
    detail = " ".join(str(error).split())[:200] or type(error).__name__
    return LibraryDamagedError(
        f"The {role} {folder} cannot be read: a database file in it is damaged ({detail}). CiteFinder only reads "
        "that folder and changed nothing in it, nor in your own library; build it again from its dump "
        f"(`citefinder --library NEW_FOLDER library import DUMP`) or mend it yourself (`citefinder --library "
        f"{folder} library repair`), or name another folder.")


def probe(folder: Path, role: str) -> None:
    """Raise :func:`damaged_input` when a database file of ``folder`` (read-only) is not a readable SQLite
    database; cheap (the schema only), so it runs before any work."""
    for name in DATABASES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            with closing(connect_read_only(path)) as con:
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as e:
            raise damaged_input(folder, role, e) from e


def stored_papers(folder: Path) -> Iterator[Paper]:
    """Every paper of the library folder ``folder`` (embedded or still queued), read-only."""
    store = folder / STORE
    if not store.is_file():
        raise LibraryError(not_a_library(folder))
    try:
        with closing(connect_read_only(store)) as con:
            meta: dict[int, dict[str, object]] = {}
            for rid, key, s, i, f in con.execute(
                    "SELECT id, key, string_value, int_value, float_value FROM embedding_metadata"):
                meta.setdefault(rid, {})[key] = s if s is not None else (i if i is not None else f)
            for rid, doc_id in con.execute("SELECT id, embedding_id FROM embeddings"):
                m = meta.get(rid, {})
                document = m.pop("chroma:document", "")
                yield from_record(doc_id, m, str(document or ""))
    except sqlite3.Error as e:
        raise damaged_input(folder, "library folder", e) from e
    pending = folder / PENDING
    if pending.is_file():
        try:
            with closing(connect_read_only(pending)) as con:
                for (paper,) in con.execute("SELECT paper FROM pending"):
                    yield Paper.from_dict(json.loads(paper))
        except sqlite3.Error as e:
            log.warning("the embedding queue of %s could not be read: %s", folder, e)


@dataclass
class ReferenceLibrary:
    """The papers of a reference library, indexed by their identity keys."""

    folder: Path
    count: int = 0
    _by_key: dict[str, list[Paper]] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path | str) -> "ReferenceLibrary":
        ref = cls(Path(folder).expanduser().resolve())
        role = "reference library (--against)"
        if not is_library_folder(ref.folder):
            raise LibraryError(not_a_library(ref.folder, role))
        probe(ref.folder, role)
        try:
            papers = list(stored_papers(ref.folder))
        except LibraryDamagedError as e:
            raise damaged_input(ref.folder, role, e.__cause__ or e) from e
        for paper in papers:
            ref.count += 1
            for k in dedupe_keys(paper):
                ref._by_key.setdefault(k, []).append(paper)
        if not ref.count:
            raise LibraryError(f"The reference library {ref.folder} holds no paper.")
        return ref

    def match(self, paper: Paper) -> Paper | None:
        """The reference paper that is the same work as ``paper`` (the library's duplicate rule), or None."""
        for k in dedupe_keys(paper):
            for other in self._by_key.get(k, ()):
                if same_work(k, other, paper):
                    return other
        return None

    def named(self, paper: Paper) -> Paper | None:
        """A reference paper sharing a DOI, arXiv id or title with ``paper``, even when its year or first
        author contradicts it (what a check of the entry's fields compares with)."""
        for k in dedupe_keys(paper):
            if self._by_key.get(k):
                return self._by_key[k][0]
        return None
