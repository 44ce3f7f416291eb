"""What is wrong with a library and what can be rebuilt: counts against the manifest, the BM25 index,
and the vector-index check and restore.

Chroma keeps records, metadata and documents in chroma.sqlite3 but, once its write-ahead queue is
flushed (every 1,000 writes), the vectors only in the HNSW segment folder beside it. Lose that folder
and count() still says N while the index holds only what the queue replays: dense search (HNSW, and
the exact vector matrix, which reads its vectors from the same segment) silently misses the rest.
Records and indexed vectors are therefore checked against each other (issue 14).
"""

from __future__ import annotations

import logging
from typing import Any

from citefinder.errors import LibraryDamagedError
from citefinder.library.contexts.api import memory_problems, repair_memory
from citefinder.library.store import faults
from citefinder.library.store.chroma import where
from citefinder.library.store.core import PAGE
from citefinder.library.store.embedding import LibraryEmbeds
from citefinder.library.store.manifest import MANIFEST, read_manifest, write_manifest
from citefinder.library.store.writes import WRITE_BATCH

log = logging.getLogger(__name__)

# At most this many papers a query for all vectors missed are re-checked one by one with their own
# vector; more missing than that is a lost index (library repair), not approximate search.
_CONFIRM_MAX = 64


class LibraryRepairs(LibraryEmbeds):
    """Checks and repairs of a library (see the module docstring)."""

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
        bm25 = self.ensure_bm25()
        if len(bm25) != n:
            found.append(f"the BM25 index holds {len(bm25)} papers but the store holds {n}")
        missing = self._missing_vector_count()
        if missing:
            found.append(_missing_vectors_text(missing, self.embedded_count()))
        found += memory_problems(self)
        return found

    def repair(self) -> list[str]:
        """Rebuild what can be rebuilt from the stored papers (BM25, dedupe keys, manifest counts);
        returns what was done, one line each. Accepts the store as it now is."""
        done: list[str] = []
        with self.writing():
            try:
                restored = self._restore_vectors()
            except Exception as e:  # noqa: BLE001 - only a damaged vector index is repaired here
                if faults.classify(e) != faults.DAMAGED_INDEX or self.settings.chroma_host:
                    raise
                done.append(self._set_aside_index(e))
                restored = self._restore_vectors()
            if restored:
                done.append(f"re-embedded {restored} papers whose vectors were missing from Chroma's vector index")
            if settled := self._settle_queue(everything=True):
                done.append(f"took {settled} papers off the embedding queue that the store already held (a killed "
                            "`library embed`)")
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
            done += repair_memory(self)
        return done

    def _set_aside_index(self, error: BaseException) -> str:
        """Move Chroma's damaged vector segment folder(s) out of the store and reopen it: its records
        (chroma.sqlite3) are intact, so every paper whose vector is then missing is embedded again."""
        import time

        from citefinder.library.store.chroma import open_collection

        chroma = self.path / "chroma"
        aside = self.path / f"damaged-index-{time.strftime('%Y%m%d-%H%M%S')}"
        folders = [d for d in chroma.iterdir() if d.is_dir()] if chroma.is_dir() else []
        aside.mkdir(exist_ok=True)
        for folder in folders:
            folder.rename(aside / folder.name)
        self._client, self._collection = open_collection(self.settings, self.collection_name, self.embedder,
                                                         self.path)
        self._vector_check = None
        detail = " ".join(str(error).split())[:160]
        log.warning("Chroma's vector index was damaged (%s); moved aside to %s", detail, aside)
        return (f"Chroma's vector index was damaged ({detail}); moved it aside to {aside.name} (delete it once "
                "the library works) and embedded the stored papers again")

    def check_counts(self) -> None:
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
                f"({where(self.settings)}) is missing or damaged. Restore it from a backup, or run "
                "`citefinder library repair` to accept what is left and rebuild the indexes."
            )

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
        while page := list(self._collection.get(offset=len(ids), limit=PAGE, include=[])["ids"]):
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

    def warn_missing_vectors(self) -> None:
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
            self._pending.mark_flight(chunk)  # stored and queued until deleted: counted once meanwhile
            self._collection.delete(ids=chunk)
        self._vector_check = None
        self.embed_pending()
        return len(missing)


def _missing_vectors_text(missing: int, embedded: int) -> str:
    return (f"Chroma's vector index lacks the vectors of {missing} of {embedded} stored papers (its segment "
            "folder beside chroma.sqlite3 is missing or damaged), so dense search cannot find them; run "
            "`citefinder library repair` to re-embed them")

