"""Keeping the memory in step with the library: match records to papers, embed the matched ones.

A record matches a library paper by the one identity rule (:mod:`citefinder.library.identity`): a
shared DOI, arXiv id or doc id, or a normalised title that neither the years (more than one apart)
nor the first authors contradict. Matching runs after every write to the library (papers arrive or
leave) and after every import into the memory, so a pack imported before its papers still counts
once they arrive. Only matched records are embedded (a pack of 86k sentences into a 100-paper library
embeds the few dozen that cite its papers), with the library's own embedder; a new embedder drops
and re-embeds them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from citefinder.library.contexts.memory import ContextMemory, memory_of
from citefinder.library.contexts.records import plain_text
from citefinder.library.identity import Identity, same_work

log = logging.getLogger(__name__)

EMBED_BATCH = 256

Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class SyncReport:
    """What one synchronisation did."""

    matched: int = 0  # records newly matched to a library paper
    dropped: int = 0  # matches to papers no longer in the library
    embedded: int = 0  # matched records embedded

    @property
    def changed(self) -> bool:
        return bool(self.matched or self.dropped or self.embedded)


def match_records(unmatched: list[tuple[int, str, int | None, str | None]],
                  keys: Mapping[str, Identity]) -> list[tuple[int, str]]:
    """(record, doc_id) for each record whose strongest matching key names a library paper of the same work."""
    pairs: list[tuple[int, str]] = []
    done: set[int] = set()
    for record, key, year, first_author in unmatched:  # strongest key first within a record
        if record in done:
            continue
        paper = keys.get(key)
        if paper is not None and same_work(key, paper, Identity("", year, first_author)):
            pairs.append((record, paper.doc_id))
            done.add(record)
    return pairs


def sync_memory(library: Any, *, progress: Progress | None = None) -> SyncReport:
    """Match and embed (the caller holds the library's writer lock). Nothing happens without a memory."""
    memory = memory_of(library)
    if not memory.exists():
        return SyncReport()
    keys: Mapping[str, Identity] = library.dedupe_keys()
    present = {who.doc_id for who in keys.values()}
    stale = sorted(memory.matched_papers() - present)
    pairs = match_records(memory.unmatched_keys(), keys)
    if stale or pairs:
        with memory.transaction() as con:
            dropped = memory.drop_papers(con, stale)
            memory.set_matches(con, pairs)
    else:
        dropped = 0
    embedded = embed_matched(memory, library.embedder, progress=progress)
    report = SyncReport(len(pairs), dropped, embedded)
    if report.changed:
        log.info("context memory of %s: %d records newly matched, %d matches dropped, %d embedded",
                 library.path, report.matched, report.dropped, report.embedded)
    return report


def embed_matched(memory: ContextMemory, embedder: Any, *, progress: Progress | None = None) -> int:
    """Embed every matched record without a vector, batch by batch (each batch one transaction,
    so an interrupted run keeps what it finished). A different embedder than the vectors' drops them first."""
    spec = json.dumps(embedder.spec.to_dict(), sort_keys=True)
    if memory.meta("embedder") != spec:
        with memory.transaction() as con:
            con.execute("DELETE FROM vectors")
            memory.set_meta(con, "embedder", spec)
    done = 0
    total = memory.unembedded_count() if progress else None
    while batch := memory.unembedded(EMBED_BATCH):
        vectors = embedder.encode([plain_text(text) for _, text in batch])
        with memory.transaction() as con:
            memory.set_vectors(con, [r for r, _ in batch], vectors)
        done += len(batch)
        if progress:
            progress(done, max(total or 0, done))
    return done
