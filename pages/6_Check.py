"""Check: upload a LaTeX draft and its .bib; every cited key judged against its context, one-click fixes."""

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

st.title("Check the citations of a LaTeX draft")
st.caption("For every \\cite{key}: does the paper fit the sentence it is cited in, and which of your papers "
           "fit better.")
with st.spinner("Opening the library…"):
    from citefinder.ui import check_view, layout, online_view

settings = layout.page_setup("Check")
online_view.what_leaves(settings, "Nothing leaves this machine.")
layout.sidebar_summary(settings, None)

check_view.uploaders()
if st.button("Check citations", type="primary", icon=":material/fact_check:"):
    check_view.run_check(settings)

run = st.session_state.get(check_view.RUN)
if run is not None:
    st.divider()
    check_view.show(run)
