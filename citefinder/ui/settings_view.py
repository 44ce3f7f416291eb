"""The Settings page's forms. Settings apply to this browser session and are saved for this user
(:mod:`citefinder.ui.user_settings`), except the API key: it is read from a password field, kept in the
session's Settings (a SecretStr) and never shown back or written to disk.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import ValidationError

from citefinder.config import EMBEDDER_PRESETS, SECRET_FIELDS, Settings
from citefinder.errors import CitefinderError
from citefinder.rank.rerank import MPNET_RESCORER
from citefinder.ui import resources, state, user_settings
from citefinder.ui.connection import check_llm
from citefinder.ui.markdown import escape_markdown

CUSTOM = "custom"
RERANK_NONE, RERANK_FOLDER = "none", "cross-encoder (folder or name)"


def apply(changes: dict[str, Any]) -> bool:
    """Validate ``changes`` over this session's settings; store them or show pydantic's message."""
    try:
        new = state.get_settings().with_overrides(**changes)
    except ValidationError as e:
        st.error("Not applied. " + escape_markdown(state.validation_message(e)), icon=":material/error:")
        return False
    state.set_settings(new)
    return True


def llm_form(settings: Settings) -> None:
    st.subheader("LLM selector")
    st.caption(
        "Optional. Without an LLM, the top candidate is selected when its calibrated confidence (the probability "
        "that it is right, from how the retrieval agents agree on it, fit on training drafts) clears the threshold; "
        "otherwise the slot says not found and its candidates stay one click away."
    )
    with st.form("llm"):
        model = st.text_input("Model (LiteLLM form)", value=settings.llm_model or "",
                              placeholder="openai/gpt-4o-mini or hosted_vllm/<alias>")
        base = st.text_input("API base URL", value=settings.llm_api_base or "",
                             placeholder="empty: the provider's default endpoint")
        key = st.text_input("API key", type="password", value="",
                            placeholder="a key is set (hidden); type to replace it" if settings.llm_api_key
                            else "empty: no key, or OPENAI_API_KEY from the environment")
        forget = st.checkbox("Forget the key", value=False, disabled=settings.llm_api_key is None)
        c1, c2, c3 = st.columns(3)
        timeout = c1.number_input("Timeout per call (s)", value=float(settings.llm_timeout_s), step=5.0)
        concurrency = c3.number_input("Slots at a time", value=int(settings.llm_concurrency), min_value=1,
                                      max_value=32, step=1, help="LLM calls in flight at once during a fill.")
        program = c2.text_input("Compiled program", value=settings.llm_program,
                                help="'auto': the newest one `citefinder optimize` saved in the library; "
                                "'none': the plain prompt; or the path of a program .json.")
        rewrite = st.checkbox("Let the LLM rewrite each slot into extra search queries (one more call per slot)",
                              value=settings.llm_rewrite)
        c1, c2 = st.columns(2)
        save = c1.form_submit_button("Save", type="primary")
        test = c2.form_submit_button("Save and test connection")
    if save or test:
        changes: dict[str, Any] = {"llm_model": model, "llm_api_base": base, "llm_timeout_s": timeout,
                                   "llm_concurrency": int(concurrency), "llm_program": program,
                                   "llm_rewrite": rewrite}
        if key:
            changes["llm_api_key"] = key
        elif forget:
            changes["llm_api_key"] = None
        if test:
            save_if_connected(changes)
        elif apply(changes):
            st.session_state.pop(state.LLM_CHECK, None)  # a test of other settings says nothing of these
            st.success("LLM settings saved (the API key for this session only).")
    ok_message = st.session_state.get(state.LLM_CHECK)
    if ok_message:
        ok, message = ok_message
        (st.success if ok else st.error)(escape_markdown(message))


def save_if_connected(changes: dict[str, Any]) -> None:
    """*Save and test connection*: the new settings are tested first and saved only when the endpoint answers;
    a failed test leaves the settings as they were (and says so)."""
    try:
        candidate = state.get_settings().with_overrides(**changes)
    except ValidationError as e:
        st.error("Not applied. " + escape_markdown(state.validation_message(e)), icon=":material/error:")
        return
    if test_connection(candidate):
        state.set_settings(candidate)
    else:
        ok, message = st.session_state[state.LLM_CHECK]
        st.session_state[state.LLM_CHECK] = (ok, f"Not saved: the endpoint did not answer, so the LLM settings "
                                                 f"stay as they were. {message}")


def test_connection(settings: Settings) -> bool:
    with st.spinner(f"Asking {settings.llm_model}..."):
        try:
            answer, seconds = check_llm(settings)
            st.session_state[state.LLM_CHECK] = (True, f"Connected: {settings.llm_model} answered "
                                                 f"{answer[:60]!r} in {seconds:.1f} s.")
            return True
        except CitefinderError as e:
            st.session_state[state.LLM_CHECK] = (False, str(e))
            return False


def models_form(settings: Settings) -> None:
    st.subheader("Library, models and retrieval")
    preset = settings.embedder if settings.embedder in EMBEDDER_PRESETS else CUSTOM
    if not settings.reranker:
        rerank_choice = RERANK_NONE
    elif settings.reranker == MPNET_RESCORER:
        rerank_choice = MPNET_RESCORER
    else:
        rerank_choice = RERANK_FOLDER
    with st.form("models"):
        c1, c2 = st.columns(2)
        library = c1.text_input("Library folder", value=str(settings.library))
        chroma = c2.text_input("Chroma server (HOST:PORT)", value=settings.chroma_host or "",
                               placeholder="empty: embedded store in the library folder")
        c1, c2 = st.columns(2)
        embedder = c1.selectbox("Embedder", list(EMBEDDER_PRESETS) + [CUSTOM],
                                index=(list(EMBEDDER_PRESETS) + [CUSTOM]).index(preset),
                                help="A library keeps the embedder it was built with.")
        custom = c2.text_input("Custom embedder (folder or model name)",
                               value="" if preset != CUSTOM else settings.embedder)
        c1, c2 = st.columns(2)
        rerank = c1.selectbox("Reranker", [RERANK_NONE, MPNET_RESCORER, RERANK_FOLDER],
                              index=[RERANK_NONE, MPNET_RESCORER, RERANK_FOLDER].index(rerank_choice))
        rerank_path = c2.text_input("Cross-encoder folder or name",
                                    value=settings.reranker if rerank_choice == RERANK_FOLDER else "")
        c1, c2, c3, c4 = st.columns(4)
        k_bm25 = c1.number_input("BM25 k", value=settings.k_bm25, step=10)
        k_dense = c2.number_input("Dense k", value=settings.k_dense, step=10)
        rerank_top_n = c3.number_input("Rerank top n", value=settings.rerank_top_n, step=5)
        select_candidates = c4.number_input("Candidates shown to the LLM", value=settings.select_candidates, step=1)
        c1, c2, c3, c4 = st.columns(4)
        fusions = ["learned", "rrf", "max"]
        fusion = c1.selectbox("Fusion", fusions, index=fusions.index(settings.fusion),
                              help="learned: per-agent weights tuned on training drafts; rrf: plain RRF with k below")
        rrf_k = c2.number_input("RRF k (plain rrf)", value=settings.rrf_k, step=10)
        threshold = c3.number_input("Confidence threshold", value=float(settings.confidence_threshold), step=0.05,
                                    format="%.2f", help="Without an LLM, fill a slot when the calibrated probability "
                                    "that its top candidate is right is at least this. Lower fills more slots, with "
                                    "more wrong picks; 0 always selects the top one.")
        context = c4.number_input("Context sentences", value=settings.context_sentences, step=1)
        applied = st.form_submit_button("Apply", type="primary")
    if applied and embedder == CUSTOM and not custom.strip():
        st.error("Not applied. Enter a folder or model name for the custom embedder.", icon=":material/error:")
    elif applied:
        changes = {
            "library": library, "chroma_host": chroma,
            "embedder": custom.strip() if embedder == CUSTOM else embedder,
            "reranker": {RERANK_NONE: None, MPNET_RESCORER: MPNET_RESCORER}.get(rerank, rerank_path),
            "k_bm25": k_bm25, "k_dense": k_dense, "rerank_top_n": rerank_top_n,
            "select_candidates": select_candidates, "fusion": fusion, "rrf_k": rrf_k,
            "confidence_threshold": threshold, "context_sentences": context,
        }
        if library_usable(library, chroma, custom.strip() if embedder == CUSTOM else embedder) and apply(changes):
            st.success("Applied and saved.")


LEARN_TOGGLE = "settings_learn_from_picks"


def _learning_changed() -> None:
    if apply({"learn_from_picks": bool(st.session_state.get(LEARN_TOGGLE))}):
        st.toast("Learning from your picks is " + ("on." if st.session_state.get(LEARN_TOGGLE) else "off."))


def learning_form(settings: Settings) -> None:
    """Whether accepting or changing a pick teaches the library's citation-context memory."""
    st.subheader("Learning from your picks")
    st.session_state[LEARN_TOGGLE] = settings.learn_from_picks
    st.toggle("Learn from my picks", key=LEARN_TOGGLE, on_change=_learning_changed,
              help="When you accept or change a pick on the Cite page (and with `citefinder fill` / `check` on a "
                   "draft with filled cites), its sentence and paper join the library's citation-context memory, "
                   "so the next similar sentence finds that paper.")
    st.caption("The pairs learned so far are counted, and forgotten with one button, on the **Library** page "
               "(*Citation contexts*); removing a pick later does not unlearn it.")


