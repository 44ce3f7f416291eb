"""A paper offered for a slot (a candidate, a search result, a paper the user picked): what it is, why it
fits, how likely it is the one, and one click to cite it alone (*Use this*) or beside the others (*Add*)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.pipeline.evidence import best_sentence, candidate_elsewhere, elsewhere_line
from citefinder.types import Paper, SlotResult
from citefinder.ui import render, state
from citefinder.ui.cite import choices as ch
from citefinder.ui.cite.draft import slot_of
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import confidence_label


def _year_note(paper: Paper, latest: int | None) -> str:
    """The paper's year, flagged when it is newer than anything else the draft cites."""
    if paper.year is None:
        return ""
    if latest is not None and paper.year > latest:
        return f":orange[{paper.year}, newer than all your draft cites so far (up to {latest})]"
    return str(paper.year)


def _elsewhere(library: Any, result: SlotResult, doc_id: str) -> str:
    """"cited elsewhere as: ..." from the library's citation-context memory, "" without one."""
    if library is None:
        return ""
    try:
        found = candidate_elsewhere(library, result, doc_id)
    except CitefinderError:
        return ""  # a damaged memory is said on the Library page; the card stays usable
    return elsewhere_line(found) if found else ""


def candidate_row(settings: Settings, run: state.CiteRun, result: SlotResult, paper: Paper, label: str,
                  cited: Sequence[str], confidence: float | None, key: str, *, latest: int | None = None,
                  shortcut: str | None = None, library: Any = None) -> None:
    """One candidate: number, key, title, authors, year, probability, evidence (its abstract's sentence nearest
    the slot, and how the memory of ``library`` saw it cited elsewhere); *Use this* and *Add*."""
    index = slot_of(result).index
    chosen = paper.doc_id in cited
    row = st.container(horizontal=True, wrap=False, vertical_alignment="center")
    from citefinder.ui.cite.literature import key_of

    bib_key = key_of(paper)  # the key the .bib download writes
    head = f"{label} **{escape_markdown(paper.title)}**"
    if chosen:
        place = f" ({list(cited).index(paper.doc_id) + 1} of {len(cited)})" if len(cited) > 1 else ""
        head += f" :green[✓ cited{place}]"
    meta = [render.paper_meta(paper, max_authors=3, year=False), _year_note(paper, latest),
            f"key {escape_markdown(bib_key)}"]
    if confidence is not None:
        meta.append(escape_markdown(confidence_label(confidence)))
    lines = [head, " · ".join(m for m in meta if m)]
    slot_text = result.slot.focus or result.slot.sentence if result.slot else result.query.text
    snippet = best_sentence(paper.abstract, slot_text)
    if snippet:
        lines.append(f":gray[“{escape_markdown(snippet)}”]")
    if found := render.provenance_line(paper):
        lines.append(found)
    elsewhere = _elsewhere(library, result, paper.doc_id)
    if elsewhere:
        lines.append(f":violet[{escape_markdown(elsewhere)}]")
    row.markdown("  \n".join(lines), width="stretch")
    if shortcut is not None and chosen:  # its key on the slot in review: keep what the slot cites, go on
        on_click, args = ch.accept, (settings, run, index, tuple(cited))
    elif shortcut is not None:
        on_click, args = ch.by_key, (settings, run, index, paper.doc_id, paper)  # type: ignore[assignment]
    else:
        on_click, args = ch.choose, (settings, index, paper.doc_id, paper)  # type: ignore[assignment]
    if chosen:
        help_ = f"Cited here. Key {shortcut}: accept, next (keep it, go to the next slot to check)" if shortcut else ""
    else:
        help_ = "Cite this paper alone here" + (f" (key {shortcut})" if shortcut else "")
    row.button("Chosen" if chosen else "Use this", key=key, type="primary" if chosen else "secondary",
               icon=":material/check_circle:" if chosen else None, disabled=chosen and shortcut is None,
               width="content", on_click=on_click, args=args, shortcut=shortcut, help=help_ or None)
    if not chosen:
        row.button("Add", key=f"{key}_add", icon=":material/add:", type="tertiary", width="content",
                   on_click=ch.add, args=(settings, run, index, paper.doc_id, paper),
                   help="Cite it too, after the papers already here (\\cite{a,b}).")
