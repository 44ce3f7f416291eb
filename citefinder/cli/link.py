"""``citefinder library link FILE``, ``library unlink FILE``, ``library links``, and the library of a .bib for
``check`` and ``library enrich`` (:mod:`citefinder.workflow.bib_library`), its link reports said on stderr."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["bib_library", "run_link", "say_link_report"]


def bib_library(bibs: list[Path], settings: Any, *, explicit_library: bool) -> tuple[Any, Any, set[str]]:
    """The workflow's library of the .bib files (``workflow.bib_library``), its link reports said on stderr."""
    from citefinder.workflow.bib_library import open_bib_library

    opened = open_bib_library(bibs, settings, explicit_library=explicit_library)
    for report in opened.reports:
        say_link_report(report, file=sys.stderr, summary=report.changed)
    return opened.settings, opened.library, set(opened.keys)


def say_link_report(report: Any, *, file: Any = None, summary: bool = True) -> None:
    """A link report's summary (where asked), then its first 20 failures and notes."""
    from citefinder.workflow.bib_library import link_report_lines

    for line in link_report_lines(report, summary=summary):
        print(line, file=file)


def run_link(args: argparse.Namespace, library: Any) -> int:
    """``library link FILE``, ``library unlink FILE``, ``library links``."""
    from citefinder.library.link import link_file, linked_files, unlink_file

    if args.library_command == "link":
        held = 0
        for path in args.files:
            report = link_file(library, path, accept_removals=getattr(args, "accept_removals", False))
            held += report.held
            say_link_report(report)
        print(f"library now holds {library.count()} papers; linked files are re-imported when they change")
        return 1 if held else 0
    if args.library_command == "unlink":
        gone = [p for p in args.files if unlink_file(library, p)]
        print(f"unlinked {len(gone)} of {len(args.files)} (their papers stay in the library)")
        return 0 if len(gone) == len(args.files) else 1
    for path in linked_files(library):
        print(path)
    return 0
