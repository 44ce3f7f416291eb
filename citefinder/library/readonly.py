"""A library folder searched in place without writing a byte: a literature library of a few hundred thousand
papers beside the user's own (:mod:`citefinder.pipeline.literature`).

:meth:`Library.open <citefinder.library.store.Library.open>` needs to write (Chroma opens its store for
writing; a read-only folder is copied to a temporary folder first, which at 333k papers costs a minute and
the disk twice over). This view opens nothing for writing: the saved BM25 index is memory-mapped, papers are
read by id from the Chroma store's SQLite file and the embedding queue with SQLite in read-only mode, and the
dense agents read the exact-search vectors the folder saved (``indexes/vectors``) when they are current —
never Chroma's HNSW index, whose files only Chroma reads. A literature library imported BM25-first
(``--defer-embedding``) has no vectors: the dense agents then skip, saying why. The derived indexes the agents
read (titles, names, authors) are read from the folder when it saved current ones, else built once and kept
in the user's cache (``CITEFINDER_CACHE``, ``~/.cache/citefinder/literature/``), never in the folder. A folder
built with its own citation-context memory (``citefinder --library LIT contexts import PACK`` when the literature
library is built) has it read in place too, read-only (the memory agents: how the literature cites its papers).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Callable

from citefinder.config import Settings, cache_root
from citefinder.errors import LibraryDamagedError, LibraryError
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.encoders.query_side import QuerySide, query_side
from citefinder.library.records import from_record
from citefinder.library.reference import probe
from citefinder.library.store.bm25index import BM25Index, bm25_text
from citefinder.library.store.chroma import check_embedder
from citefinder.library.store.layout import BM25_DIR, INDEXES_DIR, MANIFEST, PENDING, STORE, connect_read_only
from citefinder.library.store.manifest import read_manifest
from citefinder.types import Hit, Paper

log = logging.getLogger(__name__)

_VECTORS = "vectors"  # the exact-search matrix's derived index (citefinder.index.vectors)
_CHUNK = 500  # ids a SQLite query asks for at once


class ReadOnlyLibrary:
    """What the retrieval agents, the fusion and the confidence read of a library (the
    :class:`~citefinder.index.base.PaperSource` protocol and the :class:`~citefinder.library.store.Library`
    reads), over a folder that is never written. Open with :meth:`open`."""

    read_only = True
    never_written = True  # its context memory too is opened read-only (citefinder.library.contexts.memory)

    def __init__(self, settings: Settings, folder: Path, embedder: Embedder, manifest: dict[str, Any],
                 bm25: BM25Index, vectors: int) -> None:
        self.path = folder
        self.settings = settings
        self.embedder = embedder
        self.name = folder.name
        self._manifest = manifest
        self._bm25 = bm25
        self._vectors = vectors
        self._papers = int(manifest.get("papers", 0) or 0) or len(bm25)
        self._query_side: QuerySide | None = None
        self._segments: tuple[str, ...] | None = None
        cache = cache_root() / "literature" / hashlib.sha1(str(folder).encode()).hexdigest()[:16]
        # where citefinder.index.base.derived_indexes reads (the folder's own, when current) and saves (the cache)
        self.index_places = (cache, (folder,))

    @classmethod
    def open(cls, folder: Path | str, settings: Settings, *, embedder: Embedder | None = None) -> "ReadOnlyLibrary":
        """The library folder ``folder`` opened for searching in place. ``embedder``: one already loaded, used
        when it is the one the folder's vectors were made by."""
        path = Path(folder).expanduser().resolve()
        manifest = read_manifest(path)
        if not manifest:
            raise LibraryError(f"{path} is not a CiteFinder library folder (no {MANIFEST}); build a literature "
                               "library with `citefinder library import DUMP --defer-embedding` into a folder of "
                               "its own.")
        if manifest.get("dirty"):
            raise LibraryDamagedError(f"The literature library {path} was left half-written (an import or embedding "
                                      "was stopped): open it once as a library (`citefinder --library "
                                      f"{path} library stats`) to finish it, then search it again.")
        probe(path, "literature library")
        saved = manifest.get("embedder") or {}
        if embedder is None or embedder.name != saved.get("name") or embedder.max_seq_length != saved.get(
                "max_seq_length"):
            embedder = Embedder(str(saved.get("name") or settings.embedder),
                                int(saved.get("max_seq_length") or settings.embed_max_seq_length),
                                settings.embed_batch_size)
        check_embedder(path, manifest, embedder)
        bm25 = _saved_bm25(path, manifest)
        vectors = _saved_vectors(path, manifest)
        settings = settings.model_copy(update={
            "library": path, "embedder": embedder.name, "embed_max_seq_length": embedder.max_seq_length,
            # the saved matrix is searched exactly whatever its size: nothing else holds the vectors outside Chroma
            "exact_dense_max": max(settings.exact_dense_max, vectors)})
        return cls(settings, path, embedder, manifest, bm25, vectors)

    # --- what the agents read ----------------------------------------------------------------

    @property
    def query_side(self) -> QuerySide:
        if self._query_side is None:
            self._query_side = query_side(self.settings.query_encoder, self.embedder)
        return self._query_side

    def count(self) -> int:
        return self._papers

    def embedded_count(self) -> int:
        """Papers the dense agents can find: those of the saved exact-search matrix."""
        return self._vectors

    def pending_count(self) -> int:
        return self._papers - self._vectors

    def generation(self) -> str:
        return str(self._manifest.get("generation", 0))

    def bm25_search(self, text: str, k: int) -> list[Hit]:
        return self._bm25.search(text, k)

    def ensure_bm25(self) -> Any:
        """The folder's saved BM25 index (every stored paper's doc id: :func:`citefinder.index.static.library_ids`)."""
        return self._bm25

    def hnsw_search(self, vector: Any, k: int) -> list[Hit]:
        """Never called: the view's ``exact_dense_max`` covers its saved vectors (Chroma's index is not read)."""
        return []

    def get(self, doc_ids: Sequence[str]) -> list[Paper]:
        """Papers for ``doc_ids`` in the given order; unknown ids are skipped."""
        ids = list(dict.fromkeys(doc_ids))
        found: dict[str, Paper] = {}
        if ids and self._has(STORE):
            found.update(self._chroma_get(ids))
        missing = [i for i in ids if i not in found]
        if missing and self._has(PENDING):
            with closing(connect_read_only(self.path / PENDING, check_same_thread=False)) as con:
                for start in range(0, len(missing), _CHUNK):
                    chunk = missing[start:start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = con.execute(f"SELECT doc_id, paper FROM pending WHERE doc_id IN ({marks})", chunk)
                    found.update((d, Paper.from_dict(json.loads(p))) for d, p in rows)
        return [found[i] for i in ids if i in found]

    def by_key(self, key: str) -> Paper | None:
        """A literature library's keys are not the user's: none is cited by key."""
        return None

    def iter_papers(self) -> Iterator[Paper]:
        return stored(self.path)

    def iter_vectors(self) -> Iterator[tuple[list[str], Any]]:
        """The saved matrix's rows (the vectors index reads them from the folder itself; this serves others)."""
        import numpy as np

        if not self._vectors:
            return
        folder = self.path / INDEXES_DIR / _VECTORS
        ids = json.loads((folder / "doc_ids.json").read_text())
        matrix = np.load(folder / "vectors.npy", mmap_mode="r")
        for start in range(0, len(ids), 5000):
            yield ids[start:start + 5000], np.asarray(matrix[start:start + 5000], dtype=np.float32)

    def on_write(self, name: str, hook: Callable[[], None]) -> None:
        """Nothing is written through this view, so nothing is rebuilt after a write."""

    def stats(self) -> dict[str, Any]:
        return {"library": str(self.path), "mode": "searched in place, read-only", "papers": self._papers,
                "with_vectors": self._vectors, "bm25_documents": len(self._bm25),
                "generation": self._manifest.get("generation", 0)}

    # --- reading the stores ------------------------------------------------------------------

    def _has(self, name: str) -> bool:
        return (self.path / name).is_file()

    def _chroma_get(self, ids: list[str]) -> dict[str, Paper]:
        out: dict[str, Paper] = {}
        with closing(connect_read_only(self.path / STORE, check_same_thread=False)) as con:
            if self._segments is None:
                self._segments = tuple(r[0] for r in con.execute("SELECT id FROM segments"))
            segs = ",".join("?" * len(self._segments))
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start:start + _CHUNK]
                rows = dict(con.execute(f"SELECT id, embedding_id FROM embeddings WHERE segment_id IN ({segs}) AND "
                                        f"embedding_id IN ({','.join('?' * len(chunk))})", [*self._segments, *chunk]))
                if not rows:
                    continue
                meta: dict[int, dict[str, Any]] = {}
                for rid, key, s, i, f in con.execute(
                        "SELECT id, key, string_value, int_value, float_value FROM embedding_metadata WHERE id IN "
                        f"({','.join('?' * len(rows))})", list(rows)):
                    meta.setdefault(rid, {})[key] = s if s is not None else (i if i is not None else f)
                for rid, doc_id in rows.items():
                    m = meta.get(rid, {})
                    document = m.pop("chroma:document", "")
                    out[doc_id] = from_record(doc_id, m, str(document or ""))
        return out


