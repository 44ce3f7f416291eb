"""Writing papers: imports in batches (duplicates skipped by the identity rule), the embedding queue,
removal, in-place updates and citation keys. Every write holds the folder's write lock and ends in a
commit (:class:`~citefinder.library.store.core.LibraryCore`); a killed import keeps every fully written batch."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citefinder.errors import CitefinderError, ImportAbortedError, ImportInterrupted, StoreUnavailableError
from citefinder.library import bibentry
from citefinder.library.formats.common import RecordError
from citefinder.library.identity import Identity, dedupe_keys, identity, normalize_title, same_work
from citefinder.library.records import embedding_text, source_name, to_metadata, to_update_metadata
from citefinder.library.sample_file import (
    MARKED,
    SAMPLE_FILE,
    as_sample,
    old_sample,
    owned,
    sample_over,
    shipped_sample,
)
from citefinder.library.store import faults, stopping
from citefinder.library.store.ahead import EncodeAhead
from citefinder.library.store.chroma import papers_of, where
from citefinder.library.store.core import LibraryCore
from citefinder.library.store.manifest import read_manifest, write_manifest
from citefinder.library.validate import checked_paper
from citefinder.types import ImportFailure, ImportReport, Paper

log = logging.getLogger(__name__)

Progress = Callable[[int, "int | None"], None]

WRITE_BATCH = 256


def chroma_rows(papers: Sequence[Paper], vectors: Any, metadata: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """What Chroma stores of ``papers``: ids, ``vectors``, ``metadata`` of each (with its normalised title) and the
    abstract as the document; the arguments of the collection's ``add`` and ``update``."""
    return {"ids": [p.doc_id for p in papers], "embeddings": vectors.tolist(),
            "metadatas": [metadata(p, norm_title=normalize_title(p.title)) for p in papers],
            "documents": [p.abstract for p in papers]}


