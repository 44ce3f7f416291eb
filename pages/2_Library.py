"""Library: what is open, import references, browse and search papers, remove some."""

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

from citefinder.ui import layout, library_view, paired_view, paper_editor  # noqa: E402
from citefinder.ui.contexts_panel import contexts_panel  # noqa: E402

settings = layout.page_setup("Library")
library = layout.open_library(settings)
layout.sidebar_summary(settings, library)

st.title("Library")
library_view.flash_message()
library_view.header(library)
library_view.sample_section(settings, library)
if library.count() == 0:
    library_view.empty_state(library)
library_view.import_section(library)
library_view.link_section(library)
contexts_panel(settings)

st.divider()
shown = library_view.papers_view(library, settings)
paper_editor.edit_section(library, shown)
library_view.remove_section(library, shown)
paired_view.paired_section(settings)
