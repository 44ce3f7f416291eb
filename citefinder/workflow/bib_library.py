"""The library of a .bib: the library kept beside the (first) .bib, synced with it, and the keys the files hold.

``fill``, ``check`` and ``library enrich`` given a .bib all start here; the CLI says the link reports, the pages
pair a .bib their own way (``ui/paired_bib.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.types import Paper


@dataclass(frozen=True)
class BibLibrary:
    """What opening a .bib's library gave: the settings pointing at it, the open library, the .bib files' keys,
    and the link reports of the files (re)imported on the way (changed, held, failures, notes)."""

    settings: Any
    library: Any
    keys: frozenset[str]
    reports: tuple[Any, ...]


def open_bib_library(bibs: list[Path], settings: Any, *, explicit_library: bool) -> BibLibrary:
    """Settings for the library kept beside the first .bib (or the one given), that library synced with
    the .bib files (and its other linked files), and the keys they hold."""
    from citefinder.library.link import library_beside, link_file, linked_files, sync_all
    from citefinder.library.readers import read_papers
    from citefinder.library.store import Library

    for bib in bibs:
        if not bib.is_file():
            raise InputError(f"Cannot read {bib}: no such file.")
    if not explicit_library:
        settings = settings.model_copy(update={"library": library_beside(bibs[0])})
    library = Library.open(settings)
    linked = linked_files(library)
    reports = tuple([link_file(library, bib) for bib in bibs if bib not in linked] + sync_all(library))
    keys = frozenset(p.key for bib in bibs for p in read_papers(bib) if isinstance(p, Paper) and p.key)
    if not keys:
        # the error ends the command before the reports are said: the held ones (the library kept) go in it
        held = " ".join(report.summary() for report in reports if report.held)
        names = ", ".join(b.name for b in bibs)
        raise InputError(f"{names} holds no entry with a key; nothing could be cited from it"
                         + (f". {held}" if held else "."))
    return BibLibrary(settings=settings, library=library, keys=keys, reports=reports)


def link_report_lines(report: Any, *, summary: bool = True) -> list[str]:
    """What to say of a link report: its summary (where asked), then its first 20 failures and notes."""
    lines = [report.summary()] if summary else []
    lines += [f"  could not read: {f.source}: {f.reason}" for f in report.failures[:20]]
    return lines + [f"  note: {note}" for note in report.notes[:20]]
