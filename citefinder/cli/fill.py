"""``citefinder fill`` and ``citefinder library link``: fill a draft's slots in its own cite commands,
either against the library (writing a .bib of the chosen papers) or against the user's own .bib
(``--bib refs.bib``: that file is the library, every key written is one of its keys).

A ``.tex`` draft is a LaTeX project: the files it ``\\input``s are read with it, each changed file is
written beside its original (``intro.cited.tex``) or in place after a ``.bak``, each in its own
encoding and line endings; ``\\bibliography{refs}`` names the .bib when ``--bib`` is not given. No
output may be one of the inputs.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

from citefinder.cli import literature as cli_literature
from citefinder.cli.outputs import cited_name, project_plan, protect_inputs, said_backups
from citefinder.errors import InputError
from citefinder.types import Paper, SlotResult
from citefinder.workflow import fill as workflow_fill
from citefinder.workflow.fill import FillRequest, draft_name

log = logging.getLogger(__name__)

__all__ = ["add_fill_arguments", "cited_name", "draft_name", "output_flags", "run_fill", "run_link", "slot_lines"]


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


def output_flags(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """(the filled draft, the references file) from -o/--output, --filled (old spelling of -o) and --bib-out.
    ``-o X.bib`` without ``--bib`` is the old spelling of ``--bib-out`` (a .bib is never a filled draft)."""
    output, bib_out = args.output, getattr(args, "bib_out", None)
    filled = getattr(args, "filled", None)
    if output is not None and output.suffix.lower() == ".bib" and not args.bib and bib_out is None:
        args.said_bib_out = True
        output, bib_out = None, output
    if filled is not None:
        if output is not None:
            raise InputError("-o/--output is the filled draft (--filled is its old name): give one of them.")
        output = filled
    if bib_out is not None and args.bib:
        raise InputError("--bib-out writes the papers chosen from the library; with --bib the draft cites your "
                         ".bib's keys and no .bib is written: drop one of them.")
    return output, bib_out


def read_draft(draft: Path) -> Any:
    """The draft as a :class:`~citefinder.text.project.Project` (:func:`citefinder.workflow.fill.read_draft`),
    the files it names but could not be read said on stderr."""
    project = workflow_fill.read_draft(draft)
    for line in project.missing:
        print(f"  not read: {line}", file=sys.stderr)
    return project


def run_fill(args: argparse.Namespace, settings: Any, open_pipeline: Callable[[Any], Any],
             progress: Callable[[str, str], Any]) -> int:
    from citefinder.library.link import library_beside, linked_files
    from citefinder.text.fill import normalize_command, unfilled_report

    command = normalize_command(args.cite_command)
    project = read_draft(args.draft)
    if args.in_place and not project.latex:
        raise InputError(f"--in-place rewrites the files of a LaTeX project; {args.draft.name} is not one: drop "
                         "--in-place, and give -o FILE for the filled draft (nothing was written).")
    output, bib_out = output_flags(args)
    bibs = [b.expanduser().resolve() for b in args.bib or []]
    if not bibs and bib_out is None and project.bibliographies:
        bibs = _named_bibs(project)
    if not bibs and bib_out is None:
        raise InputError("Give --bib-out FILE.bib for the references to write, "
                         "or --bib REFS.bib to cite your own .bib's keys.")
    explicit = args.library is not None
    folder = library_beside(bibs[0]) if bibs and not explicit else Path(settings.library)
    plan = protect_inputs(project_plan(project, bibs, folder, in_place=args.in_place,
                                       force=getattr(args, "force", False)), args, settings)
    outputs = _outputs(args, project, output, bib_mode=bool(bibs))
    for i, path in outputs.items():
        _plan_output(plan, project, i, path, named=i == 0 and output is not None, in_place=args.in_place)
    if bib_out is not None:
        plan.target("--bib-out", bib_out)
    if args.json_out is not None:
        plan.target("--json", args.json_out)
    lit = cli_literature.plan_literature(args, settings, plan, args.draft)
    if output is not None and output.suffix.lower() == ".bib":
        raise InputError(f"-o is the filled draft, not a .bib ({output.name}); the references file is --bib-out, "
                         "and with --bib the draft cites your .bib's keys (nothing was written).")
    if getattr(args, "said_bib_out", False):
        print(f"  note: -o {bib_out.name if bib_out else ''} is read as --bib-out (-o now names the filled draft)",
              file=sys.stderr)
    for b in project.bibliographies if not args.bib else ():
        if not b.is_file():
            print(f"  {project.main.name} names {b.name}, which is not there", file=sys.stderr)
    if bibs and not args.bib:
        print(f"citing the keys of {', '.join(b.name for b in bibs)} (named in {project.main.name})", file=sys.stderr)
    text = project.text
    if bibs:
        from citefinder.pipeline.pipeline import Pipeline

        settings, library, bib_keys = bib_library(bibs, settings, explicit_library=explicit)
        bib_keys |= lit.held_keys  # a paper added from the literature before: cited by its new-references.bib key
        library.embedder.encode(["warm up"])  # load the model here, so the dense stage's trace times the search only
        pipeline = Pipeline(settings, library)
    else:
        pipeline = open_pipeline(settings)
        bib_keys = None
    plan.protect("a file linked to the library", linked_files(pipeline.library))
    plan.protect_folder("the library folder", pipeline.library.path)
    cli_literature.attach(lit, settings, pipeline)
    request = FillRequest(text, latex=project.latex or None, command=command)
    update, close = progress("filling slots", "slots")
    try:
        results = workflow_fill.run_slots(pipeline, request, progress=lambda done, total, _r: update(done, total))
    finally:
        close()
    results = cli_literature.with_keys_to_be(results, pipeline.library, bib_keys, lit)
    if project.latex and settings.learn_from_picks:  # the cites the user already wrote join the memory
        from citefinder.cli.contexts import learn_quietly

        learn_quietly(args.draft, lambda: workflow_fill.learn_written_cites(pipeline.library, project, settings),
                      library=pipeline.library.path)
    slots = [r.slot for r in results if r.slot is not None]
    outcome = workflow_fill.choose_keys(results, pipeline.library, bib_keys=bib_keys, bibs=bibs)
    for i in outcome.unkeyed:
        print(f"  slot {i + 1}: the chosen paper has no key in {', '.join(b.name for b in bibs)}; left unfilled",
              file=sys.stderr)
    slot_keys = outcome.slot_keys
    if outcome.bib is not None:  # the user's own .bib entries byte for byte, the others as complete BibTeX
        assert bib_out is not None
        plan.put(bib_out, outcome.bib.encode("utf-8"))
    slot_keys = cli_literature.add_picked(lit, results, slot_keys, plan, pipeline.library, bib_keys)
    written = _put_filled(plan, project, slots, slot_keys, request.command, outputs, in_place=args.in_place)
    if args.json_out:
        rows = [{**r.to_dict(), "cite_keys": slot_keys.get(r.slot.index, []) if r.slot else [],
                 "cite_key": next(iter(slot_keys.get(r.slot.index) or []), None) if r.slot else None,
                 "file": project.name_of(project.line(r.slot.start)[0]) if r.slot else None} for r in results]
        plan.put(args.json_out, json.dumps(rows, indent=2, ensure_ascii=False).encode("utf-8"))
    said_backups(plan.commit())
    cli_literature.finish(lit, pipeline.library)
    shown = cli_literature.as_chosen(results, lit)
    for line in cli_literature.with_literature_lines(slot_lines(project, shown, slot_keys, command), results):
        print(line)
    where = f"; filled draft written to {written[0]}" if written else ""
    more = f" (and {len(written) - 1} more files: {', '.join(str(p) for p in written[1:])})" if len(written) > 1 else ""
    if bib_keys is None:
        print(f"{len(slot_keys)} of {len(slots)} slots filled; {outcome.entries} entries written to "
              f"{bib_out}{where}{more}")
    else:
        from citefinder.workflow.filled_from import filled_from  # which keys come from which .bib

        print(f"{filled_from(slot_keys, len(slots), bibs, lit.references)}{where}{more}")
    for line in unfilled_report(slots, slot_keys):
        print(f"  {line}")
    return 0


def _named_bibs(project: Any) -> list[Path]:
    """The .bib files the project names (``\\bibliography{refs}``), those that exist."""
    return [b for b in project.bibliographies if b.is_file()]


def _outputs(args: argparse.Namespace, project: Any, output: Path | None, *, bib_mode: bool) -> dict[int, Path]:
    """file index -> where its filled text goes, planned before any work: the main file (-o, else DRAFT.cited.tex),
    each other file that holds a placeholder (NAME.cited.tex) and each file on the include path between the main
    file and one of those (its copy includes theirs); with --in-place: each file itself."""
    from citefinder.cli.outputs import project_copies
    from citefinder.text.slots import find_slots

    if not bib_mode and output is None and not args.in_place:
        return {}  # filling from the library, the filled draft is written only when asked for (-o)
    holding = project.file_slots(find_slots(project.text, latex=project.latex))
    copies = project_copies(project, {i: project.files[i].text for i in holding},
                            _namer(project, output, in_place=args.in_place), always=[0])
    return {i: path for i, (path, _) in copies.items()}


def _namer(project: Any, output: Path | None, *, in_place: bool) -> Callable[[int], Path]:
    """Where file ``i``'s filled text goes: the main file's to -o when given; the others' beside them (or over them)."""
    def copy_of(i: int) -> Path:
        if i == 0 and output is not None:
            return output
        return _output_of(project.files[i].path, in_place=in_place and project.latex)

    return copy_of


