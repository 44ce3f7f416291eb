"""``citefinder fill`` and ``citefinder library link``: fill a draft's slots in its own cite commands,
either against the library (writing a .bib of the chosen papers) or against the user's own .bib
(``--bib refs.bib``: that file is the library, every key written is one of its keys)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

from citefinder.errors import CitefinderError, InputError
from citefinder.types import Paper, SlotResult

log = logging.getLogger(__name__)


def add_fill_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("draft", type=Path, help="draft: .pdf, .tex, .txt or .md")
    p.add_argument("--bib", type=Path, metavar="REFS.bib",
                   help="your own .bib (or CSL-JSON): it becomes the library (kept in a folder beside it, "
                        "re-imported when it changes) and the draft cites its keys")
    p.add_argument("-o", "--output", type=Path,
                   help="with --bib: the filled draft (default DRAFT.cited.tex); without: the BibTeX file to write")
    p.add_argument("--filled", type=Path, help="write the draft with \\cite{key} in each filled slot")
    p.add_argument("--cite-command", default="\\cite", metavar="CMD",
                   help="command for plain [CITATION] markers, e.g. citep or autocite (default \\cite); "
                        "\\citep{?}-style placeholders keep their own command")
    p.add_argument("--json", type=Path, dest="json_out", help="write the full results with traces as JSON")


def cited_name(draft: Path) -> Path:
    """``paper.tex`` -> ``paper.cited.tex`` beside it (a PDF draft's text becomes ``.cited.txt``)."""
    suffix = draft.suffix if draft.suffix.lower() in (".tex", ".md", ".txt", ".markdown") else ".txt"
    return draft.with_name(f"{draft.stem}.cited{suffix}")


def run_fill(args: argparse.Namespace, settings: Any, open_pipeline: Callable[[Any], Any],
             progress: Callable[[str, str], Any]) -> int:
    from citefinder.library.bibtex import papers_to_bibtex
    from citefinder.text.drafts import extract_draft_text
    from citefinder.text.fill import fill_draft, normalize_command, unfilled_report

    command = normalize_command(args.cite_command)
    if args.bib is None and args.output is None:
        raise InputError("Give -o FILE.bib for the references to write, "
                         "or --bib REFS.bib to cite your own .bib's keys.")
    try:
        data = args.draft.read_bytes()
    except OSError as e:
        raise CitefinderError(f"Cannot read the draft {args.draft}: {e}") from e
    text = extract_draft_text(data, args.draft.name)
    bib_keys: set[str] | None = None
    if args.bib is not None:
        from citefinder.pipeline.pipeline import Pipeline

        settings, library, bib_keys = _bib_library(args.bib, settings, explicit_library=args.library is not None)
        library.embedder.encode(["warm up"])  # load the model here, so the dense stage's trace times the search only
        pipeline = Pipeline(settings, library)
    else:
        pipeline = open_pipeline(settings)
    update, close = progress("filling slots", "slots")
    try:
        results = pipeline.cite_text(text, progress=lambda done, total, _r: update(done, total))
    finally:
        close()
    # each slot's papers in cite order: the engine's pick, and a second paper when it proposes one
    chosen = {r.slot.index: list(r.selection.papers) for r in results
              if r.slot is not None and r.selection.status == "found" and r.selection.papers}
    slots = [r.slot for r in results if r.slot is not None]
    slot_keys: dict[int, list[str]]
    if bib_keys is not None:
        slot_keys = {i: own for i, ps in chosen.items() if (own := [p.key for p in ps if p.key and p.key in bib_keys])}
        for i in sorted(set(chosen) - set(slot_keys)):
            print(f"  slot {i + 1}: the chosen paper has no key in {args.bib.name}; left unfilled", file=sys.stderr)
        filled_path = args.output or args.filled or cited_name(args.draft)
    else:
        library = pipeline.library
        # the user's own .bib entries byte for byte, the others as complete BibTeX (citefinder.library.bibtex)
        unique = list({p.doc_id: p for i in sorted(chosen) for p in chosen[i]}.values())
        bib, keys = papers_to_bibtex(unique, taken=lambda k: library.by_key(k) is not None)
        args.output.write_text(bib, encoding="utf-8")
        slot_keys = {i: list(dict.fromkeys(keys[p.doc_id] for p in ps)) for i, ps in chosen.items()}
        filled_path = args.filled
    if filled_path:
        filled_path.write_text(fill_draft(text, slots, slot_keys, command=command), encoding="utf-8")
    if args.json_out:
        rows = [{**r.to_dict(), "cite_keys": slot_keys.get(r.slot.index, []) if r.slot else [],
                 "cite_key": next(iter(slot_keys.get(r.slot.index) or []), None) if r.slot else None}
                for r in results]
        args.json_out.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    for line in slot_lines(text, results, slot_keys, command):
        print(line)
    where = f"; filled draft written to {filled_path}" if filled_path else ""
    if bib_keys is None:
        print(f"{len(slot_keys)} of {len(slots)} slots filled; {len(unique)} entries written to "
              f"{args.output}{where}")
    else:
        print(f"{len(slot_keys)} of {len(slots)} slots filled with keys of {args.bib}{where}")
    for line in unfilled_report(slots, slot_keys):
        print(f"  {line}")
    return 0


def slot_lines(text: str, results: list[SlotResult], keys: Mapping[int, Sequence[str]], command: str,
               top: int = 3) -> list[str]:
    """Per slot: where it is, the cite it got (``\\cite{a,b}`` when it cites several papers), or the keys of
    the top candidates when it abstained."""
    lines = []
    for r in results:
        if r.slot is None:
            continue
        line_no = text.count("\n", 0, r.slot.start) + 1
        head = f"Slot {r.slot.index + 1} (line {line_no}):"
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


def _bib_library(bib: Path, settings: Any, *, explicit_library: bool) -> tuple[Any, Any, set[str]]:
    """Settings for the library kept beside ``bib`` (or the one given), that library synced with
    ``bib`` (and its other linked files), and the keys ``bib`` holds."""
    from citefinder.library.link import library_beside, link_file, linked_files, sync_all
    from citefinder.library.readers import read_papers
    from citefinder.library.store import Library

    bib = bib.expanduser().resolve()
    if not bib.is_file():
        raise InputError(f"Cannot read {bib}: no such file.")
    if not explicit_library:
        settings = settings.model_copy(update={"library": library_beside(bib)})
    library = Library.open(settings)
    reports = [link_file(library, bib)] if bib not in linked_files(library) else sync_all(library)
    for report in reports:
        if report.changed:
            print(report.summary(), file=sys.stderr)
        for f in report.failures[:20]:
            print(f"  could not read: {f.source}: {f.reason}", file=sys.stderr)
    keys = {p.key for p in read_papers(bib) if isinstance(p, Paper) and p.key}
    if not keys:
        raise InputError(f"{bib.name} holds no entry with a key; nothing could be cited from it.")
    return settings, library, keys


def run_link(args: argparse.Namespace, library: Any) -> int:
    """``library link FILE``, ``library unlink FILE``, ``library links``."""
    from citefinder.library.link import link_file, linked_files, unlink_file

    if args.library_command == "link":
        for path in args.files:
            report = link_file(library, path)
            print(report.summary())
            for f in report.failures[:20]:
                print(f"  could not read: {f.source}: {f.reason}")
        print(f"library now holds {library.count()} papers; linked files are re-imported when they change")
        return 0
    if args.library_command == "unlink":
        gone = [p for p in args.files if unlink_file(library, p)]
        print(f"unlinked {len(gone)} of {len(args.files)} (their papers stay in the library)")
        return 0 if len(gone) == len(args.files) else 1
    for path in linked_files(library):
        print(path)
    return 0

