"""The state of an open library and what every other part of it builds on: reading the stored papers,
the write lock, the dirty flag and the commit that keeps the BM25 index and the manifest in step with
the store (see :mod:`citefinder.library.store` for what one folder supports).

BM25 is rebuilt only when the stored papers changed: a write that adds nothing (all duplicates, an
empty file, removing an unknown id) keeps the saved index and the generation. A change rebuilds the
whole index: bm25s stores precomputed scores that depend on every document (IDF, average length)
and has no way to add documents, so there is no incremental update. Measured cost: 5-8 s per
10,000 papers for the tokenising and indexing alone on a busy 2-core machine (issue 14 measured
about 10 s for a 50k library on a quiet one, reading the papers from Chroma included).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citefinder.config import Settings
from citefinder.errors import StoreUnavailableError
from citefinder.library.encoders.embedder import CitefinderEmbeddingFunction, Embedder
from citefinder.library.encoders.query_side import QuerySide, query_side
from citefinder.library.identity import Identity
from citefinder.library.store.bm25index import BM25Index, bm25_text
from citefinder.library.store.chroma import make_client, papers_of
from citefinder.library.store.layout import BM25_DIR
from citefinder.library.store.lockfile import FolderLock
from citefinder.library.store.manifest import read_manifest, write_manifest
from citefinder.library.store.pending import PendingQueue
from citefinder.types import Paper

log = logging.getLogger(__name__)

PAGE = 5000


class LibraryCore:
    """The library's state, its reads, and its upkeep after a write (the base of
    :class:`~citefinder.library.store.Library`)."""

    def __init__(
        self,
        settings: Settings,
        client: Any,
        collection: Any,
        embedder: Embedder,
        *,
        collection_name: str | None = None,
        read_only: bool = False,
        store_path: Path | None = None,
    ) -> None:
        self.settings = settings
        self.path = Path(settings.library)
        self.embedder = embedder
        self.collection_name = collection_name or settings.collection
        self.read_only = read_only  # a read-only folder is searched through a temporary copy of its store
        self._client = client
        self._collection = collection
        self._write_lock = threading.RLock()
        self._folder_lock = FolderLock(self.path)  # one writer per folder across processes
        self._bm25: BM25Index | None = None
        self._generation: int | None = None  # the manifest generation self._bm25 and self._keys reflect
        self._keys: dict[str, Identity] | None = None  # dedupe key -> stored paper, built on first write
        self._seen: dict[str, Any] | None = None  # the manifest as this object last read or wrote it
        self._pending = PendingQueue(store_path or self.path)  # stored papers still waiting for their vectors
        self._on_write: dict[str, Callable[[], None]] = {}  # what higher layers rebuild after a write
        self._on_write["context-memory"] = _memory_hook(self)  # match the citation contexts to new papers
        self._vector_check: tuple[int, int, int] | None = None  # (generation, records, vectors indexed)
        self.repair_log: list[str] = []  # what ``open(repair=True)`` did, one line each
        self._query_side: QuerySide | None = None

    @property
    def query_side(self) -> QuerySide:
        """What embeds the dense agents' queries (``settings.query_encoder``); papers are always embedded by
        :attr:`embedder`."""
        if self._query_side is None:
            self._query_side = query_side(self.settings.query_encoder, self.embedder)
        return self._query_side

    def count(self) -> int:
        """Papers in the library, including those still waiting for their dense vectors."""
        return self.embedded_count() + self.pending_count()

    def embedded_count(self) -> int:
        """Papers the dense agent can find (their vectors are in Chroma)."""
        return int(self._collection.count())

    def pending_count(self) -> int:
        """Papers searchable by BM25 only until :meth:`embed_pending` has embedded them."""
        return self._pending.count() - len(self._landed())

    def _landed(self, ids: Sequence[str] | None = None) -> list[str]:
        """Queued papers Chroma already holds, among ``ids`` (default: those marked in flight): a batch a
        killed ``embed`` stored but did not take off the queue. A stored paper is not pending: reads leave
        these out and the next writer takes them off the queue (:meth:`_settle_queue`)."""
        ids = self._pending.flying() if ids is None else ids
        found: list[str] = []
        for start in range(0, len(ids), 500):
            found += self._collection.get(ids=list(ids[start:start + 500]), include=[])["ids"]
        return found

    def _settle_queue(self, *, everything: bool = False) -> int:
        """Under the write lock: take stored papers off the queue (those marked in flight; ``everything``:
        check every queued paper, as after a writer of an older version died). Returns how many."""
        ids = self._pending.ids() if everything else self._pending.flying()
        if not ids:
            return 0
        landed = self._landed(ids)
        if landed:
            log.info("%d papers of the embedding queue were already stored (a killed embed); taken off the queue",
                     len(landed))
        return self._pending.land(landed)

    def get(self, doc_ids: Sequence[str]) -> list[Paper]:
        """Papers for ``doc_ids`` in the given order; unknown ids are skipped."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return []
        found = {p.doc_id: p for p in self._chroma_get(ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            found.update(self._pending.get(missing))
        return [found[i] for i in ids if i in found]

    def generation(self) -> str:
        """Changes whenever the stored papers change: what derived indexes are stamped with."""
        return self._stamp()

    def iter_vectors(self, page: int = PAGE) -> Iterator[tuple[list[str], Any]]:
        """(doc_ids, vectors) pages of every embedded paper, in storage order."""
        import numpy as np

        offset = 0
        while True:
            res = self._collection.get(offset=offset, limit=page, include=["embeddings"])
            ids = list(res["ids"])
            if not ids:
                return
            yield ids, np.asarray(res["embeddings"], dtype=np.float32)
            offset += len(ids)

    def browse(self, offset: int = 0, limit: int = 50) -> list[Paper]:
        """Papers in storage order: embedded ones first, then those waiting for vectors."""
        embedded = self.embedded_count()
        papers: list[Paper] = []
        if offset < embedded:
            res = self._collection.get(offset=offset, limit=limit, include=["metadatas", "documents"])
            papers = papers_of(res)
        if len(papers) < limit:
            papers += self._pending.take(limit - len(papers), max(0, offset - embedded), skip=self._landed())
        return papers

    def iter_papers(self, page: int = PAGE) -> Iterator[Paper]:
        offset = 0
        while True:
            batch = self.browse(offset, page)
            if not batch:
                return
            yield from batch
            offset += len(batch)

    def on_write(self, name: str, hook: Callable[[], None]) -> None:
        """Call ``hook()`` after every finished write (one hook per ``name``): higher layers keep
        data they derive from the papers (the agents' indexes) current."""
        self._on_write[name] = hook

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold this folder's write lock (threads and processes) and start from the newest state."""
        if self.read_only:
            raise StoreUnavailableError(f"The library folder {self.path} is read-only: it can be searched but "
                                        "not changed. Copy it to a writable folder to import or remove papers.")
        with self._write_lock, self._folder_lock:
            manifest = read_manifest(self.path)
            if self._seen is not None and manifest != self._seen:
                # another process wrote since (or died writing): see its papers, forget cached keys and BM25
                self._refresh_store()
                self._keys = None
                self._bm25 = None
            self._seen = manifest
            self._settle_queue()
            yield

    def _chroma_get(self, doc_ids: Sequence[str]) -> list[Paper]:
        res = self._collection.get(ids=list(doc_ids), include=["metadatas", "documents"])
        return papers_of(res)

    def _mark_dirty(self, dirty: bool) -> None:
        """Only under the write lock: readers never touch the manifest."""
        manifest = read_manifest(self.path)
        manifest["dirty"] = dirty
        write_manifest(self.path, manifest)
        self._seen = manifest

    def _refresh_store(self) -> None:
        """Reopen the embedded Chroma store so this process sees what another process wrote."""
        if self.settings.chroma_host or self.read_only:
            return
        client = make_client(self.settings, self.path, fresh=True)
        self._collection = client.get_collection(self.collection_name,
                                                 embedding_function=CitefinderEmbeddingFunction(self.embedder))
        self._client = client

    def _commit(self, *, changed: bool = True) -> None:
        """After a write: when papers changed, bump the generation and rebuild BM25 from what the
        store now holds; record the expected counts; clear the dirty flag last."""
        manifest = read_manifest(self.path)
        if changed or self._bm25 is None or len(self._bm25) != self.count():
            manifest["generation"] = int(manifest.get("generation", 0)) + 1
            try:
                self._rebuild_bm25(str(manifest["generation"]))
            except BaseException:
                shutil.rmtree(self.path / f"{BM25_DIR}.tmp-{os.getpid()}", ignore_errors=True)
                raise
        self._record_state(manifest)

    def _record_state(self, manifest: dict[str, Any]) -> None:
        manifest.setdefault("collection", self.collection_name)
        manifest["papers"] = self.count()
        manifest["embedded"] = self.embedded_count()
        manifest["dirty"] = False
        write_manifest(self.path, manifest)
        self._seen = manifest
        self._generation = int(manifest.get("generation", 0))
        for name, hook in list(self._on_write.items()):
            try:
                hook()
            except Exception as e:  # noqa: BLE001 - derived data is rebuilt on first use anyway
                log.warning("after the write, %s failed (rebuilt on first use): %s", name, e)

    def _finish_after_failure(self, *, changed: bool) -> None:
        """Best effort after a failed write; the first error stays the one reported. When this
        fails too (dead server, full disk) the dirty flag stays set and the next opening rebuilds."""
        try:
            self._commit(changed=changed)
        except BaseException as e:  # noqa: BLE001 - never hide the error that stopped the write
            # info, not warning: the caller reports the first error in one line (what was kept, how to resume)
            log.info("could not update the BM25 index and manifest after the failure (%s: %s); "
                        "they will be rebuilt when the library is next opened", type(e).__name__, e)

    def _stamp(self) -> str:
        return str(read_manifest(self.path).get("generation", 0))

    def ensure_bm25(self) -> BM25Index:
        """The BM25 index of the newest generation: reloaded when another process wrote, rebuilt
        when missing, stale or damaged (saved only by whoever can take the write lock)."""
        manifest = read_manifest(self.path)
        generation = int(manifest.get("generation", 0))
        if self._bm25 is not None and (generation == self._generation or self._folder_lock.held()):
            return self._bm25
        with self._write_lock:
            if self._bm25 is not None and generation == self._generation:
                return self._bm25
            if self._generation is not None and generation != self._generation:
                self._keys = None
                self._refresh_store()  # another process wrote: reopen Chroma to see its papers and vectors
            folder = self.path / BM25_DIR
            index: BM25Index | None = None
            if BM25Index.saved_stamp(folder) == str(generation) and not manifest.get("dirty"):
                try:
                    index = BM25Index.load(folder)
                    if len(index) != self.count():
                        index = None
                except Exception as e:  # noqa: BLE001 - a truncated or half-deleted index is rebuilt
                    log.warning("the BM25 index in %s is damaged (%s: %s); rebuilding it", folder, type(e).__name__, e)
                    index = None
            if index is None:
                log.info("BM25 index missing or stale in %s; rebuilding from the store", self.path)
                index = self._rebuild_from_store_if_free(generation)
            self._bm25 = index
            self._generation = generation
            return index

    def _rebuild_from_store_if_free(self, generation: int) -> BM25Index:
        """Rebuild BM25; save it (and finish a dead writer's commit) only if no writer is running."""
        if self.read_only or not self._folder_lock.acquire(blocking=False):
            return self._rebuild_bm25(str(generation), save=False)
        try:
            manifest = read_manifest(self.path)
            if int(manifest.get("generation", 0)) != generation or not manifest:
                return self._rebuild_bm25(str(generation), save=False)
            if manifest.get("dirty"):  # a writer died: none of its papers may stay both stored and queued
                self._settle_queue(everything=True)
            index = self._rebuild_bm25(str(generation))
            self._record_state(manifest)  # no writer runs: a leftover dirty flag is from a dead one
            return index
        except OSError as e:
            log.warning("could not save the rebuilt BM25 index in %s: %s", self.path, e)
            shutil.rmtree(self.path / f"{BM25_DIR}.tmp-{os.getpid()}", ignore_errors=True)
            return self._bm25 if self._bm25 is not None else self._rebuild_bm25(str(generation), save=False)
        finally:
            self._folder_lock.release()

    def _rebuild_bm25(self, stamp: str, *, save: bool = True) -> BM25Index:
        """Rebuild the derived indexes (BM25) from the stored papers: the one place that does."""
        index = BM25Index.build_stream((p.doc_id, bm25_text(p)) for p in self.iter_papers())
        if not save:
            self._bm25 = index
            return index
        index.save(self.path / BM25_DIR, stamp=stamp)
        self._bm25 = BM25Index.load(self.path / BM25_DIR) if len(index) else index
        return self._bm25


def _memory_hook(library: LibraryCore) -> Callable[[], None]:
    """After a write: match the context memory's records to arrived papers, forget removed ones (no
    reference cycle through the library's own hook table)."""
    ref = weakref.ref(library)

    def sync() -> None:
        from citefinder.library.contexts.api import sync_after_write

        lib = ref()
        if lib is not None:
            sync_after_write(lib)

    return sync
