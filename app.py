"""CiteFinder: the Cite page. Paste or upload a draft, fill every [CITATION], download the .bib."""

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

from citefinder.slots import find_slots  # noqa: E402
from citefinder.ui import cite_view, layout, resources, state  # noqa: E402

resources.configure_logging()
settings = layout.page_setup("Cite", ":material/format_quote:")
library = layout.open_library(settings)
layout.ensure_sample(library)
layout.sidebar_summary(settings, library)

st.title("Find the papers behind every [CITATION]")
st.caption("From your own library. Nothing leaves this machine unless you configure an LLM endpoint.")

text = cite_view.draft_input()
slots = find_slots(text, settings.context_sentences)
cite_view.slot_count_line(slots)

if st.button("Find citations", type="primary", icon=":material/search:", disabled=not slots):
    run = cite_view.fill_with_progress(settings, text, st.session_state.get(state.CITE_SOURCE))
    if run is not None:
        st.session_state[state.CITE_RUN] = run

run = st.session_state.get(state.CITE_RUN)
if run is not None:
    st.divider()
    cite_view.results_view(run, library)
