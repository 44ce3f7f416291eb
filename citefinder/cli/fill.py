"""``citefinder fill``: fill a draft's slots in its own cite commands, either against the library (writing a .bib
of the chosen papers) or against the user's own .bib (``--bib refs.bib``: that file is the library, every key
written is one of its keys). The fill is the workflow's (:func:`citefinder.workflow.filling.fill`): this module
turns the arguments into a :class:`~citefinder.workflow.fill.FillRequest` and the outcome into lines.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

from citefinder.cli import literature as cli_literature
from citefinder.cli.link import bib_library, run_link, say_link_report
from citefinder.cli.outputs import cited_name, protect_inputs, said_backups
from citefinder.errors import InputError
from citefinder.types import Paper, SlotResult
from citefinder.workflow.fill import FillRequest, draft_name

__all__ = ["add_fill_arguments", "bib_library", "cited_name", "draft_name", "output_flags", "read_draft", "run_fill",
           "run_link", "say_link_report", "slot_lines", "summary_lines"]


def add_fill_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("draft", type=Path, help="draft: .pdf, .tex (with the files it \\input), .txt or .md")
    p.add_argument("--bib", type=Path, action="append", metavar="REFS.bib",
                   help="your own .bib (or CSL-JSON; repeat for several): it becomes the library (kept in a folder "
                        "beside it, re-imported when it changes) and the draft cites its keys. Default for a .tex: "
                        "the files its \\bibliography{} or \\addbibresource{} name")
    p.add_argument("-o", "--output", type=Path, metavar="FILLED",
                   help="the filled draft (default: DRAFT.cited.tex when the draft cites your .bib; each \\input "
                        "file that changes is written as NAME.cited.tex)")
    p.add_argument("--filled", type=Path, help=argparse.SUPPRESS)  # the old spelling of -o
    p.add_argument("--bib-out", type=Path, metavar="REFS.bib",
                   help="filling from the library (no --bib): the BibTeX file of the chosen papers to write")
    p.add_argument("--in-place", action="store_true",
                   help="write the filled .tex files over themselves, each kept first as FILE.bak (FILE.bak.1 ...)")
    p.add_argument("--force", action="store_true",
                   help="replace an output you named that is read-only or that CiteFinder did not write for this "
                        "draft, keeping NAME.bak of it (never one of the draft's files, a .bib or the library)")
    p.add_argument("--cite-command", default="\\cite", metavar="CMD",
                   help="command for plain [CITATION] markers, e.g. citep or autocite (default \\cite); "
                        "\\citep{?}-style placeholders keep their own command")
    p.add_argument("--json", type=Path, dest="json_out", help="write the full results with traces as JSON")
    cli_literature.add_literature_arguments(p)


def output_flags(args: argparse.Namespace) -> tuple[Path | None, Path | None, tuple[str, ...]]:
    """(the filled draft, the references file, notes to say once the outputs are checked) from -o/--output,
    --filled (old spelling of -o) and --bib-out. ``-o X.bib`` without ``--bib`` is the old spelling of
    ``--bib-out`` (a .bib is never a filled draft)."""
    output, bib_out = args.output, getattr(args, "bib_out", None)
    notes: tuple[str, ...] = ()
    if output is not None and output.suffix.lower() == ".bib" and not args.bib and bib_out is None:
        notes = (f"  note: -o {output.name} is read as --bib-out (-o now names the filled draft)",)
        output, bib_out = None, output
    if getattr(args, "filled", None) is not None:
        if output is not None:
            raise InputError("-o/--output is the filled draft (--filled is its old name): give one of them.")
        output = args.filled
    if bib_out is not None and args.bib:
        raise InputError("--bib-out writes the papers chosen from the library; with --bib the draft cites your "
                         ".bib's keys and no .bib is written: drop one of them.")
    return output, bib_out, notes


def read_draft(draft: Path) -> Any:
    """The draft as read (:func:`citefinder.workflow.fill.read_draft`), the files it names but could not be read
    said on stderr (``check`` reads its draft here)."""
    from citefinder.workflow import fill as workflow_fill

    project = workflow_fill.read_draft(draft)
    for line in project.missing:
        print(f"  not read: {line}", file=sys.stderr)
    return project


def run_fill(args: argparse.Namespace, settings: Any, open_pipeline: Callable[[Any], Any],
             progress: Callable[[str, str], Any]) -> int:
    from citefinder.workflow.filling import fill

    output, bib_out, notes = output_flags(args)
    request = FillRequest(draft=args.draft, bibs=tuple(args.bib or ()), output=output, bib_out=bib_out, notes=notes,
                          command=args.cite_command, in_place=args.in_place, force=getattr(args, "force", False),
                          json_out=args.json_out, explicit_library=args.library is not None,
                          literature=cli_literature.literature_ask(args))
    outcome = fill(request, settings, open_pipeline=open_pipeline, protect=lambda plan: protect_inputs(plan, args,
                   settings), progress=progress, say=lambda line: print(line, file=sys.stderr))
    said_backups(outcome.backups)
    for line in cli_literature.outcome_lines(outcome, slot_lines(outcome.project, cli_literature.shown(outcome),
                                                                   outcome.slot_keys, outcome.command)):
        print(line)
    for line in summary_lines(outcome, bib_out):
        print(line)
    return 0


def summary_lines(outcome: Any, bib_out: Path | None) -> list[str]:
    """How many slots were filled, with what, where the files went, and the slots left unfilled."""
    from citefinder.text.fill import unfilled_report

    written, keys = outcome.written, outcome.slot_keys
    slots = [r.slot for r in outcome.results if r.slot is not None]
    where = f"; filled draft written to {written[0]}" if written else ""
    more = f" (and {len(written) - 1} more files: {', '.join(str(p) for p in written[1:])})" if len(written) > 1 else ""
    if not outcome.bibs:
        head = f"{len(keys)} of {len(slots)} slots filled; {outcome.entries} entries written to {bib_out}{where}{more}"
    else:
        from citefinder.workflow.filled_from import filled_from  # which keys come from which .bib

        head = f"{filled_from(keys, len(slots), outcome.bibs, outcome.references)}{where}{more}"
    return [head, *(f"  {line}" for line in unfilled_report(slots, keys))]


def slot_lines(project: Any, results: list[SlotResult], keys: Mapping[int, Sequence[str]], command: str,
               top: int = 3) -> list[str]:
    """Per slot: where it is, the cite it got (``\\cite{a,b}`` when it cites several papers), or the keys of
    the top candidates when it abstained."""
    lines = []
    for r in results:
        if r.slot is None:
            continue
        path, line_no = project.line(r.slot.start)
        where = f"line {line_no}" if path == project.main else f"{project.name_of(path)}, line {line_no}"
        head = f"Slot {r.slot.index + 1} ({where}):"
        key = ",".join(keys.get(r.slot.index) or ())
        if key:
            titles = " + ".join(p.title for p in r.selection.papers)
            lines.append(f"{head} {r.slot.command or command}{{{key}}}  {titles} "
                         f"(confidence {r.selection.confidence:.2f})")
        else:
            near = [_label(c.paper) for c in r.candidates[:top]]
            lines.append(f"{head} abstained; top candidates: {', '.join(near) if near else 'none'}")
    return lines


def _label(paper: Paper) -> str:
    return paper.key or paper.doc_id
