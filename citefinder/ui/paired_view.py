"""The Library page's view of the .bib files paired on the Cite or Check page: each has a library of its own
(``<library>/paired/<hash>/library``, :mod:`citefinder.ui.paired_bib`), so its papers are not in the table
above. Listed here, with where they live, and editable like the others (an edit reaches that .bib's export)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.ui import paired_bib, paper_editor, resources, state
from citefinder.ui.markdown import escape_markdown

MAX_SHOWN = 8  # the most recently used paired files


def paired_folders(settings: Settings) -> list[Path]:
    """The saved paired files' folders that hold a library, the most recently used first."""
    root = Path(settings.library) / "paired"
    if not root.is_dir():
        return []
    found = [f for f in root.iterdir() if (f / "library" / "library.json").exists()]
    return sorted(found, key=lambda f: (f / "library" / "library.json").stat().st_mtime, reverse=True)


def paired_section(settings: Settings) -> None:
    folders = paired_folders(settings)
    if not folders:
        return
    st.subheader("Paired .bib files")
    st.caption(f"A .bib paired on the Cite or Check page is read into a library of its own, beside this one "
               f"(`{escape_markdown(Path(settings.library) / 'paired')}`), so its papers are not in the table "
               "above. Their entries, and edits made here, are what that .bib's downloads hold.")
    current: state.PairedBib | None = st.session_state.get(state.CITE_PAIRED)
    for n, folder in enumerate(folders[:MAX_SHOWN]):
        try:
            library = resources.get_library(state.paired_settings(settings, folder))
            papers = list(library.iter_papers())
        except CitefinderError as e:
            st.caption(f"{escape_markdown(folder.name)}: cannot be opened ({escape_markdown(e)})")
            continue
        named = folder / paired_bib.NAME_FILE
        name = (current.name if current is not None and Path(current.folder) == folder
                else named.read_text(encoding="utf-8").strip() if named.exists() else "refs.bib")
        label = f"{name} · {len(papers)} papers · paired/{folder.name}"
        with st.expander(escape_markdown(label), icon=":material/link:"):
            st.dataframe(pd.DataFrame([{"key": p.key or "", "title": p.title, "year": p.year or ""} for p in papers]),
                         hide_index=True, width="stretch")
            titles = {p.doc_id: p.title for p in papers}
            doc_id = st.selectbox("Open and edit", list(titles), index=None, key=f"paired_edit_{folder.name}",
                                  format_func=titles.__getitem__, placeholder="Choose a paper")
            paper = next((p for p in papers if p.doc_id == doc_id), None)
            if paper is not None:
                paper_editor.saved_note(paper)
                paper_editor.edit_form(library, paper, f"paired_{n}")
    if len(folders) > MAX_SHOWN:
        st.caption(f"{len(folders) - MAX_SHOWN} older paired files are not shown.")