def _output_of(path: Path, *, in_place: bool) -> Path:
    return path if in_place else cited_name(path)


def _plan_output(plan: Any, project: Any, i: int, path: Path, *, named: bool, in_place: bool) -> None:
    in_place = in_place and not named and project.latex and path == project.files[i].path
    copy = f"the filled copy of {project.name_of(project.files[i].path)}"
    label = "-o" if named else ("--in-place" if in_place else copy)
    plan.target(label, path, in_place=in_place, parents=i != 0)  # -o elsewhere: its sections/ made there


def _put_filled(plan: Any, project: Any, slots: list[Any], keys: Mapping[int, Sequence[str]], command: str,
                outputs: dict[int, Path], *, in_place: bool) -> list[Path]:
    """Queue each filled file (the main one always, when it has an output; the others when they changed) with the
    cites CiteFinder wrote into it (and those it had written there before, :func:`~citefinder.text.written.
    carried_cites`), and a copy of every file on the include path to a filled copy, naming the filled copies
    (:func:`~citefinder.cli.outputs.project_copies`): the main file's copy compiles the filled text."""
    from citefinder.cli.outputs import project_copies
    from citefinder.text.written import carried_cites, cites_written, new_cites

    if not outputs:
        return []
    changed = workflow_fill.filled_files(project, slots, keys, command)
    namer = _namer(project, None, in_place=in_place)
    copies = project_copies(project, changed, lambda i: outputs.get(i) or namer(i), always=[0])
    ours = cites_written(f.path for f in project.files)
    written = []
    for i, (path, text) in copies.items():
        source = project.files[i]
        if i not in changed and path == source.path:
            continue  # the main file, written over itself, with nothing filled
        if i not in outputs:  # a file the plan did not foresee (a slot the engine found, a file on its path)
            outputs[i] = path
            _plan_output(plan, project, i, path, named=False, in_place=in_place)
        plan.put(path, text, codec=source.encoding, bom=source.bom, source=source.path,
                 cites=[*new_cites(source.text, text), *carried_cites(source.text, text, ours.of(source.path))])
        written.append(path)
    return written


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


def bib_library(bibs: list[Path], settings: Any, *, explicit_library: bool) -> tuple[Any, Any, set[str]]:
    """The workflow's library of the .bib files (``workflow.bib_library``), its link reports said on stderr."""
    from citefinder.workflow.bib_library import open_bib_library

    opened = open_bib_library(bibs, settings, explicit_library=explicit_library)
    for report in opened.reports:
        say_link_report(report, file=sys.stderr, summary=report.changed)
    return opened.settings, opened.library, set(opened.keys)


def say_link_report(report: Any, *, file: Any = None, summary: bool = True) -> None:
    """A link report's summary (where asked), then its first 20 failures and notes."""
    if summary:
        print(report.summary(), file=file)
    for f in report.failures[:20]:
        print(f"  could not read: {f.source}: {f.reason}", file=file)
    for note in report.notes[:20]:
        print(f"  note: {note}", file=file)


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
