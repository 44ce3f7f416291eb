"""Importing the dumps of the literature (the arXiv metadata snapshot, OpenAlex works, Semantic Scholar papers
with their abstracts) into a library: streamed in bounded memory, filtered by category and year as they are
read, and resumable.

One :func:`import_dumps` call reads its files one record at a time (:mod:`citefinder.library.formats.lines`),
keeps the records the filters let through, and hands their papers to one
:meth:`~citefinder.library.store.writes.LibraryWrites.add_papers` (batches, duplicates skipped by the identity rule,
the BM25 index rebuilt once at the end; ``defer_embedding`` for BM25 first). Where each file is settled is
written to the library folder as the import goes (:mod:`citefinder.library.resume`), so a run stopped by
Ctrl-C, a full disk or a kill starts again where it stopped. Semantic Scholar abstracts files given in the
same call are loaded first into a SQLite table and joined to the papers by corpus id.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citefinder.errors import ImportAbortedError, ImportInterrupted, InputError
from citefinder.library.formats.lines import DumpFormat, Position, paper_or_failure, positioned_records, source_name
from citefinder.library.formats.s2 import AbstractsTable
from citefinder.library.readers import DUMP_FORMATS, S2_ABSTRACTS, sniff_format
from citefinder.library.resume import ProgressBook, Tracker
from citefinder.types import ImportFailure, ImportReport, Paper

log = logging.getLogger(__name__)

ADVANCE_EVERY = 1024  # papers handed on between two saves of the progress (records read: 64 times as many)
MAX_FAILURES = 200  # failures kept with their reasons; the others are counted
ABSTRACTS_TABLE = "s2-abstracts.sqlite"
_YEARS = re.compile(r"^\s*(\d{4})?\s*(?:(-)\s*(\d{4})?)?\s*$")


@dataclass(frozen=True)
class DumpFilter:
    """Which records to keep: any of ``categories`` (arXiv categories, OpenAlex topic / field / domain / concept
    names, S2 fields of study; case-insensitive; ``cs.*`` and ``cs`` match every ``cs.`` category) and a year
    in ``years`` (either end open). A record without a year is filtered out when a year range is set."""

    categories: tuple[str, ...] = ()
    years: tuple[int | None, int | None] = (None, None)

    def spec(self) -> str:
        """The filter as text (kept with a file's progress: other filters read the file again)."""
        lo, hi = self.years
        years = f"{lo or ''}-{hi or ''}" if (lo or hi) else "any"
        return f"categories={','.join(self.categories) or 'any'} years={years}"

    def keeps_topics(self, topics: Sequence[str]) -> bool:
        return not self.categories or any(_matches(t, c) for t in topics for c in self.categories)

    def keeps_year(self, year: int | None) -> bool:
        lo, hi = self.years
        if lo is None and hi is None:
            return True
        return year is not None and (lo is None or year >= lo) and (hi is None or year <= hi)


def _matches(topic: str, pattern: str) -> bool:
    t, p = topic.casefold(), pattern.casefold()
    return t == p or t.startswith(p + ".") or (any(ch in p for ch in "*?[") and fnmatch.fnmatchcase(t, p))


def parse_years(text: str | None) -> tuple[int | None, int | None]:
    """``"2015-2020"``, ``"2015-"``, ``"-2020"`` or ``"2019"`` as (first, last); InputError otherwise."""
    if not text:
        return None, None
    m = _YEARS.match(text)
    if not m or not (m.group(1) or m.group(3)):
        raise InputError(f"--years {text!r}: give a year or a range such as 2015-2020, 2015- or -2020")
    lo = int(m.group(1)) if m.group(1) else None
    hi = int(m.group(3)) if m.group(3) else (lo if not m.group(2) else None)
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"--years {text!r}: the first year is after the last (give them in order, e.g. 2015-2020)")
    return lo, hi


def parse_categories(text: str | None) -> tuple[str, ...]:
    """``"cs.CL, cs.LG"`` -> ``("cs.CL", "cs.LG")``."""
    return tuple(c.strip() for c in (text or "").split(",") if c.strip())


