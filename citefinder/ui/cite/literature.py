"""The Cite page's literature (:mod:`citefinder.pipeline.literature`): the setting that searches it, the tier
given to a fill, and under each card the papers *not in your library* with **Add to my library** — which
gives the paper a key in the style of the user's own keys, stores it in the library (never in the user's
.bib file) and cites it in the slot, so it joins the .bib download.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.pipeline import offers
from citefinder.pipeline.literature import LiteratureSearch, open_literature
from citefinder.types import Candidate, Paper, SlotResult
from citefinder.ui import render, state
from citefinder.ui.cite import choices as ch
from citefinder.ui.cite.draft import choices_state, slot_of
from citefinder.ui.markdown import escape_markdown, link, safe_url
from citefinder.ui.words import confidence_label
from citefinder.workflow import add_paper
from citefinder.workflow.keys import Keys
from citefinder.workflow.literature import attach_literature

OFF, UNSURE, ALWAYS = "Off", "When unsure", "Every slot"
WHEN = {UNSURE: "unsure", ALWAYS: "always"}
SHOWN = 5  # literature papers under a card
_KEYS = "cite_run_keys"  # (library path, generation) -> the keys of the page's run


def search_setting(settings: Settings) -> None:
    """Search the literature on the next fill: off, for the slots none of your papers fills confidently, or for
    every slot. Off (and said why) when no literature library is configured."""
    if not settings.literature:
        st.caption(":material/menu_book: Searching the literature beside your library is off: no literature "
                   "library is configured (setting `literature`, `CITEFINDER_LITERATURE`).")
        return
    st.session_state.setdefault(state.CITE_LITERATURE, ALWAYS if settings.literature_when == "always" else UNSURE)
    st.segmented_control(
        "Search the literature", [OFF, UNSURE, ALWAYS], key=state.CITE_LITERATURE,
        help=f"Also look in {settings.literature} for papers you don't have yet: for the slots none of your "
             "papers fills confidently, or for every slot. What it finds is shown under each slot as 'Not in your "
             "library' and is never filled in; Add to my library puts one in your library and cites it.")


@st.cache_resource(show_spinner="Opening the literature library…")
def _search(spec: str, embedder: str, _settings: Settings, _embedder: Any) -> LiteratureSearch:
    return open_literature(spec, _settings, embedder=_embedder)


def with_literature(settings: Settings, pipeline: Any) -> Any:
    """``pipeline`` with the literature tier the Cite page's setting asks for (unchanged when off)."""
    choice = st.session_state.get(state.CITE_LITERATURE)
    if not settings.literature or choice not in WHEN:
        return pipeline
    library = pipeline.library
    search = _search(settings.literature, library.embedder.name, settings, library.embedder)
    attach_literature(pipeline, settings, settings.literature, WHEN[choice], search=search)
    return pipeline


def run_keys(library: Any) -> Keys:
    """The keys of the page's run (:class:`~citefinder.workflow.keys.Keys`, made once per library state): the
    cards show, the .bib download writes and *Add to my library* gives the same key to a paper."""
    cache = st.session_state.setdefault(_KEYS, {})
    stamp = (str(library.path), library.generation()) if library is not None else None
    if stamp not in cache:
        cache.clear()
        cache[stamp] = Keys(library)
    return cache[stamp]


def current_keys() -> Keys | None:
    """The keys of the page's run drawn last (None before any)."""
    return next(iter((st.session_state.get(_KEYS) or {}).values()), None)


def key_of(paper: Paper) -> str:
    """A paper's key as the run writes it (the keys drawn last; before any, its own key or its export key)."""
    keys = current_keys()
    return (keys if keys is not None else Keys(None)).key_of(paper)


