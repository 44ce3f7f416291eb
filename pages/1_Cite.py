"""Cite: paste or upload a draft, fill every [CITATION], pick among candidates, download the .bib."""

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

# The title is drawn before anything heavy is imported: the first visit after a start sees the page at
# once, with the library opening behind a visible status.
st.title("Find the papers behind every [CITATION]")
st.caption("From your own library.")
with st.spinner("Opening the library…"):
    from citefinder.ui import layout, online_view, state
    from citefinder.ui.cite import draft, fill, literature, results

settings = layout.page_setup("Cite")
online_view.what_leaves(settings, "Nothing leaves this machine unless you configure an LLM endpoint.")
library = layout.open_library(settings)
layout.ensure_sample(library)
layout.sidebar_summary(settings, library)

draft.restore_last_draft(settings)
text = draft.draft_input(settings)
slots = draft.slots_in(text, settings.context_sentences)
draft.slot_count_line(slots)
literature.search_setting(settings)
fill.find_button(settings, text)
fill.follow_fill()

run = st.session_state.get(state.CITE_RUN)
if run is not None:
    st.divider()
    results.results_view(run, library, settings)
