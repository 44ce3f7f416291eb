"""What the CLI and the app do with a library's context memory: import records, learn from the
user's picks, clear, count, check and repair. Every write holds the library's writer lock (the same
lock paper imports take), is incremental (records already held are skipped) and ends with the
memory matched and embedded (:func:`~citefinder.library.contexts.sync.sync_memory`)."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.library.contexts.memory import ContextMemory, memory_of
from citefinder.library.contexts.records import ORIGINS, ContextRecord
from citefinder.library.contexts.sync import match_records, sync_memory
from citefinder.types import ImportFailure

log = logging.getLogger(__name__)

IMPORT_BATCH = 5000
USER = "user"  # the origin of the user's own picks

Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class ContextImportReport:
    """One import into the memory: records added, already held, unreadable; what matched and was embedded."""

    added: int = 0
    duplicates: int = 0
    failures: tuple[ImportFailure, ...] = ()
    matched: int = 0
    embedded: int = 0
    elapsed_s: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return (f"added {self.added:,} contexts, {self.duplicates:,} already held, {len(self.failures):,} unreadable; "
                f"{self.matched:,} newly matched to library papers, {self.embedded:,} embedded, in "
                f"{self.elapsed_s:.1f} s; the memory holds {self.counts.get('contexts', 0):,} contexts citing "
                f"{self.counts.get('papers_cited', 0):,} of the library's papers")


def import_contexts(library: Any, records: Iterable[ContextRecord | ImportFailure], *, pack: str | None = None,
                    progress: Progress | None = None, embed_progress: Progress | None = None) -> ContextImportReport:
    """Add records to the library's memory (batches of one transaction each), then match and embed
    (``progress`` counts the records read, ``embed_progress`` the matched sentences embedded, of how many)."""
    t0 = time.perf_counter()
    memory = memory_of(library)
    added = dupes = seen = 0
    failures: list[ImportFailure] = []
    with library.writing():
        batch: list[ContextRecord] = []

        def flush() -> None:
            nonlocal added, dupes
            if batch:
                with memory.transaction() as con:
                    d, new = memory.add(con, batch, pack)
                dupes += d
                added += len(new)
                batch.clear()

        for item in records:
            seen += 1
            if isinstance(item, ImportFailure):
                failures.append(item)
            else:
                batch.append(item)
                if len(batch) >= IMPORT_BATCH:
                    flush()
            if progress and seen % 1000 == 0:
                progress(seen, None)
        flush()
        sync = sync_memory(library, progress=embed_progress)
    return ContextImportReport(added, dupes, tuple(failures), sync.matched, sync.embedded,
                               time.perf_counter() - t0, memory.counts())


def learn_pick(library: Any, sentence: str, doc_id: str, *, citing: str = "user", source: str = "pick",
               settings: Any = None) -> bool:
    """Remember that the user cites ``doc_id`` for ``sentence`` (the slot's sentence, the slot written
    [CITATION]): the next similar sentence finds it (agents cited-as, cited-like, co-cited, cited-often).

    Returns False when learning is switched off (setting ``learn_from_picks`` of ``settings``, the
    session's, else the library's) or the pair is held already; raises InputError for a paper that is
    not in the library. ``citing`` names the draft (its picks are co-cited with each other).
    """
    return learn_picks(library, [(sentence, doc_id)], citing=citing, source=source, settings=settings) > 0


def learn_picks(library: Any, pairs: Iterable[tuple[str, str]], *, citing: str = "user", source: str = "pick",
                settings: Any = None) -> int:
    """:func:`learn_pick` for several (sentence, doc_id) pairs in one write; returns how many were new."""
    if not (settings or library.settings).learn_from_picks:
        return 0
    wanted = [(" ".join(s.split()), d) for s, d in pairs if s and s.strip()]
    papers = {p.doc_id: p for p in library.get([d for _, d in wanted])}
    missing = sorted({d for _, d in wanted if d not in papers})
    if missing:
        raise InputError(f"Cannot learn a pick of {', '.join(missing[:3])}: not in the library.")
    records = [ContextRecord(text=s, title=papers[d].title, year=papers[d].year, authors=papers[d].authors,
                             doc_id=d, doi=papers[d].doi, arxiv_id=papers[d].arxiv_id, citing=citing, source=source,
                             origin=USER) for s, d in wanted]
    if not records:
        return 0
    memory = memory_of(library)
    with library.writing():
        with memory.transaction() as con:
            _, new = memory.add(con, records, None)
            by_rid = {r.rid: r.doc_id for r in records}
            rows = con.execute(f"SELECT id, rid FROM records WHERE id IN ({','.join('?' * len(new))})", new).fetchall()
            memory.set_matches(con, [(int(i), str(by_rid[rid])) for i, rid in rows])
        if new:
            sync_memory(library)
    return len(new)


def adopt_memory(library: Any, template: Path) -> ContextImportReport:
    """Start the library's memory as a copy of another memory file (its records; matches and vectors are
    made anew for this library): a pack read once serves many libraries (the benchmarks' drafts)."""
    t0 = time.perf_counter()
    memory = memory_of(library)
    if memory.exists():
        raise InputError(f"{memory.path} exists already; import into it with `citefinder contexts import`")
    with library.writing():
        shutil.copyfile(template, memory.path)
        memory.close()
        with memory.transaction() as con:
            memory.reset_matches(con)
            con.execute("DELETE FROM vectors")
        sync = sync_memory(library)
    counts = memory.counts()
    return ContextImportReport(counts["contexts"], 0, (), sync.matched, sync.embedded, time.perf_counter() - t0, counts)


def forget(library: Any, origins: Iterable[str] = (USER,)) -> int:
    """Delete the memory's records of these origins ("user": the learned picks; "latex"; "pack"); returns how many."""
    wanted = tuple(dict.fromkeys(origins))
    unknown = [o for o in wanted if o not in ORIGINS]
    if unknown:
        raise InputError(f"unknown context origin(s) {', '.join(unknown)}: use {', '.join(ORIGINS)}")
    memory = memory_of(library)
    if not memory.exists():
        return 0
    with library.writing(), memory.transaction() as con:
        return memory.clear(con, wanted)


def forget_picks(library: Any, pairs: Iterable[tuple[str, str]] = (), *, citing: str | Iterable[str] | None = None,
                 source: str | None = None, doc_id: str | None = None, containing: str | None = None) -> int:
    """Forget learned picks one by one, the others kept: each (sentence, doc_id) pair of ``pairs``, or every
    learned pick of ``doc_id`` (only those whose sentence contains ``containing``); returns how many. ``citing``:
    only the picks learned for this draft (or these drafts; the name :func:`learn_picks` was given), so that
    removing a pick in one draft keeps the same pick learned in another; ``source``: only those learned this way
    ("pick": on the Cite page; "latex-draft": by ``fill``; "check", "check-fix"). None: any."""
    memory = memory_of(library)
    if not memory.exists():
        return 0
    wanted = [(" ".join(s.split()), d) for s, d in pairs]
    where, args = _whose(citing, source)
    gone = 0
    with library.writing(), memory.transaction() as con:
        ids: list[int] = []
        for sentence, d in wanted:
            ids += [int(r[0]) for r in con.execute(f"SELECT id FROM records WHERE origin = ? AND doc_id = ? AND "
                                                   f"text = ?{where}", (USER, d, sentence, *args))]
        if doc_id is not None:
            rows = con.execute(f"SELECT id, text FROM records WHERE origin = ? AND doc_id = ?{where}",
                               (USER, doc_id, *args))
            needle = " ".join((containing or "").split()).casefold()
            ids += [int(i) for i, text in rows if needle in " ".join(str(text).split()).casefold()]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for table, column in (("vectors", "record"), ("matches", "record"), ("keys", "record")):
                con.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
            gone += int(con.execute(f"DELETE FROM records WHERE id IN ({marks})", chunk).rowcount)
    if gone:
        sync_memory(library)
    return gone


def drafts_holding(library: Any, doc_id: str, containing: str | None = None) -> dict[str, int]:
    """draft (the ``citing`` name its picks were learned under) -> how many learned picks of ``doc_id`` it holds
    (only those whose sentence contains ``containing``): where ``contexts forget`` would forget."""
    needle = " ".join((containing or "").split()).casefold()
    out: dict[str, int] = {}
    for citing, text in memory_of(library).learned(doc_id):
        if needle in " ".join(text.split()).casefold():
            out[citing] = out.get(citing, 0) + 1
    return out


def _whose(citing: str | Iterable[str] | None, source: str | None) -> tuple[str, list[str]]:
    """The SQL condition (and its arguments) keeping the records of these drafts and this source."""
    where, args = "", []
    if citing is not None:
        names = [citing] if isinstance(citing, str) else list(citing)
        where += f" AND citing IN ({','.join('?' * len(names)) or 'NULL'})"
        args += names
    if source is not None:
        where += " AND source = ?"
        args.append(source)
    return where, args


def memory_counts(library: Any) -> dict[str, int]:
    """Contexts held, matched, and library papers cited at least once (zeros without a memory)."""
    return memory_of(library).counts()


def memory_problems(library: Any) -> list[str]:
    """What is wrong with the memory ([] when healthy or absent): a damaged file, records not matched
    or not embedded after the last write."""
    memory = memory_of(library)
    if not memory.exists():
        return []
    damaged = memory.check()
    if damaged:
        return [f"the context memory {memory.path} is damaged ({damaged}); `citefinder library repair` moves it "
                "aside and starts an empty one (import your context packs again)"]
    missing = len(memory.unembedded(1_000_000))
    return [f"{missing} matched contexts have no vector yet"] if missing else []


def repair_memory(library: Any) -> list[str]:
    """Under the writer lock: move a damaged memory aside, else re-match every record and embed what
    lacks a vector. Returns what was done, one line each."""
    memory = memory_of(library)
    if not memory.exists():
        return []
    damaged = memory.check()
    if damaged:
        memory.close()
        aside = memory.path.with_name(f"{memory.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.move(str(memory.path), aside)
        return [f"the context memory was damaged ({damaged}): moved aside to {aside.name}; "
                "import your context packs again (`citefinder contexts import`)"]
    with memory.transaction() as con:
        memory.reset_matches(con)
        memory.set_matches(con, match_records(memory.unmatched_keys(), library.dedupe_keys()))
        memory.drop_orphan_vectors(con)
    sync = sync_memory(library)
    counts = memory.counts()
    return [f"re-matched the context memory: {counts['contexts_matched']:,} of {counts['contexts']:,} contexts cite "
            f"{counts['papers_cited']:,} library papers ({sync.embedded:,} embedded)"]


def sync_after_write(library: Any) -> None:
    """The library's after-write hook: match new papers, drop removed ones (only when a memory exists)."""
    if ContextMemory(library.path).exists():
        sync_memory(library)