class LibraryWrites(LibraryCore):
    """The writes of a library (see the module docstring)."""

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
        with self.writing():
            keys = self.dedupe_keys()
            before = self.count()
            batch: list[tuple[Paper, tuple[str, ...], Identity]] = []
            batch_keys: dict[str, Identity] = {}  # keys of papers in the batch not yet stored
            fresh: set[str] = set()  # doc_ids added by this call
            rekey: dict[str, Paper] = {}  # stored doc_id -> the duplicate that gives it its key and entry text
            given: set[str] = set()  # every key a .bib entry of this import names
            ahead = EncodeAhead(self.embedder) if self.settings.embed_ahead and not defer_embedding else None
            flying: list[Any] = []  # the batch being embedded ahead: (batch, its keys, future vectors)
            self._mark_dirty(True)
            try:
                for seen, item in enumerate(papers, start=1):
                    if isinstance(item, ImportFailure):
                        failures.append(item)
                    else:
                        try:
                            paper = checked_paper(item)
                        except RecordError as e:
                            failures.append(ImportFailure(source_name(item), f"record {e}"))
                            paper = None
                        if paper is not None:
                            pkeys = dedupe_keys(paper) + (f"id:{paper.doc_id}",)
                            who = identity(paper)
                            known = [keys.get(k) or batch_keys.get(k) or (flying[1].get(k) if flying else None)
                                     for k in pkeys]
                            match = next((m for k, m in zip(pkeys, known, strict=True) if same_work(k, m, who)), None)
                            bib_entry = bibentry.from_bib(paper)
                            if paper.key and bib_entry:
                                given.add(paper.key)
                            if match is not None:
                                dupes += 1
                                # a re-imported .bib updates the key and text; within one import a .bib entry
                                # becomes the entry of a work read first from another file
                                if (paper.key or paper.bibtex) and (match.doc_id not in fresh or bib_entry):
                                    if bib_entry and not bibentry.from_bib(rekey.get(match.doc_id, paper)):
                                        rekey[match.doc_id] = paper
                                    rekey.setdefault(match.doc_id, paper)
                            else:
                                fresh.add(paper.doc_id)
                                for k in pkeys:
                                    batch_keys.setdefault(k, who)
                                batch.append((paper, pkeys, who))
                    if len(batch) >= WRITE_BATCH:
                        self._pass_batch(ahead, flying, (batch, batch_keys), keys, added, failures, defer_embedding)
                        batch, batch_keys = [], {}
                    if progress:
                        progress(seen, total)
                self._pass_batch(ahead, flying, (batch, batch_keys) if batch else None, keys, added, failures,
                                 defer_embedding)
                self._pass_batch(ahead, flying, None, keys, added, failures, defer_embedding)
                updated = self._adopt(rekey, keep=given, defer=defer_embedding) if rekey else []
            except BaseException as e:
                # a second Ctrl-C while the worker finishes its batch or the state is saved must not cut this short
                with stopping.finishing("waiting for the batch being embedded and saving the library's state"):
                    if ahead is not None:
                        ahead.close()
                    # an interrupt can land between a batch reaching the store and its bookkeeping: count the store
                    stored = self._stored_since(before, len(added))
                    report = ImportReport(stored, dupes, tuple(failures), tuple(added), time.perf_counter() - t0)
                    self._finish_after_failure(changed=bool(stored))
                raise self._aborted(e, report, "import") from e
            self._commit(changed=bool(added) or bool(rekey))  # (the idle worker ends with ``ahead``)
        changed = tuple(p.key or p.doc_id for p in updated)
        return ImportReport(len(added), dupes - len(changed), tuple(failures), tuple(added), time.perf_counter() - t0,
                            updated=changed)

    def import_files(
        self, paths: Sequence[Path | str], *, progress: Progress | None = None, defer_embedding: bool = False,
        on_read: Callable[[Paper], None] | None = None,
    ) -> ImportReport:
        """Import BibTeX, JSONL(.gz), CSL-JSON and PDF files (see :mod:`citefinder.library.readers`).

        ``on_read`` sees every record read, stored or not (:mod:`citefinder.library.review` matches the
        skipped ones to what they duplicate)."""
        from citefinder.library.readers import estimate_records, read_papers

        total = sum(estimate_records(Path(p)) or 0 for p in paths) or None

        def stream() -> Iterator[Paper | ImportFailure]:
            for p in paths:
                p = Path(p)
                if not p.exists():
                    yield ImportFailure(str(p), "file not found")
                    continue
                try:
                    sample = shipped_sample(p)  # the shipped file's bytes, whatever its name
                    for item in read_papers(p):
                        if sample and isinstance(item, Paper):
                            item = as_sample(item)
                        if on_read is not None and isinstance(item, Paper):
                            on_read(item)
                        yield item
                except Exception as e:  # noqa: BLE001 - a broken file must not stop the others
                    log.exception("reading %s failed", p)
                    yield ImportFailure(p.name, f"could not read the file: {e}")

        return self.add_papers(stream(), progress=progress, total=total, defer_embedding=defer_embedding)

    def remove(self, doc_ids: Sequence[str]) -> int:
        """Remove papers by doc_id; returns how many existed."""
        with self.writing():
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
                    e, where=where(self.settings), kept="some of the papers may have been removed",
                    resume="run the removal again")) from e
            self._keys = None
            self._commit(changed=True)
            return len(present)

    @contextmanager
    def writing(self) -> Iterator[None]:
        with super().writing():
            if self._seen and not self._seen.get(MARKED):
                try:
                    self._mark_old_sample()
                except Exception as e:  # noqa: BLE001 - never in the way of the write (a repair above all)
                    log.warning("could not mark the sample library's papers (tried again on the next write): %s", e)
            yield

    def _mark_old_sample(self) -> None:
        """Once per library made before the sample's papers were marked (:func:`old_sample`): mark them."""
        res = self._collection.get(where={"source": SAMPLE_FILE}, include=["metadatas", "documents"])
        papers = papers_of(res) + list(self._pending.get(self._pending.ids_from(SAMPLE_FILE)).values())
        if old := [as_sample(p) for p in papers if old_sample(p)]:
            log.info("marking the %d papers of the sample library in %s as the sample's", len(old), self.path)
            self._rewrite(old)  # the same text: nothing is embedded
        self._seen = {**read_manifest(self.path), MARKED: True}
        write_manifest(self.path, self._seen)

    def match(self, paper: Paper) -> str | None:
        """The doc_id of the stored paper that ``paper`` duplicates (the rule of :meth:`add_papers`), or None."""
        with self._write_lock:
            keys = self.dedupe_keys()
            who = identity(paper)
            pkeys = dedupe_keys(paper) + (f"id:{paper.doc_id}",)
            return next((keys[k].doc_id for k in pkeys if same_work(k, keys.get(k), who)), None)

    def update_papers(self, papers: Sequence[Paper]) -> int:
        """Rewrite stored papers (matched by doc_id) with the given records; unknown doc_ids are skipped.

        Only papers whose embedded text (title, abstract) changed are embedded again; the rest get
        their metadata replaced in place. Returns how many papers were embedded.
        """
        if not papers:
            return 0
        with self.writing():
            if not self.get([p.doc_id for p in papers]):
                return 0
            self._mark_dirty(True)
            try:
                embedded = self._rewrite(papers)
            except BaseException:
                self._keys = None
                self._finish_after_failure(changed=True)
                raise
            self._keys = None
            self._commit(changed=True)
            return embedded

    def _rewrite(self, papers: Sequence[Paper], *, defer: bool = False) -> int:
        """Under the write lock: replace stored records (by doc_id) in Chroma or the queue; a paper whose
        embedded text changed is embedded again (``defer``: queued again, as a deferred import would). Returns
        how many were embedded."""
        new = {p.doc_id: p for p in papers}
        old = {p.doc_id: p for p in self._chroma_get(list(new))}
        same = [new[i] for i in old if embedding_text(old[i]) == embedding_text(new[i])]
        changed = [new[i] for i in old if embedding_text(old[i]) != embedding_text(new[i])]
        if defer and changed:  # queued before leaving Chroma: a kill in between keeps the stored record
            self._pending.add(changed)
            self._pending.mark_flight([p.doc_id for p in changed])
            self._collection.delete(ids=[p.doc_id for p in changed])
            changed = []
        if same:  # no documents: Chroma would embed them itself (and the abstract did not change)
            self._collection.update(ids=[p.doc_id for p in same], metadatas=[
                to_update_metadata(p, norm_title=normalize_title(p.title)) for p in same])
        if changed:
            vectors = self.embedder.encode([embedding_text(p) for p in changed])
            self._collection.update(**chroma_rows(changed, vectors, to_update_metadata))
        self._pending.replace([p for i, p in new.items() if i not in old])
        return len(changed)

    def _adopt(self, duplicates: dict[str, Paper], *, keep: set[str] | None = None, defer: bool = False) -> list[Paper]:
        """Stored papers (doc_id -> a duplicate just read) take the duplicate's citation key and, when it came
        from a .bib, its entry text and file, and the fields they lack (:func:`owned`): a re-imported .bib
        updates the key, the user's own entry replaces the sample library's (the paper stops being a sample),
        a .bib entry read after a CSL-JSON record brings its authors and abstract. A paper whose key the import
        names (``keep``) under another entry stays as it is: two entries of one file are one work (a
        ``crossref`` child and its parent). Returns the papers changed."""
        renamed = [new for p in self.get(list(duplicates))
                   if not (keep and p.key in keep and duplicates[p.doc_id].key != p.key
                           and not sample_over(p, duplicates[p.doc_id]))
                   and (new := owned(p, duplicates[p.doc_id])) != p]
        if renamed:
            log.info("updating the key, entry or fields of %d stored papers", len(renamed))
            self._rewrite(renamed, defer=defer)
            self._keys = None  # a DOI or arXiv id it gained is a new dedupe key
        return renamed

    def _store_batch(
        self,
        batch: list[tuple[Paper, tuple[str, ...], Identity]],
        keys: dict[str, Identity] | None,
        added: list[str],
        failures: list[ImportFailure],
        defer: bool,
        vectors: "Future[Any] | None" = None,
    ) -> None:
        """Write a batch (with its vectors when they were embedded ahead); remember its dedupe keys only for
        papers that were stored.

        A failure the store blames on the records (not the disk, server or user) is retried paper
        by paper, so one unstorable paper costs only itself.
        """
        write = self._queue_batch if defer else self._write_batch
        papers = [p for p, _, _ in batch]
        try:
            stored = set(write(papers) if vectors is None else self._write_batch(papers, EncodeAhead.result(vectors)))
        except Exception as e:  # noqa: BLE001 - sorted below: environmental errors stop the import
            if faults.is_environmental(e) or faults.is_damage(e) or isinstance(e, CitefinderError):
                raise
            log.warning("writing a batch of %d papers failed (%s); writing them one by one", len(papers), e)
            stored = set()
            for p in papers:
                try:
                    stored.update(write([p]))
                except Exception as e1:  # noqa: BLE001
                    if faults.is_environmental(e1) or faults.is_damage(e1) or isinstance(e1, CitefinderError):
                        raise
                    failures.append(ImportFailure(source_name(p), f"could not be stored: {type(e1).__name__}: {e1}"))
        for p, pkeys, who in batch:
            if p.doc_id in stored:
                added.append(p.doc_id)
                if keys is not None:
                    for k in pkeys:
                        keys.setdefault(k, who)

    def _queue_batch(self, batch: list[Paper]) -> list[str]:
        self._pending.add(batch)
        return [p.doc_id for p in batch]

    def _pass_batch(self, ahead: EncodeAhead | None, flying: list[Any],
                    new: tuple[list[tuple[Paper, tuple[str, ...], Identity]], dict[str, Identity]] | None,
                    keys: dict[str, Identity] | None, added: list[str], failures: list[ImportFailure],
                    defer: bool) -> None:
        """Hand a full batch on: written now, or (``ahead``) embedded by the worker while the batch before it
        is written; ``flying`` holds the one batch in the worker. ``new`` None: write the one in flight."""
        if ahead is None:
            if new:
                self._store_batch(new[0], keys, added, failures, defer)
            return
        before = list(flying)
        flying.clear()
        if new:
            flying.extend([new[0], new[1], ahead.submit([p for p, _, _ in new[0]])])
        if before:
            self._store_batch(before[0], keys, added, failures, False, vectors=before[2])

    def _write_batch(self, batch: list[Paper], vectors: Any = None) -> list[str]:
        if vectors is None:
            vectors = self.embedder.encode([embedding_text(p) for p in batch])
        self._collection.add(**chroma_rows(batch, vectors, to_metadata))
        return [p.doc_id for p in batch]

    def dedupe_keys(self) -> dict[str, Identity]:
        if self._keys is None:
            keys: dict[str, Identity] = {}
            for p in self.iter_papers():
                for k in dedupe_keys(p) + (f"id:{p.doc_id}",):
                    keys.setdefault(k, identity(p))
            self._keys = keys
        return self._keys

    def _stored_since(self, before: int, counted: int) -> int:
        """Papers this write added, from the store itself when it still answers (else what was counted)."""
        try:
            return max(counted, self.count() - before)
        except Exception:  # noqa: BLE001 - a lost server or full disk: what was counted is all we know
            return counted

    def _aborted(self, error: BaseException, report: ImportReport, what: str) -> BaseException:
        """The exception to raise for an import stopped by ``error``: what was kept and how to resume."""
        kept = f"{report.added} papers of this {what} were stored"
        resume = "run the same import again (papers already stored are skipped as duplicates)"
        if faults.classify(error) == faults.INTERRUPTED:
            return ImportInterrupted(f"Interrupted: {kept}; {resume}.", report)
        if isinstance(error, CitefinderError):
            return error
        return ImportAbortedError(faults.explain(error, where=where(self.settings), kept=kept, resume=resume), report)

