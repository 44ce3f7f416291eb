"""Search: a question in, the library's papers ranked, with the same per-agent trace."""

from citefinder.config import offline_environment

offline_environment()

import time  # noqa: E402

import streamlit as st  # noqa: E402

from citefinder.errors import CitefinderError  # noqa: E402
from citefinder.ui import layout, render, resources, search_view, state  # noqa: E402
from citefinder.ui.cite import draft  # noqa: E402

settings = layout.page_setup("Search")
library = layout.open_library(settings)
layout.sidebar_summary(settings, library)
draft.restore_last_draft(settings)  # the Cite page's draft: its slots can take a result

st.title("Search your library")
with st.form("search"):
    question = st.text_input("Question or topic", key=state.SEARCH_QUESTION,
                             placeholder="e.g. dense retrieval for open-domain question answering")
    asked = st.form_submit_button("Search", type="primary", icon=":material/search:")

if asked and question.strip():
    start = time.perf_counter()
    try:
        with st.spinner("Searching..."):
            result = resources.make_pipeline(settings).search(question)
        st.session_state[state.SEARCH_RUN] = state.SearchRun(question, result, time.perf_counter() - start)
    except CitefinderError as e:
        render.error_box(e)

run = st.session_state.get(state.SEARCH_RUN)
if run is not None:
    st.caption(f"{len(run.result.candidates)} papers ranked for “{render.escape_markdown(run.question)}” "
               f"in {run.elapsed_s:.2f} s")
    search_view.ranked_results(settings, run.result)
    trace = st.expander("Trace: how these were ranked", key=f"search_trace_{run.run_id}", on_change="rerun",
                        icon=":material/account_tree:")
    if trace.open:
        with trace:
            render.trace_panel(run.result, library.get)