@dataclass
class FileCount:
    """What happened to one file's records in this run."""

    name: str
    format: str
    read: int = 0
    kept: int = 0
    filtered: int = 0
    failed: int = 0
    started_at: int = 1  # the record this run started at (1: the beginning)
    skipped: bool = False  # imported whole before; not read

    def line(self) -> str:
        if self.skipped:
            return f"{self.name} ({self.format}): imported whole before, skipped (--restart reads it again)"
        resumed = f"; resumed at record {self.started_at:,}" if self.started_at > 1 else ""
        return (f"{self.name} ({self.format}): read {self.read:,} records, kept {self.kept:,}, "
                f"filtered out {self.filtered:,}, failed {self.failed:,}{resumed}")


@dataclass
class DumpImport:
    """The import's result: per file counts, and the library's report of what it stored."""

    files: list[FileCount] = field(default_factory=list)
    report: ImportReport = field(default_factory=ImportReport)
    abstracts: int = 0  # Semantic Scholar abstracts loaded for the join in this run

    def lines(self) -> list[str]:
        extra = [f"Semantic Scholar abstracts loaded for the join: {self.abstracts:,}"] if self.abstracts else []
        return extra + [f.line() for f in self.files]


def plan_formats(paths: Sequence[Path], fmt: str | None) -> list[tuple[Path, str]]:
    """Each file with the format it is read as (``fmt``, else sniffed); InputError for a file that is not a
    dump of a known format (the message names it)."""
    plans = []
    for p in paths:
        if not p.is_file():
            raise InputError(f"file not found: {p}")
        sniffed = sniff_format(p)
        name = S2_ABSTRACTS if sniffed == S2_ABSTRACTS and fmt in (None, "s2") else (fmt or sniffed)
        if name not in DUMP_FORMATS and name != S2_ABSTRACTS:
            raise InputError(f"{p.name} is not a dump CiteFinder reads (the arXiv metadata snapshot, OpenAlex works, "
                             "Semantic Scholar papers or abstracts, JSON Lines of papers): give --format, or "
                             "import .bib, CSL-JSON and PDF files without the dump options")
        plans.append((p, name))
    return plans


def import_dumps(
    library: Any,
    paths: Sequence[Path],
    *,
    fmt: str | None = None,
    filters: DumpFilter | None = None,
    defer_embedding: bool = False,
    restart: bool = False,
    say: Callable[[str], None] = lambda _: None,
    progress: Callable[[int, int | None], None] | None = None,
) -> DumpImport:
    """Import dump files into ``library`` (see the module docstring); ``say`` hears what is resumed or skipped.

    Raises ImportInterrupted (Ctrl-C) or ImportAbortedError (disk, server) whose message says where the next
    run resumes; ``report`` on them is what was stored."""
    filters = filters or DumpFilter()
    plans = plan_formats([Path(p) for p in paths], fmt)
    result = DumpImport()
    table = None
    if any(name == S2_ABSTRACTS for _, name in plans):
        table = AbstractsTable(library.path / ABSTRACTS_TABLE)
        result.abstracts = _load_abstracts(table, [p for p, n in plans if n == S2_ABSTRACTS], result, say, restart)
    plans = [(p, n) for p, n in plans if n != S2_ABSTRACTS]
    book = ProgressBook(library.path)
    tracker = Tracker(library, book, [p for p, _ in plans])
    stream = _records(plans, filters, restart, result, tracker, table, say, progress)
    try:
        result.report = library.add_papers(stream, defer_embedding=defer_embedding)
    except BaseException as e:
        try:
            tracker.advance()
        except Exception as again:  # noqa: BLE001 - a lost store: the progress saved last stands
            log.info("could not record where the import stopped (%s); the last saved place stands", again)
        raise _stopped(e, tracker) from e
    finally:
        if table is not None:
            table.close()
    tracker.finish()
    if table is not None:
        table.path.unlink(missing_ok=True)  # the join is done; the table was only for it
    return result


