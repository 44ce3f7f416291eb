"""Page frame shared by every page: page config, logo, sidebar summary, opening the library."""

from __future__ import annotations

import os

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library import sample
from citefinder.library.store import Library
from citefinder.ui import reach, resources, state
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.render import error_box

SUGGEST_SAMPLE = "suggest_sample_toggle"


def page_setup(title: str, icon: str | None = None) -> Settings:
    """Page config, logo and logging; returns this session's settings.

    The favicon is always the local logo (``icon`` is ignored): a Material icon as favicon makes the
    browser fetch it from fonts.gstatic.com, and nothing should leave the machine.
    """
    st.set_page_config(page_title=f"{title} · CiteFinder", page_icon=resources.FAVICON, layout="wide")
    resources.configure_logging()
    logo = resources.LOGO_PNG if resources.LOGO_PNG.exists() else resources.LOGO_SVG
    if logo.exists():
        st.logo(str(logo), size="large")
    settings = state.get_settings()
    if st.session_state.get(state.SETTINGS_ERROR):
        st.warning(escape_markdown(st.session_state[state.SETTINGS_ERROR]) + " Fix it on the Settings page.")
    return settings


def open_library(settings: Settings) -> Library:
    """The shared library, or an error box and a stopped page when it cannot be opened.

    The first opening in a process loads the embedder and the store (seconds): a status says so meanwhile.
    """
    try:
        with st.spinner("Opening the library…"):
            return resources.get_library(settings)
    except CitefinderError as e:
        error_box(e)
        st.info("Change the library folder or the embedder on the Settings page.")
        st.stop()
        raise  # unreachable: st.stop() ends the run


def ensure_sample(library: Library) -> None:
    """On a brand-new empty library, import the sample library with visible progress."""
    try:
        if not resources.needs_sample(library):
            return
    except CitefinderError as e:
        error_box(e)
        return
    with st.status("First run: loading the sample library (landmark NLP, IR and ML papers)...", expanded=True) as box:
        bar = st.progress(0.0, text="Reading assets/sample-library.bib")

        def progress(done: int, total: int | None) -> None:
            bar.progress(min(1.0, done / total) if total else 0.5, text=f"{done} records read")

        try:
            report = resources.load_sample(library, progress)
        except CitefinderError as e:
            box.update(label="Could not load the sample library", state="error")
            error_box(e)
            return
        bar.progress(1.0, text="Done")
        box.update(label=f"Sample library loaded: {report.added} papers in {report.elapsed_s:.1f} s",
                   state="complete", expanded=False)


def _suggest_sample(key: str) -> None:
    settings = state.get_settings()
    state.set_settings(settings.with_overrides(suggest_sample=bool(st.session_state.get(key))))


def _remove_sample(library: Library) -> None:
    try:
        removed = sample.remove_sample(library)
    except CitefinderError as e:
        st.toast(f"Could not remove the sample papers: {escape_markdown(e)}", icon=":material/error:")
        return
    st.toast(f"Removed the {removed} sample papers; your own papers stay. The Library page can load the sample "
             "again.", icon=":material/delete_sweep:")


def sample_controls(settings: Settings, library: Library, counts: sample.Counts, *, where: str) -> None:
    """The sample's switch (suggest it too) and its one-click removal, once the user has papers of their own."""
    if not counts.sample:
        return
    if counts.own:
        key = f"{SUGGEST_SAMPLE}_{where}"
        st.session_state[key] = settings.suggest_sample
        st.toggle(f"Suggest the {counts.sample} sample papers too", key=key, on_change=_suggest_sample, args=(key,),
                  help="The sample library (landmark NLP, IR and ML papers) is left out of suggestions once your "
                       "own papers are here. Turn this on to have it suggested again.")
    st.button(f"Remove the sample ({counts.sample} papers)", icon=":material/delete_sweep:",
              key=f"remove_sample_{where}", on_click=_remove_sample, args=(library,), disabled=library.read_only,
              type="tertiary",
              help="Removes only the papers of the sample library; your own papers stay.")


def sidebar_summary(settings: Settings, library: Library | None) -> None:
    """Which library is open (the user's papers counted apart from the sample's) and which models run."""
    with st.sidebar:
        exposed = reach.reach_notice(str(st.get_option("server.address") or ""), os.environ)
        if exposed:
            st.warning(exposed, icon=":material/public:")
        if library is not None:
            try:
                counts = sample.counts(library)
            except CitefinderError:
                counts = sample.Counts(library.count(), 0)
            line = f"**Library** · {counts.own:,} papers of yours"
            if counts.sample:
                line += f" + {counts.sample} sample papers" + (" (not suggested)" if counts.own and not
                                                                settings.suggest_sample else "")
            st.caption(line)
            st.caption(escape_markdown(str(library.path)))
            sample_controls(settings, library, counts, where="sidebar")
        llm = settings.llm_model or "none (threshold rule)"
        st.caption(
            f"**Embedder** · {escape_markdown(settings.embedder)}  \n"
            f"**Reranker** · {escape_markdown(settings.reranker or 'none')}  \n"
            f"**LLM** · {escape_markdown(llm)}"
        )
