"""The paper library: a folder holding a Chroma store (papers, metadata, vectors) and the BM25
index beside it. The same code drives an embedded ``PersistentClient`` and a ``chroma run``
server (``HttpClient``); only the client differs.

Writes go to Chroma in batches, so a killed import keeps every fully written batch; the BM25
index is derived from what Chroma holds and is rebuilt whenever it does not match.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from citefinder.config import Settings
from citefinder.errors import EmbedderMismatchError, LibraryError
from citefinder.library.bm25index import BM25Index, bm25_text
from citefinder.library.chroma_records import embedding_text, from_record, to_metadata, to_update_metadata
from citefinder.library.dedupe import dedupe_keys, normalize_title
from citefinder.library.derived import DerivedIndexes, IndexKind
from citefinder.library.embedder import CitefinderEmbeddingFunction, Embedder
from citefinder.library.pending import PendingQueue
from citefinder.types import Hit, ImportFailure, ImportReport, Paper

log = logging.getLogger(__name__)

Progress = Callable[[int, "int | None"], None]


class Identity(NamedTuple):
    """What a dedupe key points to: the stored paper and what tells same-titled works apart."""

    doc_id: str
    year: int | None
    first_author: str | None

MANIFEST = "library.json"
BM25_DIR = "bm25"
CHROMA_DIR = "chroma"
WRITE_BATCH = 256
# Above ``exact_dense_max`` papers the dense agent uses Chroma's HNSW index; a search width of 256
# (Chroma's default is 100) keeps its recall of a top 100 close to exact search.
HNSW_EF_SEARCH = 256
_PAGE = 5000


class Library:
    """Open with :meth:`open`. Thread-safe for concurrent readers; writes are serialised."""

    def __init__(self, settings: Settings, client: Any, collection: Any, embedder: Embedder) -> None:
        self.settings = settings
        self.path = Path(settings.library)
        self.embedder = embedder
        self._client = client
        self._collection = collection
        self._write_lock = threading.RLock()
        self._bm25: BM25Index | None = None
        self._keys: dict[str, Identity] | None = None  # dedupe key -> stored paper, built on first write
        self._pending = PendingQueue(self.path)  # stored papers still waiting for their vectors
        self._derived = DerivedIndexes(self.path)  # agents' indexes (titles, names, vectors), per generation

    # --- opening --------------------------------------------------------------------------------

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None) -> "Library":
        """Open (or create) the library folder named by ``settings.library``."""
        path = Path(settings.library)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise LibraryError(f"Cannot create the library folder {path}: {e}") from e
        embedder = embedder or Embedder(settings.embedder, settings.embed_max_seq_length, settings.embed_batch_size)
        manifest = _read_manifest(path)
        _check_embedder(path, manifest, embedder)
        client = _make_client(settings, path)
        ef = CitefinderEmbeddingFunction(embedder)
        try:
            collection = client.get_or_create_collection(
                settings.collection,
                embedding_function=ef,
                configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}},
                metadata={"embedder": embedder.name, "max_seq_length": embedder.max_seq_length},
            )
        except Exception as e:  # noqa: BLE001 - chroma raises many kinds; one clear message
            raise LibraryError(f"Cannot open the Chroma collection {settings.collection!r} ({_where(settings)}): {e}") from e
        meta = collection.metadata or {}
        if meta.get("embedder") not in (None, embedder.name) or meta.get("max_seq_length") not in (
            None,
            embedder.max_seq_length,
        ):
            raise EmbedderMismatchError(
                f"The collection {settings.collection!r} holds vectors made by embedder {meta.get('embedder')!r} "
                f"(max_seq_length {meta.get('max_seq_length')}), but {embedder.name!r} "
                f"(max_seq_length {embedder.max_seq_length}) is configured. Set CITEFINDER_EMBEDDER / "
                "CITEFINDER_EMBED_MAX_SEQ_LENGTH to match, or use a new library folder."
            )
        if not manifest:
            _write_manifest(path, {"version": 1, "embedder": embedder.spec.to_dict(), "generation": 0, "dirty": False})
        lib = cls(settings, client, collection, embedder)
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
        return [Hit(i, r, 1.0 - float(d)) for r, (i, d) in enumerate(zip(ids, dists), start=1)]

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
            papers = [from_record(i, m, d) for i, m, d in zip(res["ids"], res["metadatas"] or [], res["documents"] or [])]
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
        manifest = _read_manifest(self.path)
        return {
            "library": str(self.path.resolve()),
            "mode": _where(self.settings),
            "collection": self.settings.collection,
            "papers": self.count(),
            "awaiting_vectors": self.pending_count(),
            "bm25_documents": len(self._ensure_bm25()),
            "embedder": self.embedder.spec.to_dict(),
            "generation": manifest.get("generation", 0),
            "disk_bytes": _du(self.path),
        }

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

        Papers are embedded and written in batches; the BM25 index is rebuilt once at the end.
        With ``defer_embedding`` they are only queued (no model runs): BM25 finds them as soon as
        the import ends, and :meth:`embed_pending` adds their vectors later, resumably.
        ``ImportFailure`` items in the stream are passed through into the report.
        """
        t0 = time.perf_counter()
        with self._write_lock:
            keys = self._dedupe_keys()
            added: list[str] = []
            failures: list[ImportFailure] = []
            dupes = seen = 0
            batch: list[Paper] = []
            fresh: set[str] = set()  # doc_ids added by this call
            rekey: dict[str, str] = {}  # stored doc_id -> the citation key a re-import gives it
            self._mark_dirty(True)
            try:
                for item in papers:
                    seen += 1
                    if isinstance(item, ImportFailure):
                        failures.append(item)
                    elif not item.title.strip():
                        failures.append(ImportFailure(item.source or item.doc_id, "record has no title"))
                    else:
                        pkeys = dedupe_keys(item) + (f"id:{item.doc_id}",)
                        who = _identity(item)
                        match = next((keys[k] for k in pkeys if _same_paper(k, keys.get(k), who)), None)
                        if match is not None:
                            dupes += 1
                            if item.key and match.doc_id not in fresh:  # a re-imported .bib updates the key
                                rekey[match.doc_id] = item.key
                        else:
                            fresh.add(item.doc_id)
                            for k in pkeys:
                                keys.setdefault(k, who)
                            batch.append(item)
                    if len(batch) >= WRITE_BATCH:
                        added += self._queue_batch(batch) if defer_embedding else self._write_batch(batch)
                        batch = []
                    if progress:
                        progress(seen, total)
                if batch:
                    added += self._queue_batch(batch) if defer_embedding else self._write_batch(batch)
                if rekey:
                    self._set_keys(rekey)
            finally:
                self._commit()
        return ImportReport(len(added), dupes, tuple(failures), tuple(added), time.perf_counter() - t0)

    def import_files(
        self, paths: Sequence[Path | str], *, progress: Progress | None = None, defer_embedding: bool = False
    ) -> ImportReport:
        """Import BibTeX, JSONL(.gz), CSL-JSON and PDF files (see :mod:`citefinder.library.readers`)."""
        from citefinder.library.readers import read_papers

        total = sum(_estimate_records(Path(p)) or 0 for p in paths) or None

        def stream() -> Iterator[Paper | ImportFailure]:
            for p in paths:
                p = Path(p)
                if not p.exists():
                    yield ImportFailure(str(p), "file not found")
                    continue
                try:
                    yield from read_papers(p)
                except Exception as e:  # noqa: BLE001 - a broken file must not stop the others
                    log.exception("reading %s failed", p)
                    yield ImportFailure(p.name, f"could not read the file: {e}")

        return self.add_papers(stream(), progress=progress, total=total, defer_embedding=defer_embedding)

    def embed_pending(self, *, progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> int:
        """Embed queued papers batch by batch into Chroma; returns how many were embedded.

        Safe to interrupt and re-run: a batch leaves the queue only after Chroma holds it.
        """
        done = 0
        total = self._pending.count()
        while not (should_stop and should_stop()):
            with self._write_lock:
                batch = self._pending.take(WRITE_BATCH)
                if not batch:
                    break
                already = {p.doc_id for p in self._chroma_get([p.doc_id for p in batch])}
                todo = [p for p in batch if p.doc_id not in already]
                if todo:
                    self._write_batch(todo)
                self._pending.remove([p.doc_id for p in batch])
            done += len(batch)
            if progress:
                progress(done, total)
        return done

    def remove(self, doc_ids: Sequence[str]) -> int:
        """Remove papers by doc_id; returns how many existed."""
        with self._write_lock:
            present = [p.doc_id for p in self.get(doc_ids)]
            if not present:
                return 0
            self._mark_dirty(True)
            try:
                in_chroma = [p.doc_id for p in self._chroma_get(present)]
                if in_chroma:
                    self._collection.delete(ids=in_chroma)
                self._pending.remove(present)
            finally:
                self._keys = None
                self._commit()
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
        with self._write_lock:
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
            finally:
                self._keys = None
                self._commit()
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

    # --- internals ------------------------------------------------------------------------------

    def _chroma_get(self, doc_ids: Sequence[str]) -> list[Paper]:
        res = self._collection.get(ids=list(doc_ids), include=["metadatas", "documents"])
        return [from_record(i, m, d) for i, m, d in zip(res["ids"], res["metadatas"] or [], res["documents"] or [])]

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
        manifest = _read_manifest(self.path)
        manifest["dirty"] = dirty
        _write_manifest(self.path, manifest)

    def _commit(self) -> None:
        """Bump the generation and rebuild BM25 from what Chroma now holds."""
        manifest = _read_manifest(self.path)
        manifest["generation"] = int(manifest.get("generation", 0)) + 1
        self._rebuild_bm25(str(manifest["generation"]))
        manifest["dirty"] = False
        _write_manifest(self.path, manifest)
        self._rebuild_derived()

    def _rebuild_derived(self) -> None:
        """Build the agents' derived indexes for the new generation, so the first query after an import is fast."""
        from citefinder.retrieve.registry import index_kinds

        try:
            self._derived.rebuild(index_kinds(self.settings, self), self)
        except Exception as e:  # noqa: BLE001 - derived data is rebuilt on first use anyway
            log.warning("building derived indexes failed (they are rebuilt on first use): %s", e)

    def _stamp(self) -> str:
        return str(_read_manifest(self.path).get("generation", 0))

    def _ensure_bm25(self) -> BM25Index:
        if self._bm25 is not None:
            return self._bm25
        with self._write_lock:
            if self._bm25 is not None:
                return self._bm25
            folder = self.path / BM25_DIR
            manifest = _read_manifest(self.path)
            stamp = BM25Index.saved_stamp(folder)
            index: BM25Index | None = None
            if stamp is not None and stamp == self._stamp() and not manifest.get("dirty"):
                index = BM25Index.load(folder)
                if len(index) != self.count():
                    index = None
            if index is None:
                log.info("BM25 index missing or stale in %s; rebuilding from the store", self.path)
                manifest["dirty"] = False
                _write_manifest(self.path, manifest)
                index = self._rebuild_bm25(self._stamp())
            self._bm25 = index
            return index

    def _rebuild_bm25(self, stamp: str) -> BM25Index:
        ids, texts = [], []
        for p in self.iter_papers():
            ids.append(p.doc_id)
            texts.append(bm25_text(p))
        index = BM25Index.build(ids, texts)
        index.save(self.path / BM25_DIR, stamp=stamp)
        self._bm25 = BM25Index.load(self.path / BM25_DIR) if ids else index
        return self._bm25


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


def _make_client(settings: Settings, path: Path) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if settings.chroma_host:
            host, _, port = settings.chroma_host.rpartition(":")
            return chromadb.HttpClient(host=host, port=int(port), settings=chroma_settings)
        return chromadb.PersistentClient(path=str(path / CHROMA_DIR), settings=chroma_settings)
    except Exception as e:  # noqa: BLE001
        hint = " Is `chroma run` started there?" if settings.chroma_host else ""
        raise LibraryError(f"Cannot connect to the Chroma store ({_where(settings)}): {e}.{hint}") from e


def _where(settings: Settings) -> str:
    return f"server {settings.chroma_host}" if settings.chroma_host else f"embedded, {Path(settings.library) / CHROMA_DIR}"


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


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((path / MANIFEST).read_text()))
    except (OSError, ValueError):
        return {}


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    tmp = path / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2))
    tmp.replace(path / MANIFEST)


def _estimate_records(path: Path) -> int | None:
    """Line count of a JSONL file (plain or gzip), for progress totals; None for other formats."""
    name = path.name.lower()
    if not path.exists() or not (name.endswith(".jsonl") or name.endswith(".jsonl.gz") or name.endswith(".ndjson")):
        return None
    import gzip

    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def delete_library(path: Path) -> None:
    """Remove an embedded library folder (used by tests and the app's reset)."""
    shutil.rmtree(path, ignore_errors=True)
