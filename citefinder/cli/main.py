"""The ``citefinder`` command. Heavy modules are imported inside the commands so ``--help`` is instant."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any, Sequence

from citefinder.cli.options import add_common_options, configure_logging, progress_bar
from citefinder.errors import CitefinderError

log = logging.getLogger(__name__)


def _common(p: argparse.ArgumentParser) -> None:
    add_common_options(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citefinder",
        description="Find the papers behind every [CITATION] in your draft, from your own library.",
        epilog="Options of the library and models group go before or after the command: "
        "citefinder --library DIR fill draft.pdf --bib-out refs.bib",
    )
    add_common_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True)

    lib = sub.add_parser("library", help="import, inspect, search and edit the paper library")
    lsub = lib.add_subparsers(dest="library_command", required=True)
    p = lsub.add_parser("import", help="import .bib, .jsonl(.gz), CSL-JSON (.json), paper PDFs, or a dump of the "
                                       "literature (arXiv metadata snapshot, OpenAlex works, Semantic Scholar papers)")
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--defer-embedding", action="store_true",
                   help="store papers now (BM25 finds them at once); compute dense vectors later with `library embed`")
    from citefinder.cli import dumps as cli_dumps

    cli_dumps.add_import_options(p)
    _common(p)
    p = lsub.add_parser("embed", help="compute the dense vectors of papers imported with --defer-embedding (resumable)")
    p.add_argument("--static", action="store_true",
                   help="instead, the static vectors of every paper (a distilled MiniLM: minutes for 333k papers on "
                        "a CPU), a literature library's dense first pass")
    cli_dumps.add_device_option(p)
    _common(p)
    p = lsub.add_parser("stats", help="what the library holds, and on which device `library embed` would embed")
    p.add_argument("--json", action="store_true")
    cli_dumps.add_device_option(p)
    _common(p)
    p = lsub.add_parser("search", help="keyword (BM25) search of the library")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--json", action="store_true")
    _common(p)
    p = lsub.add_parser("repair", help="rebuild the BM25 index and manifest from what the store holds")
    _common(p)
    p = lsub.add_parser("remove", help="remove papers by doc_id")
    p.add_argument("doc_ids", nargs="+")
    _common(p)
    p = lsub.add_parser("link", help="follow your .bib or CSL-JSON (e.g. a Better BibTeX auto-export): "
                                     "re-imported whenever it changes")
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--accept-removals", action="store_true",
                   help="apply a change that removes most (or all) of a linked file's entries; without it such a "
                        "change (a half-written export, an emptied file) is held and every paper kept")
    _common(p)
    p = lsub.add_parser("unlink", help="stop following a linked file (its papers stay)")
    p.add_argument("files", nargs="+", type=Path)
    _common(p)
    p = lsub.add_parser("links", help="list the linked files")
    _common(p)
    from citefinder.cli import enrich as cli_enrich

    cli_enrich.add_parser(lsub, _common)

    p = sub.add_parser("find", help="find the cited paper for each [CITATION] in a text")
    p.add_argument("text", help="text with [CITATION] slots (or - to read standard input)")
    p.add_argument("--json", action="store_true", help="print the full results with traces as JSON")
    p.add_argument("--top", type=int, default=5, help="candidates to show per slot")
    _common(p)

    p = sub.add_parser("fill", help="fill every slot of a draft: -o the filled draft, --bib-out the .bib of the "
                                    "chosen papers (--bib REFS.bib: cite the keys of your own .bib)")
    from citefinder.cli import fill as cli_fill

    cli_fill.add_fill_arguments(p)
    _common(p)

    from citefinder.cli import check as cli_check

    cli_check.add_parser(sub, _common)
    from citefinder.cli import contexts as cli_contexts

    cli_contexts.add_parser(sub, _common)
    from citefinder.cli import eval as cli_eval

    cli_eval.add_parser(sub, _common)
    from citefinder.cli import optimize as cli_optimize

    cli_optimize.add_parser(sub, _common)
    from citefinder.cli import reranker as cli_reranker

    cli_reranker.add_parser(sub)
    from citefinder.cli import embedder as cli_embedder

    cli_embedder.add_parser(sub)
    return parser


def settings_from_args(args: argparse.Namespace) -> Any:
    from citefinder.config import Settings

    overrides = {
        "library": getattr(args, "library", None),
        "chroma_host": getattr(args, "chroma_host", None),
        "embedder": getattr(args, "embedder", None),
        "reranker": getattr(args, "reranker", None),
        "llm_model": getattr(args, "llm_model", None),
        "llm_api_base": getattr(args, "llm_api_base", None),
    }
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def _open_library(settings: Any, *, repair: bool = False, embedder: Any = None) -> Any:
    """The library, with its linked .bib/CSL-JSON files re-imported when they changed."""
    from citefinder.library.link import sync_all
    from citefinder.library.store import Library
    from citefinder.retrieve.registry import keep_indexes_current

    library = Library.open(settings, repair=repair, embedder=embedder)
    keep_indexes_current(settings, library)
    for report in sync_all(library):
        if report.changed or report.failures:
            print(report.summary(), file=sys.stderr)
    return library


def _print_report(report: Any, lib: Any) -> None:
    """The import summary and its failures; every line from user data made terminal-safe."""
    from citefinder.text.textsafe import terminal_safe

    updated = getattr(report, "updated", ())
    changed = f"updated {len(updated)} ({', '.join(updated[:10])}{', ...' if len(updated) > 10 else ''}), " \
        if updated else ""
    print(f"added {report.added}, {changed}duplicates skipped {report.duplicates}, failures {len(report.failures)} "
          f"in {report.elapsed_s:.1f} s; library now holds {lib.count()} papers")
    for f in report.failures[:50]:
        print(terminal_safe(f"  failed: {f.source}: {f.reason}"))
    if len(report.failures) > 50:
        print(f"  ... and {len(report.failures) - 50} more failures")


def cmd_library(args: argparse.Namespace, settings: Any) -> int:
    if args.library_command == "repair":
        lib = _open_library(settings, repair=True)
        for line in lib.repair_log:
            print(line)
        for line in lib.problems() or ["the library is consistent"]:
            print(line)
        print(f"repaired: library holds {lib.count()} papers ({lib.pending_count()} awaiting vectors)")
        return 0
    if args.library_command == "enrich":
        from citefinder.cli import enrich as cli_enrich

        return cli_enrich.run(args, settings, _open_library)
    from citefinder.cli import dumps as cli_dumps

    lib = _open_library(settings, embedder=cli_dumps.embedder_for(args, settings))
    if args.library_command == "import" and cli_dumps.is_dump_import(args):
        return cli_dumps.run_import(args, lib, _print_report)
    if args.library_command == "import":
        report = cli_dumps.imported(lambda progress: lib.import_files(args.files, progress=progress,
                                                                      defer_embedding=args.defer_embedding),
                                    lib, _print_report, "importing", "papers")
        _print_report(report, lib)
        cli_dumps.say_pending(lib)
        return 0
    if args.library_command == "embed":
        return cli_dumps.run_embed_static(lib) if args.static else cli_dumps.run_embed(lib)
    if args.library_command == "stats":
        stats = lib.stats()
        if args.json:
            print(json.dumps(stats, indent=2))
        else:
            for k, v in stats.items():
                print(f"{k:>15}: {v}")
        return 0
    if args.library_command == "search":
        from citefinder.cli.report import paper_line
        from citefinder.text.textsafe import json_safe, terminal_safe

        hits = lib.bm25_search(args.query, args.k)
        papers = {p.doc_id: p for p in lib.get([h.doc_id for h in hits])}
        if args.json:
            print(json_safe(json.dumps([{"rank": h.rank, "score": h.score, **papers[h.doc_id].to_dict()} for h in hits],
                                       indent=2)))
        elif not hits:
            print("no match" if lib.count() else "the library is empty: citefinder library import FILE")
        for h in [] if args.json else hits:
            key = papers[h.doc_id].key
            print(terminal_safe(f"{h.rank:>3}. {h.score:6.2f}  {paper_line(papers[h.doc_id])}"
                                + (f"  key {key}" if key else "")))
        return 0
    if args.library_command in ("link", "unlink", "links"):
        from citefinder.cli.link import run_link

        return run_link(args, lib)
    removed = lib.remove(args.doc_ids)
    print(f"removed {removed} of {len(args.doc_ids)}; library now holds {lib.count()} papers")
    return 0 if removed == len(set(args.doc_ids)) else 1


def _pipeline(settings: Any) -> Any:
    from citefinder.pipeline.pipeline import Pipeline

    library = _open_library(settings)
    library.embedder.encode(["warm up"])  # load the model here, so the dense stage's trace times the search only
    return Pipeline(settings, library)


def cmd_find(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.cli.report import render_result
    from citefinder.text.textsafe import json_safe, terminal_safe

    text = sys.stdin.read() if args.text == "-" else args.text
    results = _pipeline(settings).cite_text(text)
    if args.json:
        print(json_safe(json.dumps([r.to_dict() for r in results], indent=2, ensure_ascii=False)))
    else:
        print(terminal_safe("\n\n".join(_with_key(render_result(r, top=args.top), r) for r in results)))
    return 0


def _with_key(text: str, result: Any) -> str:
    """A rendered result followed by the chosen paper's own citation key, when it has one."""
    paper = result.selection.paper
    return f"{text}\n  Key: {paper.key}" if paper is not None and paper.key else text


