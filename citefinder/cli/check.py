"""``citefinder check main.tex --bib refs.bib``: does every cited key fit its context, which papers fit it
better, and is the .bib in order. Exit code 1 when a citation is likely wrong (for CI in a paper's
repository); ``--fix OLD=NEW`` writes the draft with a key replaced, to new files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from citefinder.cli.outputs import project_plan, protect_inputs, said_backups
from citefinder.errors import CitefinderError, InputError
from citefinder.workflow import check as workflow_check


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("check", help="check the citations a LaTeX draft already holds against its .bib; "
                                     "exit code 1 when one is likely wrong")
    p.add_argument("draft", type=Path, help="the main .tex (the files it \\input are read with it)")
    p.add_argument("--bib", type=Path, action="append", metavar="REFS.bib",
                   help="your .bib (repeat for several); default: the files \\bibliography{} or \\addbibresource{} "
                        "name. Its library is kept beside it, as with fill --bib")
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="a reference library folder (e.g. built from papers-333k), read only: entries no paper of "
                        "it matches are listed (an invented reference matches none), and entries whose fields "
                        "disagree with its record")
    p.add_argument("--json", type=Path, dest="json_out", metavar="FILE",
                   help="write one record per cited key (text order: key, verdict, probability, file, line, "
                        "alternatives) and the .bib's notes as JSON")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="write the report as Markdown")
    p.add_argument("--fix", action="append", default=[], metavar="OLD=NEW",
                   help="replace the cited key OLD by NEW everywhere it is cited (or #N=NEW: only citation N of the "
                        "check's table) and write each changed file beside its original as NAME.fixed.tex, and a "
                        "copy of each file that includes one, naming the fixed copies (MAIN.fixed.tex compiles the "
                        "fixed text); no check is run")
    p.add_argument("-o", "--output", type=Path,
                   help="with --fix: the fixed main file's copy (default MAIN.fixed.tex), written also when only an "
                        "included file changed")
    p.add_argument("--force", action="store_true",
                   help="replace an output you named that is read-only or that CiteFinder did not write for this "
                        "draft, keeping NAME.bak of it (never one of the draft's files, a .bib or the library)")
    common(p)


def fixed_name(path: Path) -> Path:
    return path.with_name(f"{path.stem}.fixed{path.suffix or '.tex'}")


def run(args: argparse.Namespace, settings: Any, progress: Callable[[str, str], Any]) -> int:
    from citefinder.check.draft import parse_fixes
    from citefinder.cli.fill import read_draft

    project = read_draft(args.draft)
    if not project.latex:
        raise InputError(f"{args.draft.name}: check reads LaTeX; give the .tex file.")
    bibs = [b.expanduser().resolve() for b in args.bib or []] or [b for b in project.bibliographies if b.is_file()]
    plan = _plan(args, settings, project, bibs)
    if args.fix:
        return _fix(args, settings, project, parse_fixes(args.fix), plan, bibs)
    if args.output is not None:
        raise InputError("-o is the fixed draft of --fix OLD=NEW; a check writes its report with --json or "
                         "--markdown.")
    if not bibs:
        raise InputError(f"{args.draft.name} names no .bib that exists (\\bibliography{{...}}); give --bib REFS.bib.")
    for name, path in (("--json", args.json_out), ("--markdown", args.markdown)):
        if path is not None:
            plan.target(name, path)
    return _check(args, settings, project, bibs, progress, plan)


def _plan(args: argparse.Namespace, settings: Any, project: Any, bibs: list[Path]) -> Any:
    from citefinder.library.link import library_beside

    explicit = args.library is not None
    folder = library_beside(bibs[0]) if bibs and not explicit else Path(settings.library)
    return protect_inputs(project_plan(project, bibs, folder, force=getattr(args, "force", False)), args, settings)


def _check(args: argparse.Namespace, settings: Any, project: Any, bibs: list[Path],
           progress: Callable[[str, str], Any], plan: Any) -> int:
    from citefinder.check.report import markdown, table, to_json
    from citefinder.cli.link import bib_library
    from citefinder.library.link import linked_files
    from citefinder.text.textsafe import terminal_safe

    reference = None
    if args.against is not None:
        reference = workflow_check.open_reference(args.against)
        print(f"reference: {reference.count} papers in {reference.folder}", file=sys.stderr)
    settings, library, _keys = bib_library(bibs, settings, explicit_library=args.library is not None)
    plan.protect("a file linked to the library", linked_files(library))
    plan.protect_folder("the library folder", library.path)
    pipeline = workflow_check.checking_pipeline(settings, library)
    update, close = progress("checking", "cite commands")
    try:
        report = workflow_check.check_draft(pipeline, project, bibs, reference=reference, progress=update)
    finally:
        close()
    for note in report.notes[:20]:
        print(terminal_safe(f"  could not read: {note}"), file=sys.stderr)
    print(terminal_safe(table(report)))
    if args.json_out:
        plan.put(args.json_out, to_json(report).encode("utf-8"))
    if args.markdown:
        plan.put(args.markdown, markdown(report, f"Citation check of {project.main.name}").encode("utf-8"))
    said_backups(plan.commit())  # --force keeps what it replaces
    if settings.learn_from_picks:  # the citations that fit, kept as the user wrote them, join the memory
        _learn(args.draft, library, lambda: workflow_check.learn_fitting(library, project, report, settings))
    return 1 if report.likely_wrong else 0


def _learn(draft: Path, library: Any, learn: Callable[[], int]) -> None:
    from citefinder.cli.contexts import learn_quietly

    learn_quietly(draft, learn, library=library.path)


def _fix(args: argparse.Namespace, settings: Any, project: Any, fixes: dict[str, str], plan: Any,
         bibs: list[Path]) -> int:
    from citefinder.check.draft import fix_changes
    from citefinder.cli.outputs import project_copies
    from citefinder.text.written import carried_cites, cites_written

    if args.json_out is not None or args.markdown is not None:
        raise InputError("--fix writes the fixed draft only (no check is run): drop --json/--markdown.")
    changed = workflow_check.fixed_texts(project, fixes, bibs)
    # every file on the include path to a fixed file gets a copy naming the fixed copies: the fixed main file
    # compiles the fixed text; -o names the main file's copy
    copies = project_copies(project, changed, lambda i: args.output if i == 0 and args.output else
                            fixed_name(project.files[i].path), always=[0])
    for i, (path, _) in copies.items():
        plan.target("-o" if i == 0 and args.output else f"the fixed copy of {project.name_of(project.files[i].path)}",
                    path, keep=True, parents=i != 0)  # an earlier --fix's file is kept as .bak, never lost
    ours = cites_written(f.path for f in project.files)
    for i, (path, text) in copies.items():
        source = project.files[i]
        # the new keys are the user's choice: only what CiteFinder had written there stays noted as its own
        plan.put(path, text, codec=source.encoding, bom=source.bom, source=source.path,
                 cites=carried_cites(source.text, text, ours.of(source.path)))
    said_backups(plan.commit())
    changes = fix_changes(project, fixes)
    for i, (path, text) in copies.items():  # each file's own changes
        pointed = ["its includes naming the fixed copies"] if text != changed.get(i, project.files[i].text) else []
        print(f"wrote {path} ({project.name_of(project.files[i].path)} with {', '.join(changes.get(i, []) + pointed)})")
    if settings.learn_from_picks:
        _learn_fixes(args, settings, project, fixes)
    return 0


def _learn_fixes(args: argparse.Namespace, settings: Any, project: Any, fixes: dict[str, str]) -> None:
    """The replacements the user chose join the memory: each fixed citation's sentence with its new key's paper
    (in the library kept beside the .bib; a new key the .bib lacks teaches nothing)."""
    from citefinder.cli.link import bib_library

    bibs = [b.expanduser().resolve() for b in args.bib or []] or [b for b in project.bibliographies if b.is_file()]
    if not bibs:
        print(f"  not learned: {args.draft.name} names no .bib that exists (give --bib REFS.bib)", file=sys.stderr)
        return
    try:
        settings, library, _keys = bib_library(bibs, settings, explicit_library=args.library is not None)
        doc_of = workflow_check.key_docs(library, bibs)
    except CitefinderError as e:
        print(f"  not learned: {e}", file=sys.stderr)
        return
    _learn(args.draft, library, lambda: workflow_check.learn_fixes(library, project, fixes, doc_of, settings))
