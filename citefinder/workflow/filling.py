"""The whole fill of a draft file, once (issue 48): :func:`fill` takes a :class:`~citefinder.workflow.fill.
FillRequest` and gives a :class:`~citefinder.workflow.fill.FillOutcome`. It decides which .bib is cited (the ones
given, else those the draft names, else none: the library, with a .bib of the chosen papers written), the keys
held by ``new-references.bib``, the literature attached, what is learned from the cites the draft has, the keys
chosen (one :class:`~citefinder.workflow.keys.Keys` for the run), the literature papers added, the results file
and the one commit of every file. ``citefinder fill`` (``cli/fill.py``) turns its arguments into the request and
the outcome into lines; the Cite page runs the same steps on its worker (:func:`citefinder.workflow.fill.
fill_slots`) with the same keys and draft name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.workflow import fill as wf
from citefinder.workflow import literature as lit
from citefinder.workflow.fill import FillOutcome, FillRequest
from citefinder.workflow.keys import Keys

log = logging.getLogger(__name__)

__all__ = ["fill"]

Say = Callable[[str], None]


def _bibs(request: FillRequest, project: Any, say: Say) -> tuple[list[Path], str | None]:
    """The .bib files cited: the ones given, else those the draft names that exist, else none; and the line that
    says which were taken from the draft (said once every output is known to be writable: a refused fill says
    only why)."""
    bibs = [b.expanduser().resolve() for b in request.bibs]
    note = None
    if not bibs and request.bib_out is None and project.bibliographies:
        for b in project.bibliographies:
            if not b.is_file():
                say(f"  {project.main.name} names {b.name}, which is not there")
        bibs = [b for b in project.bibliographies if b.is_file()]
        if bibs:
            note = f"citing the keys of {', '.join(b.name for b in bibs)} (named in {project.main.name})"
    if not bibs and request.bib_out is None:
        raise InputError("Give --bib-out FILE.bib for the references to write, "
                         "or --bib REFS.bib to cite your own .bib's keys.")
    return bibs, note


def fill(request: FillRequest, settings: Any, *, open_pipeline: Callable[[Any], Any], protect: Callable[[Any], Any],
         progress: Callable[[str, str], Any], say: Say) -> FillOutcome:
    """Fill ``request.draft``: every output checked before any work (``protect``: the face's input folders added
    to the plan), then the slots run (``progress(what, unit)`` gives the ``update(done, total)`` and ``close()`` of
    a progress bar), keys chosen, files written all or nothing.
    ``say``: a note for the user, as it happens."""
    from citefinder.library.link import library_beside, linked_files
    from citefinder.text.fill import normalize_command
    from citefinder.workflow import outputs as out
    from citefinder.workflow.add_paper import new_references
    from citefinder.workflow.bib_library import link_report_lines, open_bib_library

    assert request.draft is not None
    draft = request.draft
    command = normalize_command(request.command)
    project = wf.read_draft(request.draft)
    for line in project.missing:
        say(f"  not read: {line}")
    if request.in_place and not project.latex:
        raise InputError(f"--in-place rewrites the files of a LaTeX project; {request.draft.name} is not one: drop "
                         "--in-place, and give -o FILE for the filled draft (nothing was written).")
    bibs, named_note = _bibs(request, project, say)
    folder = library_beside(bibs[0]) if bibs and not request.explicit_library else Path(settings.library)
    plan = protect(out.project_plan(project, bibs, folder, in_place=request.in_place, force=request.force))
    outputs = out.planned_outputs(project, request.output, bib_mode=bool(bibs), in_place=request.in_place)
    for i, path in outputs.items():
        out.plan_output_file(plan, project, i, path, named=i == 0 and request.output is not None,
                             in_place=request.in_place)
    if request.bib_out is not None:
        plan.target("--bib-out", request.bib_out)
    if request.json_out is not None:
        plan.target("--json", request.json_out)
    literature = lit.plan_literature(request.literature, settings, request.draft)
    if literature.adding:
        plan.target("--new-references", literature.references, grow=True)
    if request.output is not None and request.output.suffix.lower() == ".bib":  # refused after a protected target
        raise InputError(f"-o is the filled draft, not a .bib ({request.output.name}); the references file is "
                         "--bib-out, and with --bib the draft cites your .bib's keys (nothing was written).")
    for note in (*request.notes, *([named_note] if named_note else [])):
        say(note)
    bib_keys: set[str] | None = None
    if bibs:
        from citefinder.pipeline.pipeline import Pipeline

        opened = open_bib_library(bibs, settings, explicit_library=request.explicit_library)
        for report in opened.reports:
            for line in link_report_lines(report, summary=report.changed):
                say(line)
        settings, bib_keys = opened.settings, set(opened.keys) | literature.held_keys
        opened.library.embedder.encode(["warm up"])  # the model loads here: the dense stage's trace times the search
        pipeline = Pipeline(settings, opened.library)
    else:
        pipeline = open_pipeline(settings)
    library = pipeline.library
    plan.protect("a file linked to the library", linked_files(library))
    plan.protect_folder("the library folder", library.path)
    tier = lit.attach_literature(pipeline, settings, literature.spec, literature.when)
    if tier is not None:
        which = "every slot" if literature.when == "always" else "the slots none of your papers fills confidently"
        say(f"searching the literature in {literature.spec} for {which}")
        if tier.sends:  # said before the first call
            say(f"asking {tier.name}: {tier.sends}")
    request = replace(request, text=project.text, latex=project.latex or None, command=command)
    update, close = progress("filling slots", "slots")
    try:
        results, learned = wf.fill_slots(pipeline, request, lambda done, total, _r: update(done, total),
                                         name=wf.draft_name(project), draft=project, settings=settings)
    finally:
        close()
    if learned:
        say(f"learned {learned} citation{'s' if learned != 1 else ''} from {draft.name} into the memory of "
            f"the library {library.path}" if learned > 0 else
            f"  could not learn the citations of {draft.name} for next time (the log says why)")
    keys = Keys(library, {*(bib_keys or ()), *literature.held_keys})
    results = lit.keys_to_be(results, keys)
    name = wf.draft_name(project)
    chosen = wf.choose_keys(results, keys, bib_keys=bib_keys, bibs=bibs)
    slot_keys = dict(chosen.slot_keys)
    for i in chosen.unkeyed:
        say(f"  slot {i + 1}: the chosen paper has no key in {', '.join(b.name for b in bibs)}; its entry, "
            f"{','.join(slot_keys[i])}, goes to {literature.references.name}")
    if chosen.bib is not None:  # the user's own .bib entries byte for byte, the others as complete BibTeX
        assert request.bib_out is not None
        plan.put(request.bib_out, chosen.bib.encode("utf-8"))
    addition = lit.add_chosen(literature, results, keys) if literature.adding else lit.Addition()
    for index, cited in addition.slot_keys.items():
        if slot_keys.get(index):
            say(f"  slot {index + 1}: cites the paper you added instead of {','.join(slot_keys[index])}")
        slot_keys[index] = cited
    entries = (*addition.papers, *chosen.generated)
    if entries:
        if not literature.adding:
            plan.target("--new-references", literature.references, grow=True)
        held = plan.held(literature.references)  # what it holds now, hand edits included: kept byte for byte
        bib, _given = new_references(entries, held, literature.held_keys if held else (),
                                     name=str(literature.references))
        plan.put(literature.references, bib.encode("utf-8"))
    slots = [r.slot for r in results if r.slot is not None]
    written_paths = out.put_filled(plan, project, slots, slot_keys, command, outputs, in_place=request.in_place)
    if request.json_out is not None:
        from citefinder.workflow.rows import result_rows

        rows = result_rows(results, slot_keys, file_of=lambda r: project.name_of(project.line(r.slot.start)[0])
                           if r.slot is not None else "")
        plan.put(request.json_out, json.dumps(rows, indent=2, ensure_ascii=False).encode("utf-8"))
    backups = plan.commit()
    added_new = library.add_papers(list(addition.papers)).added if addition.papers else 0  # once written
    return replace(chosen, results=tuple(results), slot_keys=slot_keys, project=project, bibs=tuple(bibs),
                   written=tuple(written_paths), added=addition.papers, added_to=addition.by_slot,
                   references=literature.references if entries else None, draft=name, learned=learned,
                   backups=tuple(backups), added_new=added_new, command=command, library_path=library.path)
