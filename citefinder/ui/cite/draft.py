"""The Cite page's draft: the text box and upload, the example, and keeping the draft, its results and the
user's picks in the session and in the library's last-draft file (:mod:`citefinder.ui.workspace`), so nothing
is lost on navigation or reload.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.text.drafts import extract_draft_text
from citefinder.text.slots import find_slots
from citefinder.types import Paper, Slot, SlotResult
from citefinder.ui import paired_bib, render, state, workspace
from citefinder.ui.fill_job import FillJob
from citefinder.ui.markdown import escape_markdown

DRAFT_TYPES = ["pdf", "tex", "txt", "md"]
EXAMPLE = (
    "Recurrent networks long dominated sequence modelling. Then the Transformer showed that attention is all "
    "you need [CITATION]. This changed the field quickly. Pre-training deep bidirectional transformers improved "
    "language understanding [CITATION].\n\nSearch engines still matter in this picture. The probabilistic "
    "relevance framework behind BM25 remains a strong lexical baseline [CITATION]. Neural methods arrived later. "
    "Dense passage retrieval embeds questions and passages for open-domain question answering [CITATION]. "
    "Both can be combined: reciprocal rank fusion merges the two rankings [CITATION]."
)


def slot_of(result: SlotResult) -> Slot:
    """A draft result's slot (a Find-citations run holds slot results only, never a search's)."""
    if result.slot is None:
        raise ValueError("a Find-citations result without its slot")
    return result.slot


def library_folder(settings: Settings) -> str:
    return str(settings.library)


def choices_state() -> dict[int, str | None]:
    return st.session_state.setdefault(state.CITE_CHOICES, {})


def extra_state() -> dict[str, Paper]:
    return st.session_state.setdefault(state.CITE_EXTRA, {})


def save_workspace(settings: Settings) -> None:
    """Write the current draft, results and picks to the library's last-draft file."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    draft = workspace.Draft(
        text=st.session_state.get(state.CITE_DRAFT, ""),
        source_name=st.session_state.get(state.CITE_SOURCE),
        results=run.results if run else (),
        choices=dict(choices_state()),
        extra_papers=dict(extra_state()),
        elapsed_s=run.elapsed_s if run else 0.0,
    )
    try:
        workspace.save_draft(library_folder(settings), draft)
    except OSError as e:
        st.toast(f"Could not save the draft: {escape_markdown(e)}", icon=":material/warning:")


def restore_last_draft(settings: Settings) -> None:
    """Once per session: bring back this library's last draft (text, results, picks) from disk."""
    if st.session_state.get(state.CITE_RESTORED):
        return
    st.session_state[state.CITE_RESTORED] = True
    if st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN):
        return
    draft = workspace.load_draft(library_folder(settings))
    if draft is None or not (draft.text or draft.results):
        return
    st.session_state[state.CITE_DRAFT] = draft.text
    st.session_state[state.CITE_TEXT] = draft.text
    st.session_state[state.CITE_SOURCE] = draft.source_name
    if draft.results:
        total = len(find_slots(draft.text, settings.context_sentences)) if draft.text else len(draft.results)
        st.session_state[state.CITE_RUN] = state.CiteRun(draft.text, draft.results, draft.elapsed_s,
                                                         draft.source_name, total=max(total, len(draft.results)))
    st.session_state[state.CITE_CHOICES] = dict(draft.choices)
    st.session_state[state.CITE_EXTRA] = dict(draft.extra_papers)
    when = datetime.fromtimestamp(draft.saved_at).strftime("%Y-%m-%d %H:%M") if draft.saved_at else "earlier"
    st.toast(f"Restored your last draft ({when}).", icon=":material/history:")


def start_over(settings: Settings) -> None:
    """Forget the draft, its results and picks, here and on disk (a fill in progress is stopped)."""
    job: FillJob | None = st.session_state.pop(state.CITE_JOB, None)
    if job is not None:
        job.cancel()
    for key in (state.CITE_RUN, state.CITE_CHOICES, state.CITE_EXTRA, state.CITE_SOURCE, state.CITE_FOCUS,
                state.CITE_UPLOAD_SEEN):
        st.session_state.pop(key, None)
    st.session_state[state.CITE_DRAFT] = ""
    st.session_state[state.CITE_TEXT] = ""
    workspace.clear_draft(library_folder(settings))


def _text_changed(settings: Settings) -> None:
    st.session_state[state.CITE_DRAFT] = st.session_state.get(state.CITE_TEXT, "")
    save_workspace(settings)


def _use_example(settings: Settings) -> None:
    st.session_state[state.CITE_TEXT] = EXAMPLE
    st.session_state[state.CITE_SOURCE] = None
    _text_changed(settings)


def draft_input(settings: Settings) -> str:
    """Uploader and text area; an uploaded draft's text replaces the text area's content."""
    if state.CITE_TEXT not in st.session_state:  # back from another page: the widget forgot, the draft did not
        st.session_state[state.CITE_TEXT] = st.session_state.get(state.CITE_DRAFT, "")
    upload = st.file_uploader(
        "Upload a draft (PDF, LaTeX, text or Markdown)", type=DRAFT_TYPES, key=state.CITE_UPLOAD,
        help="Mark each place that needs a reference with [CITATION].",
    )
    if upload is not None and st.session_state.get(state.CITE_UPLOAD_SEEN) != upload.file_id:
        st.session_state[state.CITE_UPLOAD_SEEN] = upload.file_id
        try:
            st.session_state[state.CITE_TEXT] = extract_draft_text(upload.getvalue(), upload.name)
            st.session_state[state.CITE_SOURCE] = upload.name
            _text_changed(settings)
        except CitefinderError as e:
            render.error_box(e)
    paired_bib.bib_uploader()
    row = st.container(horizontal=True, vertical_alignment="center")  # wraps instead of cutting labels when narrow
    row.button("Try an example", type="tertiary", icon=":material/lightbulb:", on_click=_use_example, args=(settings,))
    has_work = bool(st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN))
    row.button("Start over", type="tertiary", icon=":material/restart_alt:", on_click=start_over, args=(settings,),
              disabled=not has_work, help="Clear the draft, its results and your picks (also the saved copy).")
    source = st.session_state.get(state.CITE_SOURCE)
    if source:
        row.caption(f"Text from **{escape_markdown(source)}**")
    text = st.text_area(
        "...or paste your text", key=state.CITE_TEXT, height=180, on_change=_text_changed, args=(settings,),
        placeholder="Self-attention alone can replace recurrence [CITATION]. ...",
    )
    st.session_state[state.CITE_DRAFT] = text
    st.caption("Your draft, results and picks are kept for this library in "
               f"{escape_markdown(workspace.draft_path(library_folder(settings)))} until you start over.")
    return text


def slot_count_line(slots: Sequence[Slot]) -> None:
    if slots:
        st.markdown(f"**{len(slots)}** citation slot{'s' if len(slots) != 1 else ''} found.")
    else:
        st.caption("No slot yet: mark each place that needs a reference with [CITATION], [CITE], [?] or \\cite{?}.")
