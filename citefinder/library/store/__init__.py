"""The store of a library folder and its indexes: the Library facade (this module) over ``core`` (state, reads,
commits), ``writes``, ``embedding`` (the queue's papers get their vectors; ``ahead``: the next batch embedded on a
worker; ``stopping``: after a Ctrl-C the cleanup runs to its end), ``repair``, ``chroma``, ``bm25index``,
``pending`` (the embedding queue), ``manifest``, ``lockfile`` and ``faults``.

The paper library: a folder holding a Chroma store (papers, metadata, vectors) and the BM25
index beside it. The same code drives an embedded ``PersistentClient`` and a ``chroma run``
server (``HttpClient``); only the client differs.

Writes go to Chroma in batches, so a killed import keeps every fully written batch; the BM25
index is derived from what Chroma holds and is rebuilt whenever it does not match.

What one library folder supports: any number of readers (processes or threads) and one writer
at a time. Writers (import, embed, remove, repair; CLI or app) take a cross-process lock on the
folder, so a second writer waits for the first (Chroma's embedded store is single-process and
silently loses vectors otherwise). Several writers at once need a Chroma server (``chroma run``);
each folder then gets its own collection on it. The manifest (``library.json``) records the
generation and how many papers the store should hold: readers notice a newer generation and
reload BM25 and the dedupe keys, and a vanished or truncated store is reported, never read as an
empty library (``citefinder library repair`` accepts what is left and rebuilds the rest).

BM25 is rebuilt only when the stored papers changed, and then whole (bm25s cannot add documents):
:mod:`citefinder.library.store.core` says when and at what cost.
"""

from __future__ import annotations

import logging
import shutil
import weakref
from pathlib import Path
from typing import Any

from citefinder.config import Settings
from citefinder.errors import LibraryError, StoreUnavailableError
from citefinder.library.encoders.embedder import Embedder, resolve_device
from citefinder.library.sample_file import MARKED
from citefinder.library.store.chroma import (
    check_embedder,
    check_store_files,
    collection_name,
    open_collection,
    papers_of,
    read_only_copy,
    where,
    writable,
)
from citefinder.library.store.core import BM25_DIR
from citefinder.library.store.lockfile import FolderLock
from citefinder.library.store.manifest import read_manifest, write_manifest
from citefinder.library.store.pending import PendingQueue
from citefinder.library.store.repair import LibraryRepairs
from citefinder.library.store.writes import Progress
from citefinder.types import Hit, Paper

log = logging.getLogger(__name__)


def salvage_store(path: Path) -> tuple[list[Paper], str] | None:
    """For a repair: a damaged chroma.sqlite3's papers (those it still holds) and the store set aside, with the
    line that says so; None when the file is sound."""
    from citefinder.library.store.chroma_files import damaged_store, salvage_papers, set_aside

    if (why := damaged_store(path)) is None:
        return None
    papers, lost = salvage_papers(path)
    aside = set_aside(path)
    log.warning("chroma.sqlite3 of %s was damaged (%s); set aside to %s", path, why, aside)
    return papers, (f"the Chroma store file chroma.sqlite3 was damaged ({why}); set the store aside to {aside.name} "
                    f"(delete it once the library works) and stored again the {len(papers)} papers it still held"
                    + (f" ({lost} records could not be read)" if lost else ""))


__all__ = ["BM25_DIR", "Library", "Progress", "delete_library"]