def cmd_fill(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.cli import fill as cli_fill

    return cli_fill.run_fill(args, settings, _pipeline, progress_bar)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)  # imports a few modules: a Ctrl-C can land here too
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    configure_logging(args.verbose)
    from citefinder.config import offline_environment

    offline_environment()
    settings = None
    try:
        settings = settings_from_args(args)
        if args.command == "library":
            return cmd_library(args, settings)
        if args.command == "find":
            return cmd_find(args, settings)
        if args.command == "contexts":
            from citefinder.cli import contexts as cli_contexts

            return cli_contexts.run(args, settings, _open_library)
        if args.command == "eval":
            from citefinder.cli import eval as cli_eval

            return cli_eval.run(args, settings)
        if args.command == "optimize":
            from citefinder.cli import optimize as cli_optimize

            return cli_optimize.run(args, settings)
        if args.command == "reranker":
            from citefinder.cli import reranker as cli_reranker

            return cli_reranker.run(args, settings)
        if args.command == "check":
            from citefinder.cli import check as cli_check

            return cli_check.run(args, settings, progress_bar)
        if args.command == "embedder":
            from citefinder.cli import embedder as cli_embedder

            return cli_embedder.run(args, settings)
        return cmd_fill(args, settings)
    except CitefinderError as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        # ImportInterrupted says what was kept and how to resume; a bare Ctrl-C elsewhere needs no more
        print(f"\n{_one_line(e) or 'interrupted'}", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the last line of defence: one clear line, details with -v
        return _report_unexpected(e, settings, verbose=args.verbose)


def _one_line(e: BaseException) -> str:
    from citefinder.text.textsafe import terminal_safe

    return terminal_safe(" ".join(str(e).split()))


def _report_unexpected(e: Exception, settings: Any, *, verbose: bool) -> int:
    """Each error class as itself: invalid settings, a lost store, a full disk, or a bug."""
    from pydantic import ValidationError

    from citefinder.library.store import faults

    log.debug("unhandled error", exc_info=True)
    if isinstance(e, ValidationError):
        problems = "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors())
        print(f"error: invalid setting: {problems}", file=sys.stderr)
        return 2
    kind = faults.classify(e)
    if kind != faults.OTHER:
        where = "the library"
        if settings is not None:
            where = f"server {settings.chroma_host}" if settings.chroma_host else str(settings.library)
        explained = faults.explain(e, where=where, kept="nothing was changed by this command", resume="run it again")
        print(f"error: {explained}", file=sys.stderr)
        return 2
    hint = "" if verbose else " (run with -v for the traceback)"
    if verbose:
        log.error("unexpected error", exc_info=e)
    print(f"error: unexpected {type(e).__name__}: {_one_line(e)}{hint}", file=sys.stderr)
    return 1

if __name__ == "__main__":
    sys.exit(main())
