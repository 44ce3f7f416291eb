"""The paper library: a folder holding a Chroma store (papers, metadata, vectors) and the BM25
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

BM25 is rebuilt only when the stored papers changed: a write that adds nothing (all duplicates, an
empty file, removing an unknown id) keeps the saved index and the generation. A change rebuilds the
whole index: bm25s stores precomputed scores that depend on every document (IDF, average length)
and has no way to add documents, so there is no incremental update. Measured cost: 5-8 s per
10,000 papers for the tokenising and indexing alone on a busy 2-core machine (issue 14 measured
about 10 s for a 50k library on a quiet one, reading the papers from Chroma included).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time
import weakref
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from citefinder.config import Settings
from citefinder.errors import (
    CitefinderError,
    EmbedderMismatchError,
    ImportAbortedError,
    ImportInterrupted,
    LibraryDamagedError,
    LibraryError,
    StoreUnavailableError,
)
from citefinder.library import faults
from citefinder.library.bm25index import BM25Index, bm25_text
from citefinder.library.chroma_records import embedding_text, from_record, to_metadata, to_update_metadata
from citefinder.library.dedupe import dedupe_keys, normalize_title
from citefinder.library.derived import DerivedIndexes, IndexKind
from citefinder.library.embedder import CitefinderEmbeddingFunction, Embedder
from citefinder.library.formats.common import RecordError
from citefinder.library.lockfile import FolderLock
from citefinder.library.manifest import MANIFEST, read_manifest, write_manifest
from citefinder.library.pending import FILE as PENDING_FILE
from citefinder.library.pending import PendingQueue
from citefinder.library.validate import checked_paper
from citefinder.types import Hit, ImportFailure, ImportReport, Paper

log = logging.getLogger(__name__)

Progress = Callable[[int, "int | None"], None]


class Identity(NamedTuple):
    """What a dedupe key points to: the stored paper and what tells same-titled works apart."""

    doc_id: str
    year: int | None
    first_author: str | None

BM25_DIR = "bm25"
CHROMA_DIR = "chroma"
WRITE_BATCH = 256
# Above ``exact_dense_max`` papers the dense agent uses Chroma's HNSW index; a search width of 256
# (Chroma's default is 100) keeps its recall of a top 100 close to exact search.
HNSW_EF_SEARCH = 256
_PAGE = 5000
# At most this many papers a query for all vectors missed are re-checked one by one with their own
# vector; more missing than that is a lost index (library repair), not approximate search.
_CONFIRM_MAX = 64


class Library:
    """Open with :meth:`open`. Thread-safe for concurrent readers; writes are serialised across
    threads and processes (see the module docstring for what one folder supports)."""

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
        self._derived = DerivedIndexes(self.path)  # agents' indexes (titles, names, vectors), per generation
        self._vector_check: tuple[int, int, int] | None = None  # (generation, records, vectors indexed)
        self.repair_log: list[str] = []  # what ``open(repair=True)`` did, one line each

    # --- opening --------------------------------------------------------------------------------

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
        _check_embedder(path, manifest, embedder)
        read_only = not _writable(path)
        if read_only and repair:
            raise StoreUnavailableError(f"The library folder {path} is read-only; it can be searched but not repaired.")
        if not repair:
            _check_store_files(settings, path, manifest)
        store_path = _read_only_copy(path) if read_only and not settings.chroma_host else None
        name = _collection_name(settings, path, manifest)
        # Two processes creating one new store at once race inside Chroma ("table collections already exists").
        creating = FolderLock(path) if not manifest and not read_only else None
        if creating:
            creating.acquire()
        try:
            client = _make_client(settings, store_path or path, fresh=True)
            ef = CitefinderEmbeddingFunction(embedder)
            collection = client.get_or_create_collection(
                name,
                embedding_function=ef,
                configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}},
                metadata={"embedder": embedder.name, "max_seq_length": embedder.max_seq_length},
            )
        except CitefinderError:
            if store_path is not None:
                shutil.rmtree(store_path, ignore_errors=True)
            raise
        except Exception as e:  # noqa: BLE001 - chroma raises many kinds; one clear message
            if store_path is not None:
                shutil.rmtree(store_path, ignore_errors=True)
            raise LibraryError(f"Cannot open the Chroma collection {name!r} ({_where(settings)}): {e}") from e
        finally:
            if creating:
                creating.release()
        meta = collection.metadata or {}
        if meta.get("embedder") not in (None, embedder.name) or meta.get("max_seq_length") not in (
            None,
            embedder.max_seq_length,
        ):
            raise EmbedderMismatchError(
                f"The collection {name!r} holds vectors made by embedder {meta.get('embedder')!r} "
                f"(max_seq_length {meta.get('max_seq_length')}), but {embedder.name!r} "
                f"(max_seq_length {embedder.max_seq_length}) is configured. Set CITEFINDER_EMBEDDER / "
                "CITEFINDER_EMBED_MAX_SEQ_LENGTH to match, or use a new library folder."
            )
        lib = cls(settings, client, collection, embedder, collection_name=name, read_only=read_only,
                  store_path=store_path)
        if store_path is not None:
            weakref.finalize(lib, shutil.rmtree, str(store_path), True)
        if not read_only and not manifest:
            with lib._writing():
                if not read_manifest(path):
                    write_manifest(path, {"version": 1, "embedder": embedder.spec.to_dict(), "collection": name,
                                          "generation": 0, "dirty": False,
                                          "papers": lib.count(), "embedded": lib.embedded_count()})
        if repair:
            lib.repair_log = lib.repair()
        else:
            lib._check_counts()
            lib._warn_missing_vectors()
        lib._ensure_bm25()
        return lib

    # --- reading --------------------------------------------------------------------------------

    def count(self) -> int:
        """Papers in the library, including those still waiting for their dense vectors."""
        return self.embedded_count() + self._pending.count()

    def embedded_count(self) -> int:
        """Papers the dense agent can find (their vectors are in Chroma)."""
        return int(self._collection.count())

    def pending_count(self) -> int:
        """Papers searchable by BM25 only until :meth:`embed_pending` has embedded them."""
        return self._pending.count()

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

    def bm25_search(self, text: str, k: int) -> list[Hit]:
        return self._ensure_bm25().search(text, k)

    def dense_search(self, text: str, k: int) -> list[Hit]:
        """Nearest papers by cosine similarity of the embedded query (embedded papers only)."""
        if not text.strip() or k <= 0 or self.embedded_count() == 0:
            return []
        return self.vector_search(self.embedder.encode([text])[0], k)

    def vector_search(self, vector: Any, k: int) -> list[Hit]:
        """Nearest papers to a query vector: exact cosine over all stored vectors up to
        ``settings.exact_dense_max`` papers (the same query gives the same list every time), Chroma's
        approximate HNSW index with a wide search above that."""
        n = self.embedded_count()
        if n == 0 or k <= 0:
            return []
        if n <= self.settings.exact_dense_max:
            from citefinder.library.vectors import VECTORS

            return self.derived(VECTORS).search(vector, k)
        res = self._collection.query(query_embeddings=[list(map(float, vector))], n_results=min(k, n),
                                     include=["distances"])
        ids, dists = res["ids"][0], res["distances"][0]
        return [Hit(i, r, 1.0 - float(d)) for r, (i, d) in enumerate(zip(ids, dists, strict=True), start=1)]

    def generation(self) -> str:
        """Changes whenever the stored papers change: what derived indexes are stamped with."""
        return self._stamp()

    def derived(self, kind: IndexKind) -> Any:
        """A derived index (see :mod:`citefinder.library.derived`) for the current papers."""
        return self._derived.get(kind, self)

    def iter_vectors(self, page: int = _PAGE) -> Iterator[tuple[list[str], Any]]:
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
            papers = [from_record(i, m, d)
                      for i, m, d in zip(res["ids"], res["metadatas"] or [], res["documents"] or [], strict=False)]
        if len(papers) < limit:
            papers += self._pending.take(limit - len(papers), max(0, offset - embedded))
        return papers

    def iter_papers(self, page: int = _PAGE) -> Iterator[Paper]:
        offset = 0
        while True:
            batch = self.browse(offset, page)
            if not batch:
                return
            yield from batch
            offset += len(batch)

    def stats(self) -> dict[str, Any]:
        manifest = read_manifest(self.path)
        return {
            "library": str(self.path.resolve()),
            "mode": _where(self.settings) + (" (read-only folder: searching a copy)" if self.read_only else ""),
            "collection": self.collection_name,
            "papers": self.count(),
            "awaiting_vectors": self.pending_count(),
            "bm25_documents": len(self._ensure_bm25()),
            "embedder": self.embedder.spec.to_dict(),
            "generation": manifest.get("generation", 0),
            "disk_bytes": _du(self.path),
        }

    def problems(self) -> list[str]:
        """What is wrong with this library now (counts that disagree, an index to rebuild); [] when healthy."""
        manifest = read_manifest(self.path)
        found: list[str] = []
        if not manifest:
            found.append(f"the manifest {self.path / MANIFEST} is missing or damaged")
        if manifest.get("dirty") and self._folder_lock.acquire(blocking=False):
            self._folder_lock.release()
            found.append("an earlier write did not finish (the process was killed or lost its store)")
        n = self.count()
        if manifest and not manifest.get("dirty") and "papers" in manifest and manifest["papers"] != n:
            found.append(f"the manifest expects {manifest['papers']} papers but the store holds {n}")
        bm25 = self._ensure_bm25()
        if len(bm25) != n:
            found.append(f"the BM25 index holds {len(bm25)} papers but the store holds {n}")
        missing = self._missing_vector_count()
        if missing:
            found.append(_missing_vectors_text(missing, self.embedded_count()))
        return found

    # --- writing --------------------------------------------------------------------------------

    def add_papers(
        self,
        papers: Iterable[Paper | ImportFailure],
        *,
        progress: Progress | None = None,
        total: int | None = None,
        defer_embedding: bool = False,
    ) -> ImportReport:
        """Add papers, skipping duplicates (DOI, arXiv id, then normalised title) of stored or earlier ones.

        Papers are checked (:func:`citefinder.library.validate.checked_paper`: a bad one becomes an
        ImportFailure), embedded and written in batches; the BM25 index is rebuilt once at the end.
        With ``defer_embedding`` they are only queued (no model runs): BM25 finds them as soon as
        the import ends, and :meth:`embed_pending` adds their vectors later, resumably.
        ``ImportFailure`` items in the stream are passed through into the report.

        A dedupe key is remembered only once its paper is stored, so a failed write can be retried.
        Raises ImportAbortedError (ImportInterrupted on Ctrl-C) saying how many papers were stored
        when the disk, the server or the user stops the import.
        """
        t0 = time.perf_counter()
        added: list[str] = []
        failures: list[ImportFailure] = []
        dupes = 0
        with self._writing():
            keys = self._dedupe_keys()
            before = self.count()
            batch: list[tuple[Paper, tuple[str, ...], Identity]] = []
            batch_keys: dict[str, Identity] = {}  # keys of papers in the batch not yet stored
            fresh: set[str] = set()  # doc_ids added by this call
            rekey: dict[str, str] = {}  # stored doc_id -> the citation key a re-import gives it
            self._mark_dirty(True)
            try:
                for seen, item in enumerate(papers, start=1):
                    if isinstance(item, ImportFailure):
                        failures.append(item)
                    else:
                        try:
                            paper = checked_paper(item)
                        except RecordError as e:
                            failures.append(ImportFailure(_source(item), f"record {e}"))
                            paper = None
                        if paper is not None:
                            pkeys = dedupe_keys(paper) + (f"id:{paper.doc_id}",)
                            who = _identity(paper)
                            known = [keys.get(k) or batch_keys.get(k) for k in pkeys]
                            match = next((m for k, m in zip(pkeys, known, strict=True) if _same_paper(k, m, who)), None)
                            if match is not None:
                                dupes += 1
                                if paper.key and match.doc_id not in fresh:  # a re-imported .bib updates the key
                                    rekey[match.doc_id] = paper.key
                            else:
                                fresh.add(paper.doc_id)
                                for k in pkeys:
                                    batch_keys.setdefault(k, who)
                                batch.append((paper, pkeys, who))
                    if len(batch) >= WRITE_BATCH:
                        self._store_batch(batch, keys, added, failures, defer_embedding)
                        batch, batch_keys = [], {}
                    if progress:
                        progress(seen, total)
                if batch:
                    self._store_batch(batch, keys, added, failures, defer_embedding)
                if rekey:
                    self._set_keys(rekey)
            except BaseException as e:
                # an interrupt can land between a batch reaching the store and its bookkeeping: count the store
                stored = self._stored_since(before, len(added))
                report = ImportReport(stored, dupes, tuple(failures), tuple(added), time.perf_counter() - t0)
                self._finish_after_failure(changed=bool(stored))
                raise self._aborted(e, report, "import") from e
            self._commit(changed=bool(added) or bool(rekey))
        return ImportReport(len(added), dupes, tuple(failures), tuple(added), time.perf_counter() - t0)

    def import_files(
        self, paths: Sequence[Path | str], *, progress: Progress | None = None, defer_embedding: bool = False,
        on_read: Callable[[Paper], None] | None = None,
    ) -> ImportReport:
        """Import BibTeX, JSONL(.gz), CSL-JSON and PDF files (see :mod:`citefinder.library.readers`).

        ``on_read`` sees every record read, stored or not (:mod:`citefinder.library.review` matches the
        skipped ones to what they duplicate)."""
        from citefinder.library.readers import read_papers

        total = sum(_estimate_records(Path(p)) or 0 for p in paths) or None

        def stream() -> Iterator[Paper | ImportFailure]:
            for p in paths:
                p = Path(p)
                if not p.exists():
                    yield ImportFailure(str(p), "file not found")
                    continue
                try:
                    for item in read_papers(p):
                        if on_read is not None and isinstance(item, Paper):
                            on_read(item)
                        yield item
                except Exception as e:  # noqa: BLE001 - a broken file must not stop the others
                    log.exception("reading %s failed", p)
                    yield ImportFailure(p.name, f"could not read the file: {e}")

        return self.add_papers(stream(), progress=progress, total=total, defer_embedding=defer_embedding)

    def embed_pending(self, *, progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> int:
        """Embed queued papers batch by batch into Chroma; returns how many were embedded.

        Safe to interrupt and re-run: a batch leaves the queue only after Chroma holds it. A queued
        paper Chroma cannot store (bad metadata from an older version) is logged and dropped, so
        the queue always empties.
        """
        done = 0
        total = self._pending.count()
        with self._writing():
            self._mark_dirty(True)
            try:
                while not (should_stop and should_stop()):
                    batch = self._pending.take(WRITE_BATCH)
                    if not batch:
                        break
                    already = {p.doc_id for p in self._chroma_get([p.doc_id for p in batch])}
                    todo: list[tuple[Paper, tuple[str, ...], Identity]] = [
                        (p, (), _identity(p)) for p in batch if p.doc_id not in already]
                    if todo:
                        failures: list[ImportFailure] = []
                        self._store_batch(todo, None, [], failures, False)
                        for f in failures:
                            log.warning("dropped from the embedding queue: %s: %s", f.source, f.reason)
                    self._pending.remove([p.doc_id for p in batch])
                    done += len(batch)
                    if progress:
                        progress(done, total)
            except BaseException as e:
                self._finish_after_failure(changed=bool(done))
                left = f"{done} papers were embedded and the others still wait in the queue"
                if faults.classify(e) == faults.INTERRUPTED:
                    raise ImportInterrupted(
                        f"Interrupted: {left}; run `citefinder library embed` again to resume."
                    ) from e
                if isinstance(e, CitefinderError):
                    raise
                raise StoreUnavailableError(faults.explain(e, where=_where(self.settings), kept=left,
                                                           resume="run `citefinder library embed` again")) from e
            self._commit(changed=bool(done))
        return done

    def remove(self, doc_ids: Sequence[str]) -> int:
        """Remove papers by doc_id; returns how many existed."""
        with self._writing():
            present = [p.doc_id for p in self.get(doc_ids)]
            if not present:
                return 0
            self._mark_dirty(True)
            try:
                in_chroma = [p.doc_id for p in self._chroma_get(present)]
                if in_chroma:
                    self._collection.delete(ids=in_chroma)
                self._pending.remove(present)
            except BaseException as e:
                self._keys = None
                self._finish_after_failure(changed=True)
                if isinstance(e, (CitefinderError, KeyboardInterrupt)):
                    raise
                raise StoreUnavailableError(faults.explain(
                    e, where=_where(self.settings), kept="some of the papers may have been removed",
                    resume="run the removal again")) from e
            self._keys = None
            self._commit(changed=True)
            return len(present)

    # --- citation keys and in-place updates (issue 11) -------------------------------------------

    def by_key(self, key: str) -> Paper | None:
        """The paper whose citation key (:attr:`Paper.key`) is ``key``, or None.

        Keys are the user's (BibTeX entry key, CSL-JSON ``citation-key``/``id``, JSONL ``key``);
        papers imported without one have none here (exports generate one, see citefinder.bibtex).
        """
        if not key:
            return None
        res = self._collection.get(where={"key": key}, limit=1, include=["metadatas", "documents"])
        if res["ids"]:
            return from_record(res["ids"][0], res["metadatas"][0], res["documents"][0])
        return self._pending.find_key(key)

    def match(self, paper: Paper) -> str | None:
        """The doc_id of the stored paper that ``paper`` duplicates (the rule of :meth:`add_papers`), or None."""
        with self._write_lock:
            keys = self._dedupe_keys()
            who = _identity(paper)
            pkeys = dedupe_keys(paper) + (f"id:{paper.doc_id}",)
            return next((keys[k].doc_id for k in pkeys if _same_paper(k, keys.get(k), who)), None)

    def update_papers(self, papers: Sequence[Paper]) -> int:
        """Rewrite stored papers (matched by doc_id) with the given records; unknown doc_ids are skipped.

        Only papers whose embedded text (title, abstract) changed are embedded again; the rest get
        their metadata replaced in place. Returns how many papers were embedded.
        """
        new = {p.doc_id: p for p in papers}
        if not new:
            return 0
        with self._writing():
            old = {p.doc_id: p for p in self._chroma_get(list(new))}
            queued = self._pending.get([i for i in new if i not in old])
            if not old and not queued:
                return 0
            same = [new[i] for i in old if embedding_text(old[i]) == embedding_text(new[i])]
            changed = [new[i] for i in old if embedding_text(old[i]) != embedding_text(new[i])]
            self._mark_dirty(True)
            try:
                if same:  # no documents: Chroma would embed them itself (and the abstract did not change)
                    self._collection.update(
                        ids=[p.doc_id for p in same],
                        metadatas=[to_update_metadata(p, norm_title=normalize_title(p.title)) for p in same],
                    )
                if changed:
                    vectors = self.embedder.encode([embedding_text(p) for p in changed])
                    self._collection.update(
                        ids=[p.doc_id for p in changed],
                        embeddings=vectors.tolist(),
                        metadatas=[to_update_metadata(p, norm_title=normalize_title(p.title)) for p in changed],
                        documents=[p.abstract for p in changed],
                    )
                if queued:
                    self._pending.replace([new[i] for i in queued])
            except BaseException:
                self._keys = None
                self._finish_after_failure(changed=True)
                raise
            self._keys = None
            self._commit(changed=True)
            return len(changed)

    def _set_keys(self, keys: dict[str, str]) -> None:
        """Give stored papers (doc_id -> key) a new citation key, without embedding anything."""
        stored = [p for p in self.get(list(keys)) if p.key != keys[p.doc_id]]
        if not stored:
            return
        log.info("updating the citation key of %d stored papers", len(stored))
        renamed = [replace(p, key=keys[p.doc_id]) for p in stored]
        in_chroma = {p.doc_id for p in self._chroma_get([p.doc_id for p in renamed])}
        if in_chroma:
            self._collection.update(ids=sorted(in_chroma), metadatas=[{"key": keys[i]} for i in sorted(in_chroma)])
        self._pending.replace([p for p in renamed if p.doc_id not in in_chroma])

    def repair(self) -> list[str]:
        """Rebuild what can be rebuilt from the stored papers (BM25, dedupe keys, manifest counts);
        returns what was done, one line each. Accepts the store as it now is."""
        done: list[str] = []
        with self._writing():
            restored = self._restore_vectors()
            if restored:
                done.append(f"re-embedded {restored} papers whose vectors were missing from Chroma's vector index")
            before = read_manifest(self.path)
            n = self.count()
            if before.get("papers") not in (None, n):
                done.append(f"the store holds {n} papers (the manifest expected {before.get('papers')}); kept as is")
            self._keys = None
            manifest = dict(before) or {"version": 1, "embedder": self.embedder.spec.to_dict()}
            manifest.setdefault("collection", self.collection_name)
            manifest["generation"] = int(manifest.get("generation", 0)) + 1
            manifest["dirty"] = True
            write_manifest(self.path, manifest)
            self._rebuild_bm25(str(manifest["generation"]))
            done.append(f"rebuilt the BM25 index over {len(self._bm25 or [])} papers")
            self._record_state(manifest)
            done.append(f"rewrote the manifest (generation {manifest['generation']}, {n} papers, "
                        f"{self.pending_count()} awaiting vectors)")
        return done

    # --- vector index check and restore (issue 14) -----------------------------------------------
    # Chroma keeps records, metadata and documents in chroma.sqlite3 but, once its write-ahead queue
    # is flushed (every 1,000 writes), the vectors only in the HNSW segment folder beside it. Lose
    # that folder and count() still says N while the index holds only what the queue replays: dense
    # search (HNSW, and the exact VECTORS matrix, which reads its vectors from the same segment)
    # silently misses the rest. Records and indexed vectors are therefore checked against each other.

    def _indexed_ids(self) -> set[str]:
        """The ids Chroma's vector index holds: a query for every vector it holds, then, for the few
        that query missed, a read of the paper's own vector (HNSW is approximate: on near-duplicate
        papers a query for all n returned n - 1 of a healthy index)."""
        n = self.embedded_count()
        if n == 0:
            return set()
        probe = self.embedder.encode(["vector index check"])[0]
        res = self._collection.query(query_embeddings=[list(map(float, probe))], n_results=n, include=[])
        found = set(res["ids"][0])
        if len(found) < n:
            unseen = [i for i in self._stored_ids() if i not in found]
            found |= {i for i in unseen[:_CONFIRM_MAX] if self._has_vector(i)}
        return found

    def _stored_ids(self) -> list[str]:
        """The ids of every paper in Chroma (embedded ones), read a page at a time."""
        ids: list[str] = []
        while page := list(self._collection.get(offset=len(ids), limit=_PAGE, include=[])["ids"]):
            ids += page
        return ids

    def _read_vectors(self, **where: Any) -> Any:
        """Chroma's ``get`` of the selected papers' vectors, or None when reading them fails (Chroma:
        "Error finding id" when its vector segment lacks them); a failure of the store itself is raised."""
        try:
            return self._collection.get(include=["embeddings"], **where)
        except Exception as e:  # noqa: BLE001 - Chroma: "Error finding id" when the segment lacks it
            if faults.is_environmental(e):
                raise
            log.debug("reading stored vectors (%s) failed: %s", where, e)
            return None

    def _has_vector(self, doc_id: str) -> bool:
        """Does Chroma's vector segment hold this paper's vector? (Reading it fails, or gives none, when
        the segment lacks it; a query with it would be approximate: on a thousand near-duplicate papers
        HNSW did not return a healthy paper even for its own vector.)"""
        got = self._read_vectors(ids=[doc_id])
        return got is not None and got["embeddings"] is not None and len(got["embeddings"]) == 1

    def _missing_vector_count(self) -> int:
        """Stored papers whose vectors Chroma's index lacks (checked once per generation)."""
        generation, n = int(self._stamp()), self.embedded_count()
        if self._vector_check is None or self._vector_check[:2] != (generation, n):
            self._vector_check = (generation, n, len(self._indexed_ids()) if n else 0)
        return n - self._vector_check[2]

    def _vectors_unreadable(self) -> bool:
        """A cheap check on open: can the vectors of the first, middle and last stored paper be read?"""
        n = self.embedded_count()
        for offset in sorted({0, n // 2, n - 1}) if n else ():
            res = self._read_vectors(offset=offset, limit=1)
            if res is None or (res["ids"] and (res["embeddings"] is None or len(res["embeddings"]) != len(res["ids"]))):
                return True
        return False

    def _warn_missing_vectors(self) -> None:
        """On open: name missing vectors (and how to restore them) instead of searching without them."""
        if not self._vectors_unreadable():
            return
        missing = self._missing_vector_count()
        if missing:
            log.warning("The library at %s: %s.", self.path, _missing_vectors_text(missing, self.embedded_count()))

    def _restore_vectors(self) -> int:
        """Re-embed stored papers whose vectors are missing from the index; returns how many.

        Chroma's ``update`` does not re-insert a vector the index lost, so each such paper goes
        through the pending queue: queued, deleted from Chroma, then embedded and added again by
        :meth:`embed_pending`. A run killed on the way loses nothing (the queue holds the paper; a
        re-run of the repair or of ``library embed`` finishes).
        """
        if self._missing_vector_count() == 0:  # cached for this generation: problems() reuses it
            return 0
        present = self._indexed_ids()
        missing = [i for i in self._stored_ids() if i not in present]
        log.warning("re-embedding %d papers whose vectors are missing from Chroma's vector index", len(missing))
        self._mark_dirty(True)
        for start in range(0, len(missing), WRITE_BATCH):
            chunk = missing[start:start + WRITE_BATCH]
            self._pending.add(self._chroma_get(chunk))
            self._collection.delete(ids=chunk)
        self._vector_check = None
        self.embed_pending()
        return len(missing)

    # --- internals ------------------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
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
            yield

    def _chroma_get(self, doc_ids: Sequence[str]) -> list[Paper]:
        res = self._collection.get(ids=list(doc_ids), include=["metadatas", "documents"])
        return [from_record(i, m, d)
                for i, m, d in zip(res["ids"], res["metadatas"] or [], res["documents"] or [], strict=False)]

    def _store_batch(
        self,
        batch: list[tuple[Paper, tuple[str, ...], Identity]],
        keys: dict[str, Identity] | None,
        added: list[str],
        failures: list[ImportFailure],
        defer: bool,
    ) -> None:
        """Write a batch; remember its dedupe keys only for papers that were stored.

        A failure the store blames on the records (not the disk, server or user) is retried paper
        by paper, so one unstorable paper costs only itself.
        """
        write = self._queue_batch if defer else self._write_batch
        papers = [p for p, _, _ in batch]
        try:
            stored = set(write(papers))
        except Exception as e:  # noqa: BLE001 - sorted below: environmental errors stop the import
            if faults.is_environmental(e) or isinstance(e, CitefinderError):
                raise
            log.warning("writing a batch of %d papers failed (%s); writing them one by one", len(papers), e)
            stored = set()
            for p in papers:
                try:
                    stored.update(write([p]))
                except Exception as e1:  # noqa: BLE001
                    if faults.is_environmental(e1) or isinstance(e1, CitefinderError):
                        raise
                    failures.append(ImportFailure(_source(p), f"could not be stored: {type(e1).__name__}: {e1}"))
        for p, pkeys, who in batch:
            if p.doc_id in stored:
                added.append(p.doc_id)
                if keys is not None:
                    for k in pkeys:
                        keys.setdefault(k, who)

    def _queue_batch(self, batch: list[Paper]) -> list[str]:
        self._pending.add(batch)
        return [p.doc_id for p in batch]

    def _write_batch(self, batch: list[Paper]) -> list[str]:
        vectors = self.embedder.encode([embedding_text(p) for p in batch])
        self._collection.add(
            ids=[p.doc_id for p in batch],
            embeddings=vectors.tolist(),
            metadatas=[to_metadata(p, norm_title=normalize_title(p.title)) for p in batch],
            documents=[p.abstract for p in batch],
        )
        return [p.doc_id for p in batch]

    def _dedupe_keys(self) -> dict[str, Identity]:
        if self._keys is None:
            keys: dict[str, Identity] = {}
            for p in self.iter_papers():
                for k in dedupe_keys(p) + (f"id:{p.doc_id}",):
                    keys.setdefault(k, _identity(p))
            self._keys = keys
        return self._keys

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
        client = _make_client(self.settings, self.path, fresh=True)
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
        self._rebuild_derived()

    def _rebuild_derived(self) -> None:
        """Build the agents' derived indexes for the new generation, so the first query after an import is fast."""
        from citefinder.retrieve.registry import index_kinds

        try:
            self._derived.rebuild(index_kinds(self.settings, self), self)
        except Exception as e:  # noqa: BLE001 - derived data is rebuilt on first use anyway
            log.warning("building derived indexes failed (they are rebuilt on first use): %s", e)

    def _stored_since(self, before: int, counted: int) -> int:
        """Papers this write added, from the store itself when it still answers (else what was counted)."""
        try:
            return max(counted, self.count() - before)
        except Exception:  # noqa: BLE001 - a lost server or full disk: what was counted is all we know
            return counted

    def _finish_after_failure(self, *, changed: bool) -> None:
        """Best effort after a failed write; the first error stays the one reported. When this
        fails too (dead server, full disk) the dirty flag stays set and the next opening rebuilds."""
        try:
            self._commit(changed=changed)
        except BaseException as e:  # noqa: BLE001 - never hide the error that stopped the write
            # info, not warning: the caller reports the first error in one line (what was kept, how to resume)
            log.info("could not update the BM25 index and manifest after the failure (%s: %s); "
                        "they will be rebuilt when the library is next opened", type(e).__name__, e)

    def _aborted(self, error: BaseException, report: ImportReport, what: str) -> BaseException:
        """The exception to raise for an import stopped by ``error``: what was kept and how to resume."""
        kept = f"{report.added} papers of this {what} were stored"
        resume = "run the same import again (papers already stored are skipped as duplicates)"
        if faults.classify(error) == faults.INTERRUPTED:
            return ImportInterrupted(f"Interrupted: {kept}; {resume}.", report)
        if isinstance(error, CitefinderError):
            return error
        return ImportAbortedError(faults.explain(error, where=_where(self.settings), kept=kept, resume=resume), report)

    def _stamp(self) -> str:
        return str(read_manifest(self.path).get("generation", 0))

    def _check_counts(self) -> None:
        """A store holding fewer papers than the last finished write recorded was truncated or lost."""
        manifest = read_manifest(self.path)
        if manifest.get("dirty") or "embedded" not in manifest:
            return
        embedded, pending = self.embedded_count(), self.pending_count()
        expected_pending = int(manifest.get("papers", 0)) - int(manifest["embedded"])
        if embedded < int(manifest["embedded"]) or pending < expected_pending:
            raise LibraryDamagedError(
                f"The library at {self.path} should hold {manifest['papers']} papers ({manifest['embedded']} with "
                f"vectors) but its store holds {embedded + pending} ({embedded} with vectors): part of the store "
                f"({_where(self.settings)}) is missing or damaged. Restore it from a backup, or run "
                "`citefinder library repair` to accept what is left and rebuild the indexes."
            )

    def _ensure_bm25(self) -> BM25Index:
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
        ids, texts = [], []
        for p in self.iter_papers():
            ids.append(p.doc_id)
            texts.append(bm25_text(p))
        index = BM25Index.build(ids, texts)
        if not save:
            self._bm25 = index
            return index
        index.save(self.path / BM25_DIR, stamp=stamp)
        self._bm25 = BM25Index.load(self.path / BM25_DIR) if ids else index
        return self._bm25


def _missing_vectors_text(missing: int, embedded: int) -> str:
    return (f"Chroma's vector index lacks the vectors of {missing} of {embedded} stored papers (its segment "
            "folder beside chroma.sqlite3 is missing or damaged), so dense search cannot find them; run "
            "`citefinder library repair` to re-embed them")


def _identity(p: Paper) -> Identity:
    surname = p.authors[0].split()[-1].casefold() if p.authors and p.authors[0].split() else None
    return Identity(p.doc_id, p.year, surname)


def _same_paper(key: str, stored: Identity | None, new: Identity) -> bool:
    """A shared DOI, arXiv id or doc_id means the same paper; a shared title only when nothing contradicts it.

    Under one normalised title, years more than one apart (a preprint and its proceedings
    version are often a year apart) or different first authors mean different works, e.g.
    LeCun et al.'s "Deep learning" (Nature 2015) and Goodfellow et al.'s "Deep Learning" (2016).
    """
    if stored is None:
        return False
    if not key.startswith("title:"):
        return True
    if stored.year is not None and new.year is not None and abs(stored.year - new.year) > 1:
        return False
    return not (stored.first_author and new.first_author and stored.first_author != new.first_author)


def _make_client(settings: Settings, path: Path, *, fresh: bool = False) -> Any:
    """A Chroma client; ``fresh`` drops this process's cached embedded store for ``path`` first, so
    papers and vectors another process wrote since are seen (the embedded client caches them)."""
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if settings.chroma_host:
            host, _, port = settings.chroma_host.rpartition(":")
            return chromadb.HttpClient(host=host, port=int(port), settings=chroma_settings)
        if fresh:
            # Not stopped: objects other threads still hold keep working on the old one until dropped.
            SharedSystemClient._identifier_to_system.pop(str(path / CHROMA_DIR), None)
        return chromadb.PersistentClient(path=str(path / CHROMA_DIR), settings=chroma_settings)
    except Exception as e:  # noqa: BLE001
        hint = " Is `chroma run` started there?" if settings.chroma_host else ""
        raise LibraryError(f"Cannot connect to the Chroma store ({_where(settings)}): {e}.{hint}") from e


def _where(settings: Settings) -> str:
    if settings.chroma_host:
        return f"server {settings.chroma_host}"
    return f"embedded, {Path(settings.library) / CHROMA_DIR}"


def _check_embedder(path: Path, manifest: dict[str, Any], embedder: Embedder) -> None:
    saved = manifest.get("embedder")
    if not saved:
        return
    if saved.get("name") != embedder.name or saved.get("max_seq_length") != embedder.max_seq_length:
        raise EmbedderMismatchError(
            f"The library at {path} was built with embedder {saved.get('name')!r} "
            f"(max_seq_length {saved.get('max_seq_length')}), but {embedder.name!r} "
            f"(max_seq_length {embedder.max_seq_length}) is configured. Vectors from different embedders "
            "cannot be mixed: set CITEFINDER_EMBEDDER / CITEFINDER_EMBED_MAX_SEQ_LENGTH to match, or use a new "
            "library folder."
        )


def _source(paper: Any) -> str:
    source = getattr(paper, "source", None)
    doc_id = getattr(paper, "doc_id", None)
    return str(source if isinstance(source, str) and source else doc_id if isinstance(doc_id, str) else "record")


def _writable(path: Path) -> bool:
    """Can files be created in ``path``? (``os.access`` says yes to root on a read-only mount.)"""
    try:
        fd, name = tempfile.mkstemp(prefix=".write-test-", dir=path)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def _read_only_copy(path: Path) -> Path:
    """A temporary copy of a read-only folder's store: Chroma's embedded client must write to open one."""
    tmp = Path(tempfile.mkdtemp(prefix="citefinder-readonly-"))
    log.warning("the library folder %s is read-only; searching a temporary copy of its store in %s", path, tmp)
    try:
        if (path / CHROMA_DIR).is_dir():
            shutil.copytree(path / CHROMA_DIR, tmp / CHROMA_DIR)
        if (path / PENDING_FILE).is_file():
            shutil.copy2(path / PENDING_FILE, tmp / PENDING_FILE)
        for f in tmp.rglob("*"):  # the copy keeps the read-only modes; SQLite must write to open it
            f.chmod(f.stat().st_mode | 0o200)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreUnavailableError(f"The library folder {path} is read-only and its store could not be copied "
                                    f"to a temporary folder to search it: {e}") from e
    return tmp


def _check_store_files(settings: Settings, path: Path, manifest: dict[str, Any]) -> None:
    """Before opening: a store file the manifest says holds papers must exist and not be empty."""
    if manifest.get("dirty"):
        return
    papers, embedded = int(manifest.get("papers", 0) or 0), int(manifest.get("embedded", 0) or 0)
    files = []
    if not settings.chroma_host and embedded > 0:
        files.append((path / CHROMA_DIR / "chroma.sqlite3", embedded, "with vectors"))
    if papers - embedded > 0:
        files.append((path / PENDING_FILE, papers - embedded, "awaiting vectors"))
    for file, n, what in files:
        if not file.is_file() or file.stat().st_size == 0:
            state = "missing" if not file.exists() else "empty"
            raise LibraryDamagedError(
                f"The library at {path} should hold {n} papers {what}, but {file} is {state}. Restore the folder "
                "from a backup, or run `citefinder library repair` to accept the loss and rebuild the indexes."
            )


def _collection_name(settings: Settings, path: Path, manifest: dict[str, Any]) -> str:
    """The Chroma collection of this folder: the explicit setting, else the one the manifest names,
    else (on a server, for a new folder) one derived from the folder so folders never share one."""
    if "collection" in settings.model_fields_set:
        return settings.collection
    if manifest.get("collection"):
        return str(manifest["collection"])
    if not settings.chroma_host or manifest:  # embedded, or a library made before folders had their own
        return settings.collection
    digest = hashlib.sha1(str(path.expanduser().resolve()).encode()).hexdigest()[:12]
    return f"{settings.collection}-{digest}"


def _estimate_records(path: Path) -> int | None:
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


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def delete_library(path: Path) -> None:
    """Remove an embedded library folder (used by tests and the app's reset)."""
    shutil.rmtree(path, ignore_errors=True)
