"""One slot of the Cite page as a card: its sentence (with its neighbours when it is short) and section, the
papers it cites (several, in order, each removable and movable), the top candidates one click away (use it,
or add it) with one probability each and the evidence for each, a search of the whole library, and the trace.
The slot in review answers the keyboard: 1-5 use a candidate, a then 1-5 add it (u undo and n / p are on
the results' toolbar).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import streamlit as st

from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.select.hubs import held_back
from citefinder.types import Paper, SlotResult
from citefinder.ui import exports, paired_bib, picks, render, state
from citefinder.ui.cite import choices as ch
from citefinder.ui.cite.draft import changed_state, choices_state, extra_state, slot_of
from citefinder.ui.cite.literature import key_of, literature_block
from citefinder.ui.cite.rows import candidate_row
from citefinder.ui.cite.search import library_search
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import LIKELY, confidence_label

TOP_CHOICES = 5  # candidates offered as one-click choices per slot
SHORT_SENTENCE = 90  # characters: a sentence this short is shown with the sentences around it
NO_MATCH = "No confident match — pick one of these"


def cited_list(settings: Settings, run: state.CiteRun, result: SlotResult, papers: Sequence[Paper],
               keys: str | None) -> None:
    """The papers the slot cites, in cite order, each movable and removable, and the cite to paste."""
    index = slot_of(result).index
    ids = [p.doc_id for p in papers]
    if len(papers) > 1:
        st.markdown(f"**Cited here** ({len(papers)} papers, in this order):")
        for n, paper in enumerate(papers):
            row = st.container(horizontal=True, wrap=False, vertical_alignment="center")
            row.markdown(f"{n + 1}\\. {escape_markdown(key_of(paper))} · "
                         f"{escape_markdown(paper.title)}", width="stretch")
            base = f"{run.pick_key(index)}_cited_{n}"
            row.button("", key=f"{base}_up", icon=":material/arrow_upward:", type="tertiary", disabled=n == 0,
                       on_click=ch.move, args=(settings, run, index, ids[n], -1), help="Cite it earlier")
            row.button("", key=f"{base}_down", icon=":material/arrow_downward:", type="tertiary",
                       disabled=n == len(papers) - 1, on_click=ch.move, args=(settings, run, index, ids[n], +1),
                       help="Cite it later")
            row.button("", key=f"{base}_rm", icon=":material/close:", type="tertiary",
                       on_click=ch.remove, args=(settings, run, index, ids[n]), help="Stop citing it here")
    if keys:
        command = st.session_state.get(paired_bib.COMMAND) or paired_bib.COMMANDS[0]
        st.code(exports.cite_snippet(result, keys, command), language="latex", width="content")


def _set_aside(settings: Settings, run: state.CiteRun, result: SlotResult) -> None:
    """A pick made before this slot's sentence was edited: shown, and one click from being used again."""
    index = slot_of(result).index
    aside = changed_state().get(index)
    if aside is None:
        return
    titles = [p.title if (p := exports.paper_of(run.results, i, extra_state())) else i for i in aside.ids]
    with st.container(border=False):
        st.info(f"**This sentence changed since you picked.** It was: “{escape_markdown(aside.sentence)}”  \n"
                f"Your pick then: {escape_markdown(' + '.join(titles)) or 'left empty'}.", icon=":material/edit_note:")
        row = st.container(horizontal=True)
        row.button("Use it again", key=f"{run.pick_key(index)}_aside_use", icon=":material/history:",
                   on_click=ch.use_set_aside, args=(settings, index))
        row.button("Dismiss", key=f"{run.pick_key(index)}_aside_no", type="tertiary",
                   on_click=ch.dismiss_set_aside, args=(settings, index))


def _sentence(result: SlotResult, which: int) -> None:
    slot = slot_of(result)
    if slot.heading:
        st.caption(f"§ {escape_markdown(slot.heading)}")
    if len(slot.sentence) < SHORT_SENTENCE and slot.window and slot.window.strip() != slot.sentence.strip():
        st.markdown(render.highlight_slot(slot.window, 0))  # the window shows this slot's marker only
    else:
        st.markdown(render.highlight_slot(slot.sentence, which))