def current_view(settings: Settings) -> None:
    """The session's effective settings (the API key only as set / not set)."""
    with st.expander("Effective settings of this session", icon=":material/tune:"):
        shown = settings.model_dump(mode="json")
        for name in SECRET_FIELDS:  # the keys and the contact address: only whether they are set
            shown[name] = "(set, hidden)" if getattr(settings, name) else None
        st.json(shown)
    if st.button("Reset to defaults (CITEFINDER_* environment)", icon=":material/restart_alt:"):
        user_settings.forget_settings()
        for key in (state.SETTINGS, state.LLM_CHECK):
            st.session_state.pop(key, None)
        st.rerun()


def where_saved() -> str:
    """Where this user's settings are kept, in one line for the page."""
    return (f"Saved for you in {escape_markdown(user_settings.settings_path())}, except the API key, which lasts "
            "for this browser session only (to keep one, set CITEFINDER_LLM_API_KEY or OPENAI_API_KEY).")


def library_usable(folder: str, chroma_host: str, embedder: str) -> bool:
    """Open the library these settings would use before applying them; say why not when it cannot be."""
    try:
        candidate = state.get_settings().with_overrides(library=folder, chroma_host=chroma_host, embedder=embedder)
    except ValidationError:
        return True  # apply() shows pydantic's message
    path = candidate.library.expanduser()
    if path.exists() and not path.is_dir():
        st.error(f"Not applied. {escape_markdown(path)} is a file, not a folder.", icon=":material/error:")
        return False
    if not path.exists() and not path.parent.exists():
        st.error(f"Not applied. The folder {escape_markdown(path.parent)} does not exist: create it first, or "
                 "choose another library folder.", icon=":material/error:")
        return False
    try:
        with st.spinner("Opening the library..."):
            resources.get_library(candidate)
    except CitefinderError as e:
        st.error("Not applied. " + escape_markdown(e), icon=":material/error:")
        return False
    return True