def _saved_bm25(folder: Path, manifest: dict[str, Any]) -> BM25Index:
    """The folder's saved BM25 index (memory-mapped) when it reflects the manifest's papers, else one built in
    memory from the stored papers (minutes at 333k: said in the log)."""
    saved = folder / BM25_DIR
    if BM25Index.saved_stamp(saved) == str(manifest.get("generation", 0)):
        try:
            index = BM25Index.load(saved)
            if len(index) == int(manifest.get("papers", len(index)) or 0):
                return index
        except Exception as e:  # noqa: BLE001 - a damaged index is rebuilt in memory
            log.warning("the BM25 index of %s is unreadable (%s); building one in memory", folder, e)
    log.warning("the literature library %s has no current BM25 index; building one in memory (open it once as a "
                "library to save one)", folder)
    return BM25Index.build_stream((p.doc_id, bm25_text(p)) for p in stored(folder))


def stored(folder: Path) -> Iterator[Paper]:
    """Every paper of the library folder, read-only: the embedding queue alone when the store holds none (a
    literature library imported BM25-first), else both (:func:`citefinder.library.reference.stored_papers`)."""
    from citefinder.library.reference import stored_papers

    if (folder / PENDING).is_file() and not _store_rows(folder):
        with closing(connect_read_only(folder / PENDING, check_same_thread=False)) as con:
            for (paper,) in con.execute("SELECT paper FROM pending ORDER BY seq"):
                yield Paper.from_dict(json.loads(paper))
        return
    yield from stored_papers(folder)


def _store_rows(folder: Path) -> bool:
    if not (folder / STORE).is_file():
        return False
    with closing(connect_read_only(folder / STORE, check_same_thread=False)) as con:
        return con.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is not None


def _saved_vectors(folder: Path, manifest: dict[str, Any]) -> int:
    """How many papers the folder's saved exact-search matrix holds, when it is current (0 otherwise)."""
    where = folder / INDEXES_DIR / _VECTORS
    try:
        stamp = json.loads((where / "stamp.json").read_text())["stamp"]
        n = len(json.loads((where / "doc_ids.json").read_text()))
    except (OSError, ValueError, KeyError):
        return 0
    current = str(stamp).split("/")[0] == str(manifest.get("generation", 0))
    return n if current and n == int(manifest.get("embedded", 0) or 0) else 0
