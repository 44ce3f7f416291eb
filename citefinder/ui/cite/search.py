"""A slot's search of the papers its suggestions come from ("LeCun 1998", "Vaswani attention": the year and the
authors count, :func:`citefinder.library.find.find_papers`), each result one click from being used or added. The
label says which papers: the paired .bib when the run is restricted to one (the Search page searches the whole
library), else the whole library."""

from __future__ import annotations

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library.find import find_papers
from citefinder.library.store import Library
from citefinder.types import SlotResult
from citefinder.ui import render, state
from citefinder.ui.cite.draft import slot_of
from citefinder.ui.cite.rows import candidate_row

SEARCH_K = 8


def search_label(run: state.CiteRun) -> str:
    """What the card's search searches, in its own words: one meaning for "the whole library" on every page."""
    if run.paired is not None:
        return f"Search {run.paired.name} ({run.paired.words()})"
    return "Search the whole library"


def library_search(settings: Settings, run: state.CiteRun, result: SlotResult, cited: tuple[str, ...],
                   library: Library, latest: int | None) -> None:
    index = slot_of(result).index
    box = st.expander(search_label(run), key=f"libsearch_{run.run_id}_{index}", on_change="rerun",
                      icon=":material/travel_explore:")
    if not box.open:
        return
    with box:
        query = st.text_input("Title words, authors, a year", key=f"libq_{run.run_id}_{index}",
                              placeholder="e.g. LeCun 1998, or Vaswani attention")
        if not query.strip():
            return
        try:
            papers = find_papers(library, query, SEARCH_K)
        except CitefinderError as e:
            render.error_box(e)
            return
        if not papers:
            st.caption("Nothing in " + (run.paired.name if run.paired is not None else "your library")
                       + " matches those words.")
        for i, paper in enumerate(papers, 1):
            candidate_row(settings, run, result, paper, f"{i}\\.", cited, None,
                          key=f"{run.pick_key(index)}_lib_{i}", latest=latest, library=library)
