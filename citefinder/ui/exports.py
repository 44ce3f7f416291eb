"""What the Cite page offers for download, built from the results and the user's choices.

Pure functions (no streamlit): ``choices`` maps slot index -> the doc_ids the slot cites, in cite order
(one doc_id, or None = leave the slot unfilled, are read too); it starts as the selector's picks and the
user may override any of them. Papers read from the user's .bib are written as their own entries, byte
for byte (:mod:`citefinder.library.bibtex`), in citation order or in the order of their file. The .bib and
the filled text are made by the workflow (:mod:`citefinder.workflow.fill`), as ``citefinder fill`` makes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import PurePath
from typing import Literal

from citefinder.text.fill import DEFAULT_COMMAND, keys_of
from citefinder.types import Paper, SlotResult
from citefinder.ui.picks import as_ids
from citefinder.workflow import fill as workflow_fill
from citefinder.workflow.keys import Keys

Choices = Mapping[int, "str | Sequence[str] | None"]
Order = Literal["cited", "file"]
ORDERS: dict[str, str] = {"cited": "as cited", "file": "as in your .bib"}


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


def paper_of(results: Sequence[SlotResult], doc_id: str, extra: Mapping[str, Paper] | None = None) -> Paper | None:
    """The paper behind ``doc_id`` among any slot's candidates, or ``extra``."""
    for r in results:
        paper = paper_for(r, doc_id)
        if paper is not None:
            return paper
    return (extra or {}).get(doc_id)


def chosen_lists(results: Sequence[SlotResult], choices: Choices,
                 extra: Mapping[str, Paper] | None = None) -> dict[int, list[Paper]]:
    """slot index -> the papers it cites (in cite order), for the slots that cite any."""
    out: dict[int, list[Paper]] = {}
    for r in results:
        if r.slot is None:
            continue
        papers = [p for i in as_ids(choices.get(r.slot.index))
                  if (p := paper_for(r, i, extra) or paper_of(results, i, extra)) is not None]
        if papers:
            out[r.slot.index] = papers
    return out


def chosen_papers(results: Sequence[SlotResult], choices: Choices,
                  extra: Mapping[str, Paper] | None = None) -> dict[int, Paper]:
    """slot index -> the first paper it cites, for the slots that cite any."""
    return {i: papers[0] for i, papers in chosen_lists(results, choices, extra).items()}


def bibliography(
    results: Sequence[SlotResult],
    choices: Choices,
    extra: Mapping[str, Paper] | None = None,
    *,
    keys: Keys | None = None,
    order: Order = "cited",
    current: Callable[[list[str]], Sequence[Paper]] | None = None,
) -> tuple[str, dict[int, str]]:
    """The .bib text of the chosen papers (each once) and slot index -> its bib keys, in cite order
    and as written inside ``\\cite{}`` (``"a,b"``: a key never holds a comma).

    ``order``: "cited" writes the papers in the order the draft first cites them; "file" in the order
    of the .bib they came from (file by file), then the others as cited. A paper read from the user's
    .bib is their own entry, byte for byte; it keeps the user's key (:attr:`Paper.key`); every other key is
    ``keys``'s (the run's :class:`~citefinder.workflow.keys.Keys`: the key its card shows).
    ``current`` (the library's ``get``) gives each paper as the library holds it now: an edit on the Library
    page after the fill (a URL added, a key changed) reaches the download."""
    chosen = chosen_lists(results, choices, extra)
    if current is not None:
        ids = list(dict.fromkeys(p.doc_id for papers in chosen.values() for p in papers))
        now = {p.doc_id: p for p in current(ids)} if ids else {}
        chosen = {i: [now.get(p.doc_id, p) for p in papers] for i, papers in chosen.items()}
    if not any(chosen.values()):
        return "", {}
    bib, slot_keys, _entries = workflow_fill.bibliography_of(chosen, keys if keys is not None else Keys(None),
                                                             order=order)
    return bib, {i: ",".join(cited) for i, cited in slot_keys.items()}


def filled_draft(text: str, results: Sequence[SlotResult], keys: Mapping[int, str | Sequence[str]], *,
                 command: str = DEFAULT_COMMAND) -> str:
    """The draft with every slot that has a key filled: in the draft's own cite command
    (``\\citep{?}`` -> ``\\citep{key}``), a plain [CITATION] in ``command``."""
    return workflow_fill.filled_text(text, results, keys, command=command)


def cite_snippet(result: SlotResult, key: str | Sequence[str], command: str = DEFAULT_COMMAND) -> str:
    """What to paste for one slot: ``\\citep{a,b}`` in the slot's own command, else ``command``."""
    keys = ",".join(keys_of(key))
    return f"{(result.slot.command if result.slot else '') or command}{{{keys}}}"


def results_json(results: Sequence[SlotResult], choices: Choices,
                 keys: Mapping[int, str | Sequence[str]] | None = None, picked: Collection[int] = (),
                 run_keys: Keys | None = None) -> str:
    """Every SlotResult as JSON (``SlotResult.to_dict()``), plus the papers the slot cites (``user_choices``:
    doc_ids in cite order; ``user_choice``: the first, or None), whether the user decided them
    (``user_picked``: the slots in ``picked``) and the keys the slot is cited with (``cite_keys``, in cite
    order; ``cite_key``: the first, as earlier versions wrote)."""
    from citefinder.workflow.literature import keys_to_be
    from citefinder.workflow.rows import result_rows

    ids = {r.slot.index: list(as_ids(choices.get(r.slot.index))) for r in results if r.slot is not None}
    shown = keys_to_be(results, run_keys) if run_keys is not None else results
    rows = result_rows(shown, keys or {}, choices=ids, picked=picked)
    return json.dumps(rows, indent=2, ensure_ascii=False)


def filled_name(source_name: str | None) -> str:
    """Download name of the filled draft, the name ``citefinder fill`` gives it: ``paper.tex`` ->
    ``paper.cited.tex``; PDFs become .txt."""
    if not source_name:
        return "draft.cited.txt"
    path = PurePath(source_name)
    suffix = path.suffix.lower() if path.suffix.lower() in (".tex", ".md", ".txt") else ".txt"
    return f"{path.stem}.cited{suffix}"
