"""CiteFinder: the entry point (`streamlit run app.py`). Names the pages in the sidebar and runs the chosen one.

Kept light on purpose: the first paint of a page must not wait for the heavy imports (Chroma, torch),
which the pages do behind a visible "Opening the library…".
"""

from pathlib import Path

from citefinder.config import offline_environment

offline_environment()

import streamlit as st  # noqa: E402

PAGES = Path(__file__).resolve().parent / "pages"
FAVICON = Path(__file__).resolve().parent / "assets" / "logo.png"  # local: nothing is fetched from a font CDN

st.set_page_config(page_title="CiteFinder", page_icon=str(FAVICON), layout="wide")
st.navigation([
    st.Page(PAGES / "1_Cite.py", title="Cite", icon=":material/format_quote:", url_path="Cite", default=True),
    st.Page(PAGES / "6_Check.py", title="Check", icon=":material/fact_check:", url_path="Check"),
    st.Page(PAGES / "2_Library.py", title="Library", icon=":material/local_library:", url_path="Library"),
    st.Page(PAGES / "3_Settings.py", title="Settings", icon=":material/settings:", url_path="Settings"),
    st.Page(PAGES / "4_Search.py", title="Search", icon=":material/search:", url_path="Search"),
    st.Page(PAGES / "5_Evaluate.py", title="Evaluate", icon=":material/query_stats:", url_path="Evaluate"),
]).run()