def add_to_library(settings: Settings, run: state.CiteRun, index: int, candidate: Candidate, library: Any) -> None:
    """*Add to my library*: the paper joins the library under a key in the user's style and the slot cites it."""
    try:
        added = add_paper.add_to_library(library, candidate, keys=run_keys(library))
    except CitefinderError as e:
        st.session_state[state.CITE_NOTE] = f"Could not add “{candidate.paper.title}” to your library: {e}"
        return
    paper = added.paper
    _cite(settings, run, index, paper)
    if not added.new:
        st.session_state[state.CITE_NOTE] = (f"“{paper.title}” is in your library already, as {paper.key}: slot "
                                             f"{index + 1} cites that entry (nothing was added twice).")
        return
    st.session_state[state.CITE_NOTE] = (f"Added “{paper.title}” to your library as {paper.key}: slot {index + 1} "
                                         "cites it, and the .bib download holds its entry (your own .bib file is "
                                         "unchanged).")


def use_held(settings: Settings, run: state.CiteRun, index: int, paper: Paper) -> None:
    """*Use this* on a literature paper added to the library already (from another slot): the slot cites it."""
    _cite(settings, run, index, paper)


def _cite(settings: Settings, run: state.CiteRun, index: int, paper: Paper) -> None:
    if choices_state().get(index):  # papers the user picked here stay; the engine's own pick gives way
        ch.add(settings, run, index, paper.doc_id, paper)
    else:
        ch.choose(settings, index, paper.doc_id, paper)


def literature_block(settings: Settings, run: state.CiteRun, result: SlotResult, cited: tuple[str, ...],
                     library: Any) -> None:
    """Under a card: the literature papers offered for the slot, each with *Add to my library*; or why the
    literature could not be searched."""
    trace = result.trace("literature")
    if trace is not None and trace.status == "error":
        st.caption(f":material/menu_book: The literature could not be searched: {escape_markdown(trace.message)}")
    if not result.literature:
        return
    index = slot_of(result).index
    origin = result.literature[0].origin
    shown = offers.panel(result.literature, limit=SHOWN)  # what it shows is decided in pipeline/offers.py
    with st.container(border=True, key=f"literature_{run.run_id}_{index}"):
        if shown.open:
            st.markdown(f":material/menu_book: **Not in your library** · {escape_markdown(shown.heading)} · found "
                        f"in {escape_markdown(origin)}")
            for n, c in enumerate(shown.open, 1):
                _row(settings, run, index, n, c, cited, library)
        if shown.collapsed:
            label = shown.collapsed_label if shown.open else f"Not in your library: {shown.heading}"
            with st.expander(label, expanded=False):
                for n, c in enumerate(shown.collapsed, len(shown.open) + 1):
                    _row(settings, run, index, n, c, cited, library)
        if trace is not None:
            st.caption(escape_markdown(offers.summary(trace, len(shown.open) + len(shown.collapsed))))


def _row(settings: Settings, run: state.CiteRun, index: int, n: int, c: Candidate, cited: tuple[str, ...],
         library: Any) -> None:
    row = st.container(horizontal=True, wrap=False, vertical_alignment="center")
    score = c.stage("literature")
    meta = [render.paper_meta(c.paper, max_authors=3),
            escape_markdown(confidence_label(score.score)) if score is not None else ""]
    if safe_url(c.paper.link):
        meta.append(link("open ↗", c.paper.link))
    row.markdown(f"{n}\\. **{escape_markdown(c.paper.title)}**  \n" + " · ".join(m for m in meta if m),
                 width="stretch")
    if c.doc_id in cited:
        row.button("In your library", key=f"{run.pick_key(index)}_lit_{n}", icon=":material/library_add_check:",
                   disabled=True, width="content", help="You added it; this slot cites it.")
        return
    held = library.get([c.doc_id])
    if held:  # added from another slot (or earlier): yours now, cited here with one click
        row.button("Use this", key=f"{run.pick_key(index)}_lit_{n}", icon=":material/library_add_check:",
                   width="content", on_click=use_held, args=(settings, run, index, held[0]),
                   help=f"In your library as {held[0].key}: cite it in this slot too.")
        return
    row.button("Add to my library", key=f"{run.pick_key(index)}_lit_{n}", icon=":material/library_add:",
               width="content", on_click=add_to_library, args=(settings, run, index, c, library),
               help="Store it in your library with a key in your style and cite it here; it joins the .bib "
                    "download. Your own .bib file is never changed.")
