"""Settings for this browser session: LLM endpoint, models, retrieval knobs."""

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

from citefinder.ui import layout, online_view, settings_view, state  # noqa: E402
from citefinder.ui.optimize_panel import optimize_panel  # noqa: E402

settings = layout.page_setup("Settings")

st.title("Settings")
st.caption("Defaults come from CITEFINDER_* environment variables. " + settings_view.where_saved()
           + " The API key is never shown back.")

settings_view.llm_form(settings)
st.divider()
settings_view.models_form(settings)
st.divider()
settings_view.learning_form(state.get_settings())
st.divider()
online_view.literature_form(state.get_settings())
online_view.online_form(state.get_settings())
st.divider()
optimize_panel(state.get_settings())
st.divider()
settings_view.current_view(state.get_settings())
layout.sidebar_summary(state.get_settings(), None)