def slot_card(settings: Settings, run: state.CiteRun, result: SlotResult, which: int, cited: tuple[str, ...],
              keys: str | None, library: Library, *, focused: bool = False, latest: int | None = None,
              choices: picks.Picks | None = None, status: str | None = None, memory: bool = True) -> None:
    """One slot: section, sentence, status, what it cites, the top candidates, library search, cite, trace.
    ``choices``: what every slot cites (:func:`~citefinder.ui.cite.choices.current_choices`, made once a run of
    the page, not once a card); ``status``: the slot's status when the caller has it; ``memory``: whether the
    library has a citation-context memory (without one no candidate is looked up in it)."""
    slot, sel = slot_of(result), result.selection
    if status is None:
        status = ch.slot_status(result, ch.current_choices(run) if choices is None else choices)
    confidences = ch.shown_confidences(result)
    with st.container(border=True, key=f"slot_{run.run_id}_{slot.index}"):
        head, badge = st.columns([0.6, 0.4], vertical_alignment="center")
        head.markdown(f"**Slot {slot.index + 1}**" + (" :blue[· in review]" if focused else ""))
        with badge:
            colors: dict[str, Literal["green", "blue", "gray", "orange"]] = {
                LIKELY: "green", ch.USER_PICK: "blue", ch.LEFT_EMPTY: "gray"}
            color = colors.get(status, "orange")
            label = (status if status in (ch.USER_PICK, ch.LEFT_EMPTY, ch.NOT_FOUND_S)
                     else confidence_label(ch.slot_probability(result)))
            st.badge(label, color=color, icon=":material/check:" if color in ("green", "blue") else ":material/help:")
        if focused:
            adding = st.session_state.get(state.CITE_ADDING)
            st.caption(":blue[**Adding:** press 1–5 to add that candidate]" if adding else
                       "Keys: **1–5** use a candidate (the one cited already: *Accept, next*) · **a** then 1–5 "
                       "add it · **u** undo · **n** / **p** next / previous slot to check")
        _sentence(result, which)
        if (undone := ch.undone_note(slot.index)) is not None:
            st.info(escape_markdown(undone), icon=":material/undo:")
        _set_aside(settings, run, result)
        if (hub := held_back(result)) is not None:
            st.caption(f":orange[**Held back.**] {escape_markdown(hub)}.")
        if sel.paper is None and slot.index not in choices_state():
            if result.candidates:
                st.warning(f"**{NO_MATCH}.** Details are in the trace below.", icon=":material/search_off:")
            else:
                st.warning("**Not found in your library.** Search it below, or leave the slot empty.",
                           icon=":material/search_off:")
        papers = [p for i in cited if (p := exports.paper_for(result, i, extra_state())
                                       or exports.paper_of(run.results, i, extra_state())) is not None]
        cited_list(settings, run, result, papers, keys)
        shown = list(result.candidates[:TOP_CHOICES])
        for i, cand in enumerate(shown, 1):
            candidate_row(settings, run, result, cand.paper, f"{i}\\.", cited, confidences.get(cand.doc_id),
                          key=f"{run.pick_key(slot.index)}_{i}", latest=latest,
                          shortcut=str(i) if focused else None, library=library if memory else None)
        for n, paper in enumerate(p for p in papers if all(c.doc_id != p.doc_id for c in shown)):
            candidate_row(settings, run, result, paper, ":blue[your pick]", cited, None,
                          key=f"{run.pick_key(slot.index)}_chosen_{n}", latest=latest,
                          library=library if memory else None)
        actions = st.container(horizontal=True, vertical_alignment="center")
        actions.button("Leave empty", key=f"{run.pick_key(slot.index)}_none", type="tertiary",
                       icon=":material/block:", disabled=not cited and slot.index in choices_state(),
                       on_click=ch.choose, args=(settings, slot.index, None))
        actions.button("Accept, next", key=f"{run.pick_key(slot.index)}accept", type="tertiary",
                       icon=":material/done_all:", on_click=ch.accept, args=(settings, run, slot.index, cited),
                       help="Keep what this slot cites and go to the next slot to check.")
        if focused:
            actions.button("Adding…" if st.session_state.get(state.CITE_ADDING) else "Add with keys",
                           key="cite_add_mode", type="tertiary", icon=":material/playlist_add:", shortcut="a",
                           on_click=ch.arm_adding, help="Key a: the next key 1–5 adds that candidate to the slot.")
        library_search(settings, run, result, cited, library, latest)
        literature_block(settings, run, result, cited, library)
        trace = st.expander("Trace: how this paper was chosen", key=run.trace_key(slot.index), on_change="rerun",
                            icon=":material/account_tree:")
        if trace.open:
            with trace:
                render.trace_panel(result, library.get)


def positions_in_sentence(results: Sequence[SlotResult]) -> list[int]:
    """For each slot, which [CITATION] of its sentence it is (slots sharing a sentence are adjacent)."""
    out: list[int] = []
    for i, r in enumerate(results):
        prev = results[i - 1] if i else None
        same = prev is not None and slot_of(prev).sentence == slot_of(r).sentence
        out.append(out[-1] + 1 if same else 0)
    return out