def _records(plans: list[tuple[Path, str]], filters: DumpFilter, restart: bool, result: DumpImport,
             tracker: Tracker, table: AbstractsTable | None, say: Callable[[str], None],
             progress: Callable[[int, int | None], None] | None) -> Iterator[Paper | ImportFailure]:
    """The papers the filters keep, and the failures (the first MAX_FAILURES with their reasons)."""
    read = handed = failures = 0
    for index, (path, name) in enumerate(plans):
        fmt: DumpFormat = DUMP_FORMATS[name]
        mark, note = tracker.book.start(path, name, filters.spec(), restart=restart)
        count = FileCount(source_name(path), name, started_at=mark.record + 1)
        result.files.append(count)
        if note:
            say(note)
        if mark.done:
            count.skipped = True
            continue
        before = Position(mark.record, mark.offset)
        for after, record in positioned_records(path, before):
            read += 1
            count.read += 1
            item = _kept(record, fmt, filters, table, source_name(path), after.record)
            paper = item if isinstance(item, Paper) else None
            count.kept += paper is not None
            count.filtered += item is None
            tracker.read(index, before, after, paper)
            before = after
            if isinstance(item, ImportFailure):
                count.failed += 1
                failures += 1
                if failures <= MAX_FAILURES:
                    yield item
            if paper is not None:
                handed += 1
                yield paper
            if (paper is not None and handed % ADVANCE_EVERY == 0) or read % (64 * ADVANCE_EVERY) == 0:
                tracker.advance()  # also through long runs of filtered-out records
            if progress and read % 1000 == 0:
                progress(read, None)
    if failures > MAX_FAILURES:
        yield ImportFailure("dump", f"... and {failures - MAX_FAILURES:,} more records failed (their reasons are "
                            "not kept; the counts above say which files)")
    if progress:
        progress(read, None)


def _kept(record: dict[str, Any] | ImportFailure, fmt: DumpFormat, filters: DumpFilter,
          table: AbstractsTable | None, source: str, line: int) -> Paper | ImportFailure | None:
    """The record's paper when the filters keep it (None when they do not), or why it failed. Categories are
    checked on the raw record, before a Paper is made (most records of a filtered dump stop there)."""
    if isinstance(record, ImportFailure):
        return record
    if filters.categories and not filters.keeps_topics(fmt.topics(record)):
        return None
    if table is not None and fmt.name == "s2":
        record = table.joined(record)
    item = paper_or_failure(record, fmt, source, line)
    return None if isinstance(item, Paper) and not filters.keeps_year(item.year) else item


def _load_abstracts(table: AbstractsTable, files: list[Path], result: DumpImport, say: Callable[[str], None],
                    restart: bool) -> int:
    loaded = 0
    for f in files:
        count = FileCount(f.name, S2_ABSTRACTS)
        result.files.append(count)
        if table.loaded(f) and not restart:
            say(f"{f.name}: its abstracts were loaded by an earlier run")
            count.skipped = True
            continue
        t0 = time.perf_counter()
        n, failed = table.load(f)
        count.read, count.kept, count.failed = n + len(failed), n, len(failed)
        log.info("loaded %d abstracts from %s in %.1f s", n, f.name, time.perf_counter() - t0)
        loaded += n
    return loaded


def _stopped(error: BaseException, tracker: Tracker) -> BaseException:
    """The exception to raise when the import stopped: the library's, with where the next run resumes (a Ctrl-C
    the library did not word itself, e.g. while the search index was being rebuilt at the end, says it too)."""
    if not isinstance(error, (KeyboardInterrupt, ImportAbortedError)):
        return error
    where = tracker.resume_point()
    if where is None:
        return error
    path, record = where
    resume = f"the next run resumes at record {record:,} of {source_name(path)}."
    report = getattr(error, "report", None)
    if isinstance(error, ImportAbortedError):
        return ImportAbortedError(f"{error}".rstrip(".") + f"; {resume}", report)
    said = str(error).rstrip(".") if isinstance(error, ImportInterrupted) else "Interrupted: run the same command again"
    return ImportInterrupted(f"{said}; {resume}", report)
