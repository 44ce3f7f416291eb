"""What the Cite page offers for download, built from the results and the user's choices.

Pure functions (no streamlit): ``choices`` maps slot index -> chosen doc_id (None = leave the
slot unfilled); it starts as the selector's picks and the user may override any of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath

from citefinder.library.bibtex import papers_to_bibtex
from citefinder.text.fill import DEFAULT_COMMAND, fill_draft
from citefinder.types import Paper, SlotResult

Choices = Mapping[int, "str | None"]


def default_choices(results: Sequence[SlotResult]) -> dict[int, str | None]:
    """The selector's pick per slot (None where it found nothing)."""
    return {r.slot.index: (r.selection.paper.doc_id if r.selection.paper else None) for r in results if r.slot}


def paper_for(result: SlotResult, doc_id: str | None, extra: Mapping[str, Paper] | None = None) -> Paper | None:
    """The paper behind ``doc_id`` among the result's candidates (or its selection, or ``extra``:
    papers the user found with a library search)."""
    if doc_id is None:
        return None
    if result.selection.paper and result.selection.paper.doc_id == doc_id:
        return result.selection.paper
    for cand in result.candidates:
        if cand.doc_id == doc_id:
            return cand.paper
    return (extra or {}).get(doc_id)


def chosen_papers(results: Sequence[SlotResult], choices: Choices,
                  extra: Mapping[str, Paper] | None = None) -> dict[int, Paper]:
    """slot index -> chosen paper, for the slots that have one."""
    out: dict[int, Paper] = {}
    for r in results:
        if r.slot is None:
            continue
        paper = paper_for(r, choices.get(r.slot.index), extra)
        if paper is not None:
            out[r.slot.index] = paper
    return out


def bibliography(
    results: Sequence[SlotResult],
    choices: Choices,
    extra: Mapping[str, Paper] | None = None,
    *,
    taken: Callable[[str], bool] | None = None,
) -> tuple[str, dict[int, str]]:
    """The .bib text of the chosen papers (each once, in slot order) and slot index -> bib key.

    A paper keeps the user's own key (:attr:`Paper.key`); others get a generated key that avoids
    every key for which ``taken`` is true (pass the library's ``by_key`` test)."""
    chosen = chosen_papers(results, choices, extra)
    unique = list({p.doc_id: p for p in (chosen[i] for i in sorted(chosen))}.values())
    if not unique:
        return "", {}
    bib, key_of = papers_to_bibtex(unique, taken=taken)
    return bib, {i: key_of[p.doc_id] for i, p in chosen.items() if p.doc_id in key_of}


def filled_draft(text: str, results: Sequence[SlotResult], keys: Mapping[int, str], *,
                 command: str = DEFAULT_COMMAND) -> str:
    """The draft with every slot that has a key filled: in the draft's own cite command
    (``\\citep{?}`` -> ``\\citep{key}``), a plain [CITATION] in ``command``."""
    slots = [r.slot for r in results if r.slot is not None]
    return fill_draft(text, slots, dict(keys), command=command)


def cite_snippet(result: SlotResult, key: str, command: str = DEFAULT_COMMAND) -> str:
    """What to paste for one slot: ``\\citep{key}`` in the slot's own command, else ``command``."""
    return f"{(result.slot.command if result.slot else '') or command}{{{key}}}"


def results_json(results: Sequence[SlotResult], choices: Choices, keys: Mapping[int, str] | None = None) -> str:
    """Every SlotResult as JSON (``SlotResult.to_dict()``), plus the doc_id the user settled on and
    the key it is cited with."""
    rows = []
    for r in results:
        row = r.to_dict()
        row["user_choice"] = choices.get(r.slot.index) if r.slot else None
        row["cite_key"] = (keys or {}).get(r.slot.index) if r.slot else None
        rows.append(row)
    return json.dumps(rows, indent=2, ensure_ascii=False)


def filled_name(source_name: str | None) -> str:
    """Download name of the filled draft: ``paper.tex`` -> ``paper-cited.tex``; PDFs become .txt."""
    if not source_name:
        return "draft-cited.txt"
    path = PurePath(source_name)
    suffix = path.suffix.lower() if path.suffix.lower() in (".tex", ".md", ".txt") else ".txt"
    return f"{path.stem}-cited{suffix}"
