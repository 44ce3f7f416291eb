"""The Library page's view of the .bib files paired on the Cite or Check page: each has a library of its own
(``<library>/paired/<hash>/library``, :mod:`citefinder.ui.paired_bib`), so its papers are not in the table
above. Listed here, with where they live, and editable like the others (an edit reaches that .bib's export); each
can be completed from the literature library here as on the Cite page, each field found showing where it came
from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library.bibcount import count_library
from citefinder.library.store import Library
from citefinder.types import Paper
from citefinder.ui import enrich_view, paired_bib, paper_editor, resources, state
from citefinder.ui.markdown import code_span, escape_markdown, message_markdown

MAX_SHOWN = 8  # the most recently used paired files


def paired_folders(settings: Settings) -> list[Path]:
    """The saved paired files' folders that hold a library, the most recently used first."""
    root = Path(settings.library) / "paired"
    if not root.is_dir():
        return []
    found = [f for f in root.iterdir() if (f / "library" / "library.json").exists()]
    return sorted(found, key=lambda f: (f / "library" / "library.json").stat().st_mtime, reverse=True)


def _pairing_time(folder: Path) -> float:
    saved = next(folder.glob("refs.*"), None)
    return saved.stat().st_mtime if saved is not None else folder.stat().st_mtime


def shown_names(settings: Settings, folders: Sequence[Path]) -> dict[Path, str]:
    """Each paired file's name as the user gave it, told apart when two share one: "refs.bib (paired 2026-11-27
    09:19)", and the folder's id when even that is the same."""
    current: state.PairedBib | None = st.session_state.get(state.CITE_PAIRED)
    names: dict[Path, str] = {}
    for folder in folders:
        named = folder / paired_bib.NAME_FILE
        names[folder] = (current.name if current is not None and Path(current.folder) == folder
                         else named.read_text(encoding="utf-8").strip() if named.exists() else "refs.bib")
    return distinct_names({f: (n, _pairing_time(f)) for f, n in names.items()})


def distinct_names(named: Mapping[Path, tuple[str, float]]) -> dict[Path, str]:
    """Pure: folder -> (name, when paired) made into names that differ (the date, then the folder, added to the
    names that are shared)."""
    counts = Counter(name for name, _ in named.values())
    out = {f: name if counts[name] == 1 else f"{name} (paired {datetime.fromtimestamp(when):%Y-%m-%d %H:%M})"
           for f, (name, when) in named.items()}
    again = Counter(out.values())
    return {f: name if again[name] == 1 else f"{name[:-1]}, paired/{f.name[:8]})" if name.endswith(")")
            else f"{name} (paired/{f.name[:8]})" for f, name in out.items()}


def whose(settings: Settings, library: Library, papers: Sequence[Paper]) -> dict[str, str]:
    """doc_id -> whose the paper is, for the Library page's table: "sample" (the sample library) or "yours", and
    "paired with NAME" when a .bib paired on the Cite or Check page holds the same work."""
    from citefinder.library.sample import is_sample

    out = {p.doc_id: "sample" if is_sample(p) else "yours" for p in papers}
    folders = paired_folders(settings)[:MAX_SHOWN]
    names = shown_names(settings, folders)
    ids = [p.doc_id for p in papers]
    for folder in folders:
        try:
            held = resources.get_library(state.paired_settings(settings, folder)).get(ids)
        except CitefinderError:
            continue
        for paper in held:
            out[paper.doc_id] += f" · paired with {names[folder]}"
    return out


def _same(library: Library) -> Library:
    return library


def paired_section(settings: Settings) -> None:
    folders = paired_folders(settings)
    if not folders:
        return
    st.subheader("Paired .bib files")
    st.caption(f"A .bib paired on the Cite or Check page is read into a library of its own, beside this one "
               f"({code_span(Path(settings.library) / 'paired')}), so its papers are not in the table "
               "above. Their entries, and edits made here, are what that .bib's downloads hold.")
    names = shown_names(settings, folders[:MAX_SHOWN])
    for n, folder in enumerate(folders[:MAX_SHOWN]):
        try:
            library = resources.get_library(state.paired_settings(settings, folder))
            papers = list(library.iter_papers())
        except CitefinderError as e:
            st.caption(f"{escape_markdown(folder.name)}: cannot be opened ({message_markdown(e)})")
            continue
        name = names[folder]
        label = f"{name} · {count_library(library).words()} · paired/{folder.name}"
        with st.expander(escape_markdown(label), icon=":material/link:"):
            st.dataframe(pd.DataFrame([{"key": p.key or "", "title": p.title, "year": p.year or "",
                                        "whose": f"paired with {name}"} for p in papers]),
                         hide_index=True, width="stretch")
            enrich_view.enrich_button(settings, partial(_same, library), library.path,
                                      key=f"paired_enrich_{folder.name}")
            titles = {p.doc_id: p.title for p in papers}
            doc_id = st.selectbox("Open and edit", list(titles), index=None, key=f"paired_edit_{folder.name}",
                                  format_func=titles.__getitem__, placeholder="Choose a paper")
            paper = next((p for p in papers if p.doc_id == doc_id), None)
            if paper is not None:
                paper_editor.saved_note(paper)
                paper_editor.edit_form(library, paper, f"paired_{n}")
    if len(folders) > MAX_SHOWN:
        st.caption(f"{len(folders) - MAX_SHOWN} older paired files are not shown.")