class Library(LibraryRepairs):
    """Open with :meth:`open`. Thread-safe for concurrent readers; writes are serialised across
    threads and processes (see the module docstring for what one folder supports). Its parts, by job:
    :mod:`~citefinder.library.store.core` (state, reads, commits), :mod:`~citefinder.library.store.writes`,
    :mod:`~citefinder.library.store.repair`, :mod:`~citefinder.library.store.chroma` (client and collection)."""

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None, repair: bool = False) -> "Library":
        """Open (or create) the library folder named by ``settings.library``.

        Raises LibraryDamagedError when the store holds fewer papers than the manifest says it
        should (a deleted or truncated store); ``repair=True`` accepts what is there instead and
        rebuilds BM25 and the manifest from it (see :meth:`repair`).
        """
        path = Path(settings.library)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            if not path.is_dir():
                raise LibraryError(f"Cannot create the library folder {path}: {e}") from e
        embedder = embedder or Embedder(settings.embedder, settings.embed_max_seq_length, settings.embed_batch_size)
        manifest = read_manifest(path)
        check_embedder(path, manifest, embedder)
        read_only = not writable(path)
        if read_only and repair:
            raise StoreUnavailableError(f"The library folder {path} is read-only; it can be searched but not repaired.")
        if not repair:
            check_store_files(settings, path, manifest)
        queue_log = PendingQueue(path).salvage() if repair else []
        salvaged = salvage_store(path) if repair and not settings.chroma_host and not read_only else None
        store_path = read_only_copy(path) if read_only and not settings.chroma_host else None
        name = collection_name(settings, path, manifest)
        # Two processes creating one new store at once race inside Chroma ("table collections already exists").
        creating = FolderLock(path) if not manifest and not read_only else None
        if creating:
            creating.acquire()
        try:
            client, collection = open_collection(settings, name, embedder, store_path or path)
        except BaseException:
            if store_path is not None:
                shutil.rmtree(store_path, ignore_errors=True)
            raise
        finally:
            if creating:
                creating.release()
        lib = cls(settings, client, collection, embedder, collection_name=name, read_only=read_only,
                  store_path=store_path)
        if store_path is not None:
            weakref.finalize(lib, shutil.rmtree, str(store_path), True)
        if not read_only and not manifest:
            with lib.writing():
                if not read_manifest(path):
                    write_manifest(path, {"version": 1, "embedder": embedder.spec.to_dict(), "collection": name,
                                          "generation": 0, "dirty": False, MARKED: True,
                                          "papers": lib.count(), "embedded": lib.embedded_count()})
        if salvaged is not None:  # a damaged chroma.sqlite3 set aside: what it held is stored again
            papers, line = salvaged
            lib.add_papers(papers)
            queue_log.append(line)
        if repair:
            lib.repair_log = queue_log + lib.repair()
        else:
            lib.check_counts()
            lib.warn_missing_vectors()
        lib.ensure_bm25()
        return lib

    def bm25_search(self, text: str, k: int) -> list[Hit]:
        return self.ensure_bm25().search(text, k)

    def hnsw_search(self, vector: Any, k: int) -> list[Hit]:
        """Nearest embedded papers to a query vector by Chroma's approximate HNSW index (a wide search);
        :func:`citefinder.index.vectors.vector_search` searches exactly up to ``exact_dense_max`` papers."""
        n = self.embedded_count()
        if n == 0 or k <= 0:
            return []
        res = self._collection.query(query_embeddings=[list(map(float, vector))], n_results=min(k, n),
                                     include=["distances"])
        ids, dists = res["ids"][0], res["distances"][0]
        return [Hit(i, r, 1.0 - float(d)) for r, (i, d) in enumerate(zip(ids, dists, strict=True), start=1)]

    def stats(self) -> dict[str, Any]:
        manifest = read_manifest(self.path)
        return {
            "library": str(self.path.resolve()),
            "mode": where(self.settings) + (" (read-only folder: searching a copy)" if self.read_only else ""),
            "collection": self.collection_name,
            "papers": self.count(),
            "awaiting_vectors": self.pending_count(),
            "bm25_documents": len(self.ensure_bm25()),
            "embedder": self.embedder.spec.to_dict(),
            "embedder_device": embeds_on(self.embedder),
            "generation": manifest.get("generation", 0),
            **_memory_counts(self),
            "disk_bytes": _du(self.path),
        }

    def by_key(self, key: str) -> Paper | None:
        """The paper whose citation key (:attr:`Paper.key`) is ``key``, or None.

        Keys are the user's (BibTeX entry key, CSL-JSON ``citation-key``/``id``, JSONL ``key``);
        papers imported without one have none here (exports generate one, see citefinder.library.bibtex).
        """
        if not key:
            return None
        res = self._collection.get(where={"key": key}, limit=1, include=["metadatas", "documents"])
        if res["ids"]:
            return papers_of(res)[0]
        return self._pending.find_key(key)


    def ids_from(self, source: str) -> list[str]:
        """The doc_ids of the papers imported from the file named ``source`` (:attr:`Paper.source`)."""
        res = self._collection.get(where={"source": source}, include=[])
        return list(dict.fromkeys(list(res["ids"]) + self._pending.ids_from(source)))  # a landed batch: once


def _memory_counts(library: Library) -> dict[str, Any]:
    """The citation-context memory's counts (contexts held, library papers cited at least once), or why
    they cannot be read."""
    from citefinder.library.contexts.api import memory_counts

    try:
        return memory_counts(library)
    except LibraryError as e:
        return {"contexts": f"unreadable: {e}"}


def embeds_on(embedder: Embedder) -> str:
    """Where ``embedder`` embeds: the device its loaded model runs on, else the one it would take (its device
    resolved as `library embed` resolves it, without loading the model): "cpu" or "cuda (NVIDIA H100 ...)"."""
    device = embedder.device_used or resolve_device(embedder.device, embedder.name)
    if device != "cuda":
        return device
    import torch

    return f"cuda ({torch.cuda.get_device_name(0)})"


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def delete_library(path: Path) -> None:
    """Remove an embedded library folder (used by tests and the app's reset)."""
    shutil.rmtree(path, ignore_errors=True)

