"""``citefinder contexts``: the library's citation-context memory (how the literature, and you, cite its papers).

    citefinder contexts import contexts.jsonl.gz --split train --library DIR   # a context pack (README schema)
    citefinder contexts import my-paper/ thesis.zip --library DIR              # your own LaTeX projects
    citefinder contexts stats --library DIR
    citefinder contexts forget KEY --bib refs.bib --draft paper.tex            # one paper's picks, one draft's
    citefinder contexts clear --origin user --library DIR                      # forget the learned picks

``fill --bib`` and ``check`` learn into the library kept beside the .bib (``.refs.citefinder/``): ``--bib REFS.bib``
names it. ``stats``, ``forget`` and ``clear`` never create a library folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

PACK_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    top = sub.add_parser("contexts", help="the citation-context memory: import context packs and your LaTeX "
                                          "projects, see what it holds, forget learned picks")
    csub = top.add_subparsers(dest="contexts_command", required=True)
    p = csub.add_parser(
        "import", help="import context packs (JSONL, schema in the README) or LaTeX projects (folder, .zip, .tex)",
        description="Each record (a citing sentence and the paper it cites) is matched to the library's papers by "
        "DOI, arXiv id, doc_id or title; unmatched records are kept, so papers imported later match too. Only "
        "matched sentences are embedded. Importing the same records again adds nothing.")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE|DIR",
                   help="a pack (.jsonl, .jsonl.gz), a LaTeX project folder or .zip, or a .tex file")
    p.add_argument("--split", help="keep the pack records of this split only (e.g. train; same as --where split=S)")
    p.add_argument("--where", action="append", default=[], metavar="FIELD=VALUE",
                   help="keep pack records whose field equals (FIELD=VALUE) or differs from (FIELD!=VALUE) the "
                        "value; dotted for nested fields (citing.paper=github:owner/name); repeatable")
    p.add_argument("--bib", action="append", default=[], type=Path, metavar="REFS.bib",
                   help="for LaTeX: the .bib file(s) resolving its keys (default: the .bib files in the project)")
    common(p)
    p = csub.add_parser("stats", help="how many contexts the memory holds and how many library papers they cite")
    p.add_argument("--json", action="store_true")
    _bib_option(p)
    common(p)
    p = csub.add_parser("forget", help="forget the picks learned for one paper in one draft (all its sentences, or "
                                       "those holding --sentence TEXT); the other learned picks stay")
    p.add_argument("paper", metavar="KEY|DOC_ID", help="the paper's key (as in your .bib) or its doc_id")
    p.add_argument("--sentence", metavar="TEXT", help="only the learned sentences that contain TEXT")
    p.add_argument("--draft", metavar="DRAFT",
                   help="only the picks learned for this draft: its main .tex (as fill and check learn it) or a "
                        "name this command lists (draft:...); needed when several drafts hold picks of the paper")
    p.add_argument("--all-drafts", action="store_true", help="the paper's learned picks in every draft")
    _bib_option(p)
    common(p)
    p = csub.add_parser("clear", help="forget contexts: the learned picks (default), your LaTeX's, the packs', or all")
    p.add_argument("--origin", choices=("user", "latex", "pack", "all"), default="user",
                   help="user: the pairs learned from your picks (default); latex: from your LaTeX projects; "
                        "pack: from context packs; all: everything")
    _bib_option(p)
    common(p)


def _bib_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bib", type=Path, metavar="REFS.bib",
                   help="the library kept beside this .bib (.REFS.citefinder/), where fill --bib and check learn "
                        "(instead of --library)")


def run(args: argparse.Namespace, settings: Any, open_library: Callable[[Any], Any]) -> int:
    from citefinder.library.contexts import api

    if args.contexts_command != "import":
        settings = _existing_library(args, settings)
    library = open_library(settings)
    if args.contexts_command == "stats":
        counts = api.memory_counts(library)
        if args.json:
            print(json.dumps(counts, indent=2))
        else:
            for k, v in counts.items():
                print(f"{k:>18}: {v:,}")
        return 0
    if args.contexts_command == "forget":
        return _forget(args, library)
    if args.contexts_command == "clear":
        origins = ("user", "latex", "pack") if args.origin == "all" else (args.origin,)
        n = api.forget(library, origins)
        print(f"forgot {n:,} contexts ({args.origin}); the memory holds {api.memory_counts(library)['contexts']:,}")
        return 0
    return run_import(args, library)


def _existing_library(args: argparse.Namespace, settings: Any) -> Any:
    """The settings of the library ``stats``/``forget``/``clear`` read (``--bib``: the one beside that .bib); an
    InputError, and no folder created, when there is none."""
    from citefinder.errors import InputError
    from citefinder.library.link import library_beside

    if args.bib is not None:
        if args.library is not None:
            raise InputError("--bib names the library beside that .bib; --library names another: give one of them.")
        settings = settings.model_copy(update={"library": library_beside(args.bib)})
    folder = Path(settings.library).expanduser()
    if not folder.is_dir():
        beside = "" if args.bib is not None else (" (what fill --bib and check learn is kept in the library beside "
                                                  "the .bib: give --bib REFS.bib)")
        raise InputError(f"no library at {folder.resolve()}{beside}; nothing to read or forget.")
    return settings


def _forget(args: argparse.Namespace, library: Any) -> int:
    """``contexts forget KEY``: the paper's learned picks in one draft (``--draft``; the only one holding any;
    or every one with ``--all-drafts``); several drafts and no choice: say which, forget nothing
    (:func:`citefinder.workflow.learn.forget_paper`)."""
    from citefinder.workflow.learn import forget_paper

    done = forget_paper(library, args.paper, sentence=args.sentence, draft=args.draft, all_drafts=args.all_drafts)
    n, label = done.count, done.label
    where = f" in {', '.join(done.drafts)}" if done.drafts else ""
    print(f"forgot {n:,} learned pick{'s' if n != 1 else ''} of {label}{where}; the memory of the library "
          f"{library.path} holds {done.contexts:,} contexts")
    if not n and done.holding:
        print(f"  the drafts holding picks of {label}: {', '.join(done.holding)}", file=sys.stderr)
    return 0 if n else 1


Update = Callable[[int, int | None], None]


def _closing_first(close: Callable[[], None], update: Update) -> Update:
    """``update``, after closing the bar before it (its work is over: one bar at a time)."""

    def run(done: int, total: int | None) -> None:
        close()
        update(done, total)

    return run


def _import_with_bars(library: Any, records: Any, pack: str, reading: str | None) -> Any:
    """``api.import_contexts`` with a bar of the records read (titled ``reading``; none when None), then one of
    the matched sentences embedded, one bar at a time."""
    from citefinder.cli.options import progress_bar
    from citefinder.library.contexts import api

    read, close_read = progress_bar(reading, "records") if reading else (None, lambda: None)
    embedded, close_embedded = progress_bar("embedding sentences matched to your papers", "sentences")
    try:
        return api.import_contexts(library, records, pack=pack, progress=read,
                                   embed_progress=_closing_first(close_read, embedded))
    finally:
        close_read()
        close_embedded()


def run_import(args: argparse.Namespace, library: Any) -> int:
    from citefinder.errors import InputError
    from citefinder.index.base import derived_indexes
    from citefinder.library.contexts.records import parse_filters, read_pack
    from citefinder.retrieve.registry import index_kinds
    from citefinder.text.textsafe import terminal_safe
    from citefinder.train.contexts import is_latex_project, latex_records

    filters = parse_filters(list(args.where) + ([f"split={args.split}"] if args.split else []))
    packs = [p for p in args.paths if p.name.lower().endswith(PACK_SUFFIXES)]
    projects = [p for p in args.paths if p not in packs]
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        raise InputError(f"{', '.join(str(p) for p in missing)}: no such file; nothing was imported.")
    unknown = [p for p in projects if p.exists() and not is_latex_project(p)]
    if unknown:
        raise InputError(f"{unknown[0]}: neither a context pack (.jsonl, .jsonl.gz) nor a LaTeX project "
                         "(a folder with .tex files, a .zip, a .tex file)")
    if not packs and filters:
        raise InputError("--split and --where filter the records of a context pack; no pack was given")
    reports = [_import_with_bars(library, read_pack(pack, filters), pack.name, f"reading {pack.name}")
               for pack in packs]
    if projects:
        reports.append(_import_with_bars(library, latex_records(projects, args.bib), "latex", None))
    for report in reports:
        print(report.summary())
        for f in report.failures[:20]:
            print(terminal_safe(f"  skipped: {f.source}: {f.reason}"))
        if len(report.failures) > 20:
            print(f"  ... and {len(report.failures) - 20} more")
    derived_indexes(library).rebuild(index_kinds(library.settings, library), library)  # the first query is fast
    print("the cited-as, cited-like, co-cited and cited-often agents read it", file=sys.stderr)
    return 0


def learn_quietly(draft: Path, learn: Callable[[], int], *, library: Path | None = None) -> int:
    """Run ``learn`` (it adds the draft's citations to the memory of the library in the folder ``library``,
    returning how many were new) and say what it did in one line on stderr, naming that library (``contexts
    forget`` finds the picks there); learning is a bonus, so a failure is said there too, never a failed command."""
    import logging

    try:
        n = learn()
    except Exception as e:  # noqa: BLE001 - the command's own work is done; the traceback goes to the log
        logging.getLogger(__name__).warning("learning from %s failed", draft, exc_info=True)
        print(f"  could not learn the citations of {draft.name} for next time: {e}", file=sys.stderr)
        return 0
    if n:
        where = f" into the memory of the library {library}" if library is not None else ""
        print(f"learned {n} citation{'s' if n != 1 else ''} from {draft.name}{where}", file=sys.stderr)
    return n
