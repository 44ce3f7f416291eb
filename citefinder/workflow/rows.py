"""The one JSON shape of a fill's results, for both faces (issue 48): ``fill --json`` and the Cite page's *Download
results (JSON)* write :func:`result_rows`, and ``fill --add-from-literature FILE`` reads either back
(:func:`citefinder.workflow.add_paper.picks_from_results`).

Each row is ``SlotResult.to_dict()`` (the slot with its ``index`` and ``sentence``; its ``literature`` papers, each
under the key it gets if added; ``"add": true`` marks one to add) and: ``cite_keys`` (the keys the slot is cited
with, in cite order) and ``cite_key`` (the first, as earlier versions wrote), ``user_choices`` (the doc_ids it
cites) and ``user_choice`` (the first), ``user_picked`` (the user decided them, on the page) and ``file`` (the
project's file the slot is in; None on the page).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from citefinder.text.fill import keys_of
from citefinder.types import SlotResult

__all__ = ["result_rows"]


def result_rows(results: Sequence[SlotResult], keys: Mapping[int, "str | Sequence[str]"], *,
                choices: Mapping[int, Sequence[str]] | None = None, picked: Collection[int] = (),
                file_of: Callable[[SlotResult], str] | None = None) -> list[dict[str, Any]]:
    """The rows of ``results``: ``keys`` per slot (``"a,b"`` or a list), ``choices`` the doc_ids each slot cites
    (None: the engine's picks), ``picked`` the slots the user decided, ``file_of`` a slot's file."""
    rows = []
    for r in results:
        row = r.to_dict()
        index = r.slot.index if r.slot is not None else None
        cited = keys_of(keys.get(index)) if index is not None else []
        ids = (list(choices.get(index) or ()) if choices is not None and index is not None
               else [p.doc_id for p in r.selection.papers] if r.selection.status == "found" else [])
        row.update(cite_keys=cited, cite_key=cited[0] if cited else None, user_choices=ids,
                   user_choice=ids[0] if ids else None, user_picked=index is not None and index in picked,
                   file=file_of(r) if file_of is not None and r.slot is not None else None)
        rows.append(row)
    return rows
