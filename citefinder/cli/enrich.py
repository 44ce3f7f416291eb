"""``citefinder library enrich --from LIBRARY``: complete the library's entries (abstracts, DOIs, arXiv ids) from
a literature library folder or a named source (:mod:`citefinder.workflow.enrich`); ``--bib REFS.bib``: the
library kept beside that .bib (the one ``fill --bib`` and ``check`` use). The .bib itself is never written."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from citefinder.errors import InputError

__all__ = ["add_parser", "run"]


def add_parser(lsub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """The ``library enrich`` subcommand under ``library``'s subparsers."""
    p = lsub.add_parser("enrich", help="complete your entries (abstract, DOI, arXiv id) from a literature library; "
                                       "your .bib entries are changed only with --update-published")
    p.add_argument("--from", dest="source", metavar="LIBRARY",
                   help="a literature library folder (built with `library import` from a dump) or an online "
                        "source's name (default: the setting CITEFINDER_LITERATURE)")
    p.add_argument("--bib", type=Path, action="append", metavar="REFS.bib",
                   help="enrich the library kept beside this .bib (the one `fill --bib` and `check` use), made "
                        "and synced first; repeat for several .bib files of one library")
    p.add_argument("--update-published", action="store_true",
                   help="with --bib: write each entry cited as a preprint whose published version the source holds "
                        "as that version (same key: type, venue, year, pages, DOI), keeping REFS.bib.bak")
    p.add_argument("--json", type=Path, dest="json_out", metavar="FILE", help="write every outcome as JSON")
    p.add_argument("--quiet", action="store_true", help="print the summary and the ambiguous entries only")
    common(p)


def run(args: argparse.Namespace, settings: Any, open_library: Callable[[Any], Any]) -> int:
    from citefinder.cli.options import progress_bar
    from citefinder.cli.outputs import protect_inputs
    from citefinder.library.link import linked_files
    from citefinder.text.safewrite import WritePlan
    from citefinder.text.textsafe import terminal_safe
    from citefinder.workflow.enrich import complete, open_from

    spec = args.source or settings.literature
    if not spec:
        raise InputError("Name the literature library to enrich from: --from FOLDER (a library built with "
                         "`citefinder library import` of a dump) or set CITEFINDER_LITERATURE.")
    # the output checked before any work, never inside the folder it enriches from
    plan = protect_inputs(WritePlan(force=getattr(args, "force", False)), args, settings)
    if args.json_out is not None:
        plan.target("--json", args.json_out)
    if args.bib:
        from citefinder.cli.link import bib_library

        bibs = [b.expanduser().resolve() for b in args.bib]
        plan.protect("your .bib", bibs, editable=args.update_published)
        _, library, _ = bib_library(bibs, settings, explicit_library=args.library is not None)
    else:
        if args.update_published:
            raise InputError("--update-published rewrites the preprints of a .bib: give it with --bib REFS.bib.")
        library, bibs = open_library(settings), []
    plan.protect("a file linked to the library", [f for f in linked_files(library) if f not in bibs])
    plan.protect_folder("the library folder", library.path)
    source = open_from(spec, settings, library)  # an online source caches beside the library
    if source.sends:
        print(f"asking {source.name}: {source.sends}", file=sys.stderr)
    update, close = progress_bar(f"enriching from {source.name}", "papers")
    try:
        done = complete(library, source, progress=update)
    finally:
        close()
    for outcome in done.report.outcomes:
        if not args.quiet or outcome.status == "ambiguous":
            print(terminal_safe(f"  {outcome.line()}"))
    print(done.summary())
    preprints = _preprints(args, bibs, source, plan)
    if args.json_out is not None:
        data = {"source": done.source, "library": str(done.library), "summary": done.summary(),
                "outcomes": [asdict(o) for o in done.report.outcomes],
                "published": [v.to_dict() for _, v in preprints.found] if preprints else []}
        plan.put(args.json_out, json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"))
        plan.commit()
    return 0


def _preprints(args: argparse.Namespace, bibs: list[Path], source: Any, plan: Any) -> Any:
    """The .bib's preprints that were published, said; with --update-published, written (same keys, a backup)."""
    from citefinder.text.textsafe import terminal_safe
    from citefinder.workflow.published import find_in_bibs, write_published

    if not bibs:
        return None
    found = find_in_bibs(bibs, source)
    for line in found.lines():
        print(terminal_safe(f"  {line}"))
    if found.asked:  # a .bib citing no preprint gets no line about them
        print(found.summary())
    if args.update_published and found.found:
        for bib, keys, backup in write_published(plan, found):
            print(f"updated {len(keys)} entries of {bib} ({', '.join(keys)}); the old file is {backup}")
    return found
