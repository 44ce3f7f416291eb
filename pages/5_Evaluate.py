"""Evaluate: run a benchmark query file through the pipeline; recall@k curves per stage and the misses."""

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

from citefinder.ui import evaluate_view, layout  # noqa: E402

settings = layout.page_setup("Evaluate")
library = layout.open_library(settings)
layout.sidebar_summary(settings, library)

st.title("Evaluate retrieval and selection")
st.caption("Per-stage recall@k, MRR and nDCG@10 on a benchmark query file, scored against this library. "
           "Start with a few items: each one runs the full pipeline.")

source, split, limit = evaluate_view.choose_dataset()
if st.button("Run evaluation", type="primary", icon=":material/play_arrow:", disabled=source is None):
    evaluate_view.run_evaluation(settings, library, source, split, limit)

result = st.session_state.get(evaluate_view.EVAL_RESULT)
if result is not None:
    st.divider()
    evaluate_view.show(result)
