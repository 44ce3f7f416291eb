"""``library import`` of the dumps of the literature (formats, filters, resume) and ``library embed`` on the
device the machine has (see :mod:`citefinder.library.dumps` and
:func:`citefinder.library.encoders.embedder.resolve_device`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

from citefinder.cli.options import progress_bar

FORMATS = ("arxiv", "openalex", "s2", "jsonl")
_DUMPS = ("arxiv", "openalex", "s2", "s2-abstracts")


def add_device_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the embedder runs: auto (default) takes the GPU when torch sees one (bigger batches "
                        "there); the int8 embedder (minilm-int8) always runs on the CPU")


def add_import_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("dumps of the literature (streamed, filtered, resumable)")
    g.add_argument("--format", choices=FORMATS, default=None,
                   help="read the files as this format (default: told by each file's first record); jsonl is "
                        "CiteFinder's own JSON Lines, read resumably")
    g.add_argument("--category", metavar="LIST", default=None,
                   help="keep records in any of these comma-separated categories: arXiv categories (cs.CL,cs.LG; "
                        "cs or cs.* for all of cs), OpenAlex topic / subfield / field / domain or concept names "
                        "('Computer Science'), Semantic Scholar fields of study")
    g.add_argument("--years", metavar="RANGE", default=None,
                   help="keep records of these years: 2015-2020, 2015-, -2020 or 2019 (records without a year are "
                        "left out when given)")
    g.add_argument("--restart", action="store_true",
                   help="read every file from its start, forgetting where an earlier import of it stopped")
    add_device_option(p)


def is_dump_import(args: argparse.Namespace) -> bool:
    """A dump import: a dump option was given, or a file's first record is a dump's (not CiteFinder's JSONL)."""
    if args.format or args.category or args.years or args.restart:
        return True
    from citefinder.library.readers import sniff_format

    return any(Path(f).is_file() and not Path(f).name.lower().endswith((".bib", ".pdf"))
               and sniff_format(Path(f)) in _DUMPS for f in args.files)


def embedder_for(args: argparse.Namespace, settings: Any) -> Any:
    """The library's embedder on the asked device, for commands that embed (import, embed); None: the default."""
    device = getattr(args, "device", None)
    if device is None or device == "cpu":
        return None
    from citefinder.library.encoders.embedder import Embedder, resolve_device

    if device == "cuda":
        resolve_device(device, settings.embedder)  # no GPU: say so now, before anything is read
    return Embedder(settings.embedder, settings.embed_max_seq_length, settings.embed_batch_size, device=device)


def imported(run: Callable[[Callable[[int, int | None], None]], Any], lib: Any,
             print_report: Callable[[Any, Any], None], desc: str, unit: str) -> Any:
    """``run(progress)`` under a progress bar; stopped (an abort, Ctrl-C), the failures of the part it
    imported are reported before the stop goes on."""
    from citefinder.errors import ImportAbortedError

    update, close = progress_bar(desc, unit)
    try:
        return run(update)
    except (ImportAbortedError, KeyboardInterrupt) as e:
        close()
        partial = getattr(e, "report", None)
        if partial is not None and partial.failures:
            print_report(partial, lib)
        raise
    finally:
        close()


def say_pending(lib: Any) -> None:
    """One line when papers still await their vectors; one when the static vectors are out of date."""
    if lib.pending_count():
        print(f"{lib.pending_count()} papers await dense vectors (BM25 finds them already): "
              "run `citefinder library embed`, which can be interrupted and resumed")
    from citefinder.index.static import static_state

    state = static_state(lib)
    if state is not None and not state.current:
        print(state.line())


def run_import(args: argparse.Namespace, lib: Any, print_report: Callable[[Any, Any], None]) -> int:
    from citefinder.library.dumps import DumpFilter, import_dumps, parse_categories, parse_years
    from citefinder.text.textsafe import terminal_safe

    filters = DumpFilter(parse_categories(args.category), parse_years(args.years))
    t0 = time.perf_counter()
    result = imported(lambda progress: import_dumps(
        lib, args.files, fmt=args.format, filters=filters, defer_embedding=args.defer_embedding,
        restart=args.restart, say=lambda s: print(terminal_safe(s), file=sys.stderr), progress=progress),
        lib, print_report, "reading", "records")
    for line in result.lines():
        print(terminal_safe(line))
    print_report(result.report, lib)
    print(f"searchable (BM25) {time.perf_counter() - t0:.1f} s after the start")
    if not args.defer_embedding and result.report.added and lib.embedder.device_used:
        print(f"embedded on {lib.embedder.device_label()}")
    say_pending(lib)
    return 0


def run_embed(lib: Any) -> int:
    """Embed the queued papers; say on which device, how fast, and how many are left."""
    update, close = progress_bar("embedding", "papers")
    t0 = time.perf_counter()
    try:
        n = lib.embed_pending(progress=update)
    finally:
        close()
    elapsed = time.perf_counter() - t0
    where = f" on {lib.embedder.device_label()}" if n else ""
    rate = f" in {elapsed:.1f} s ({n / elapsed:.1f} papers/s)" if n and elapsed > 0 else ""
    print(f"embedded {n} papers{where}{rate}; {lib.embedded_count()} of {lib.count()} papers have dense vectors")
    return 0


def run_embed_static(lib: Any) -> int:
    """Build the library's static vectors (:func:`citefinder.index.static.build_static`); say how long it took."""
    from citefinder.index.static import build_static

    update, close = progress_bar("static vectors", "papers")
    try:
        built = build_static(lib, progress=update)
    finally:
        close()
    print(f"static vectors of {built.papers} papers in {built.seconds:.1f} s ({built.encoded} encoded now, the "
          f"others kept; {built.folder}); {lib.embedded_count()} of {lib.count()} papers have MiniLM vectors")
    return 0
