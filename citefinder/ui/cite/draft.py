"""The Cite page's draft: the text box and upload, the paired .bib, the example, and keeping the draft, its
results, the user's picks and the pairing in the session and in the library's last-draft file
(:mod:`citefinder.ui.workspace`), so nothing is lost on navigation or reload; *Start over* asks first and can
be undone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.text.drafts import extract_draft_text
from citefinder.text.slots import find_slots
from citefinder.types import Paper, Slot, SlotResult
from citefinder.ui import paired_bib, render, state, workspace
from citefinder.ui.fill_job import FillJob
from citefinder.ui.markdown import escape_markdown, message_markdown
from citefinder.ui.picks import Picks, SetAside

DRAFT_TYPES = ["pdf", "tex", "txt", "md"]
EXAMPLE = (
    "Recurrent networks long dominated sequence modelling. Then the Transformer showed that attention is all "
    "you need [CITATION]. This changed the field quickly. Pre-training deep bidirectional transformers improved "
    "language understanding [CITATION].\n\nSearch engines still matter in this picture. The probabilistic "
    "relevance framework behind BM25 remains a strong lexical baseline [CITATION]. Neural methods arrived later. "
    "Dense passage retrieval embeds questions and passages for open-domain question answering [CITATION]. "
    "Both can be combined: reciprocal rank fusion merges the two rankings [CITATION]."
)


@st.cache_data(max_entries=4, show_spinner=False)
def slots_in(text: str, context_sentences: int) -> list[Slot]:
    """The draft's slots, found once per text (each run of the page asks; a long draft takes a tenth of a
    second to read)."""
    return find_slots(text, context_sentences)


def slot_of(result: SlotResult) -> Slot:
    """A draft result's slot (a Find-citations run holds slot results only, never a search's)."""
    if result.slot is None:
        raise ValueError("a Find-citations result without its slot")
    return result.slot


def library_folder(settings: Settings) -> str:
    return str(settings.library)


def choices_state() -> Picks:
    """The user's picks: slot index -> doc_ids in cite order (``()``: left empty)."""
    return st.session_state.setdefault(state.CITE_CHOICES, {})


def extra_state() -> dict[str, Paper]:
    return st.session_state.setdefault(state.CITE_EXTRA, {})


def changed_state() -> dict[int, SetAside]:
    return st.session_state.setdefault(state.CITE_CHANGED, {})


def history_state() -> list[Picks]:
    return st.session_state.setdefault(state.CITE_HISTORY, [])


def draft_id() -> str:
    """The identity of the draft this tab holds (a new one when it holds none yet)."""
    value = st.session_state.get(state.CITE_DRAFT_ID)
    if not value:
        value = st.session_state[state.CITE_DRAFT_ID] = workspace.new_draft_id()
    return str(value)


def current_draft() -> workspace.Draft:
    """What the page holds now, as saved for the library."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    paired = run.paired if run is not None else st.session_state.get(state.CITE_PAIRED)
    return workspace.Draft(
        text=st.session_state.get(state.CITE_DRAFT, ""),
        source_name=st.session_state.get(state.CITE_SOURCE),
        results=run.results if run else (),
        choices=dict(choices_state()),
        extra_papers=dict(extra_state()),
        elapsed_s=run.elapsed_s if run else 0.0,
        changed=dict(changed_state()),
        history=tuple(history_state()),
        paired=paired.to_dict() if paired is not None else None,
        run_text=run.text if run else None,
        draft_id=draft_id(),
    )


def save_workspace(settings: Settings) -> None:
    """Write the current draft, results and picks to this draft's own file of the library."""
    try:
        workspace.save_draft(library_folder(settings), current_draft())
    except (OSError, CitefinderError) as e:
        st.toast(f"Could not save the draft: {escape_markdown(e)}", icon=":material/warning:")


def load_into_session(settings: Settings, draft: workspace.Draft) -> None:
    """Make a saved draft the page's: text, results, picks, what an edit set aside, pairing (with an empty undo
    history: undo is for the changes of this browser session)."""
    st.session_state[state.CITE_DRAFT] = draft.text
    st.session_state[state.CITE_TEXT] = draft.text
    st.session_state[state.CITE_SOURCE] = draft.source_name
    paired = state.PairedBib.from_dict(draft.paired)
    if paired is not None and not Path(paired.folder).is_dir():
        paired = None  # the saved copy of the .bib is gone: the page says the draft is not paired
    st.session_state[state.CITE_PAIRED] = paired
    if draft.results:
        ran_on = draft.run_text if draft.run_text is not None else draft.text  # the results' own text
        total = len(find_slots(ran_on, settings.context_sentences)) if ran_on else len(draft.results)
        st.session_state[state.CITE_RUN] = state.CiteRun(ran_on, draft.results, draft.elapsed_s,
                                                         draft.source_name, total=max(total, len(draft.results)),
                                                         paired=paired)
    else:
        st.session_state.pop(state.CITE_RUN, None)
    st.session_state[state.CITE_CHOICES] = dict(draft.choices)
    st.session_state[state.CITE_EXTRA] = dict(draft.extra_papers)
    st.session_state[state.CITE_CHANGED] = dict(draft.changed)
    # undo (key u) takes back this browser session's changes only: a change made in an earlier session, on a
    # slot out of view, is not undone by surprise
    st.session_state[state.CITE_HISTORY] = []
    st.session_state[state.CITE_DRAFT_ID] = draft.draft_id or workspace.new_draft_id()
    for key in (state.CITE_NOTE, state.CITE_ASK, state.CITE_FOCUS, state.CITE_PAIR_ERROR):
        st.session_state.pop(key, None)


def restore_last_draft(settings: Settings) -> None:
    """Once per session: bring back this library's last draft (text, results, picks, pairing) from disk."""
    if st.session_state.get(state.CITE_RESTORED):
        return
    st.session_state[state.CITE_RESTORED] = True
    if st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN):
        return
    draft = workspace.load_draft(library_folder(settings))  # the one saved last
    if draft is None or not (draft.text or draft.results):
        return
    load_into_session(settings, draft)
    when = datetime.fromtimestamp(draft.saved_at).strftime("%Y-%m-%d %H:%M") if draft.saved_at else "earlier"
    n = sum(1 for ids in draft.choices.values() if ids)
    st.toast(f"Restored your last draft ({when}) with your {n} pick{'s' if n != 1 else ''}.",
             icon=":material/history:")


def start_over(settings: Settings) -> None:
    """Forget the draft, its results and picks (a fill in progress is stopped); the saved copy is put aside,
    so *Bring back* undoes this."""
    job: FillJob | None = st.session_state.pop(state.CITE_JOB, None)
    if job is not None:
        job.cancel()
    save_workspace(settings)  # what is put aside is what the page held
    gone = draft_id()
    _forget_page(keep_pairing=False)
    st.session_state[state.CITE_DRAFT] = ""
    st.session_state[state.CITE_TEXT] = ""
    workspace.discard_draft(library_folder(settings), gone)


def _forget_page(*, keep_pairing: bool) -> None:
    """The tab holds no draft any more (its own is saved): no run, no picks, a new identity for the next."""
    for key in (state.CITE_RUN, state.CITE_CHOICES, state.CITE_EXTRA, state.CITE_SOURCE, state.CITE_FOCUS,
                state.CITE_CHANGED, state.CITE_HISTORY, state.CITE_NOTE, state.CITE_ASK, state.CITE_DRAFT_ID, REFUSED,
                *(() if keep_pairing else (state.CITE_PAIRED, state.CITE_UPLOAD_SEEN))):
        st.session_state.pop(key, None)


def new_draft(settings: Settings) -> None:
    """Another draft begins in this tab (an upload, the example): the one held so far stays saved as itself,
    and none of its results or picks is carried into the new one."""
    if _has_work():
        save_workspace(settings)
    _forget_page(keep_pairing=True)


def open_draft(settings: Settings, wanted: str) -> None:
    """Reopen a saved draft of this library in this tab (the one held so far stays saved)."""
    if st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN):
        save_workspace(settings)
    draft = workspace.load_draft(library_folder(settings), wanted)
    if draft is not None:
        _forget_page(keep_pairing=True)  # the upload seen stays seen: it is not read again as a new draft
        load_into_session(settings, draft)


def bring_back(settings: Settings) -> None:
    """Undo *Start over*: the draft it put aside becomes the page's again."""
    draft = workspace.restore_previous(library_folder(settings))
    if draft is not None:
        load_into_session(settings, draft)


def ask(action: str | None) -> None:
    st.session_state[state.CITE_ASK] = action


def confirm_start_over(settings: Settings) -> None:
    """*Start over* asks first, saying what goes (and that it can be brought back)."""
    if st.session_state.get(state.CITE_ASK) != "start_over":
        return
    n = sum(1 for ids in choices_state().values() if ids)
    with st.container(border=True, key="cite_confirm_start_over"):
        st.warning(f"Clear the draft, its results and your {n} pick{'s' if n != 1 else ''}? You can bring them "
                   "back afterwards with *Bring back the cleared draft*.", icon=":material/restart_alt:")
        row = st.container(horizontal=True)
        row.button("Yes, clear everything", type="primary", icon=":material/delete_sweep:", key="cite_clear_yes",
                   on_click=start_over, args=(settings,))
        row.button("Cancel", key="cite_clear_no", on_click=ask, args=(None,))


def _text_changed(settings: Settings) -> None:
    st.session_state[state.CITE_DRAFT] = st.session_state.get(state.CITE_TEXT, "")
    save_workspace(settings)


SOURCE_TEXT = "cite_source_text"  # the text the uploaded file gave (to tell an edit from other pasted text)
REFUSED = "cite_upload_refused"  # why the last uploaded file was not opened (it has no slot), until the next one


class NoSlotsError(CitefinderError):
    """An uploaded draft with no place marked for a citation, while another draft is in progress."""


def no_slots_message(name: str) -> str:
    return (f"{name} has no place marked for a citation ([CITATION], [CITE], [?] or \\cite{{?}}), so it was not "
            "opened: the draft you are working on stays, with its results and picks. Mark the places that need a "
            "reference in the file and upload it again.")


def _has_work() -> bool:
    """Whether the page holds a draft in progress (text or results)."""
    return bool(st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN))


def shared_words(a: str, b: str) -> float:
    """The share of ``b``'s words that ``a`` also has (counted with repeats): an edit inside a one-line draft
    keeps most of them, other text pasted over it few."""
    from collections import Counter

    words_b = Counter(re.findall(r"\w+", b.lower()))
    if not words_b:
        return 0.0
    words_a = Counter(re.findall(r"\w+", a.lower()))
    return sum(min(n, words_a[w]) for w, n in words_b.items()) / sum(words_b.values())


def source_caption(source: str | None, loaded: str | None, text: str) -> str | None:
    """The line above the text box: which file the text came from, "edited here" once changed; None when there
    is no file, or the box now holds other text (pasted over it)."""
    if not source:
        return None
    name = escape_markdown(source)
    if loaded is None or text == loaded:
        return f"Text from **{name}**"
    if shared_words(loaded, text) < 0.5:
        return None
    return f"Text from **{name}**, edited here"


def _typed(settings: Settings) -> None:
    """The user changed the box: other text pasted over a file's forgets the file."""
    loaded = st.session_state.get(SOURCE_TEXT)
    text = st.session_state.get(state.CITE_TEXT, "")
    if loaded is not None and source_caption(st.session_state.get(state.CITE_SOURCE), loaded, text) is None:
        st.session_state[state.CITE_SOURCE] = None
        st.session_state[SOURCE_TEXT] = None
    _text_changed(settings)


def _use_example(settings: Settings) -> None:
    new_draft(settings)
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
        st.session_state.pop(REFUSED, None)
        try:
            text = extract_draft_text(upload.getvalue(), upload.name)
            if not slots_in(text, settings.context_sentences) and _has_work():
                raise NoSlotsError(no_slots_message(upload.name))  # the draft in progress stays
            if upload.name != st.session_state.get(state.CITE_SOURCE):
                new_draft(settings)  # another file is another draft: nothing of the last one is carried into it
            # (the same file again, edited, is the same draft: its picks follow their sentences)
            st.session_state[state.CITE_UPLOAD_SEEN] = upload.file_id
            st.session_state[state.CITE_TEXT] = text
            st.session_state[state.CITE_SOURCE] = upload.name
            st.session_state[SOURCE_TEXT] = st.session_state[state.CITE_TEXT]
            _text_changed(settings)
        except NoSlotsError as e:
            st.session_state[REFUSED] = str(e)
        except CitefinderError as e:
            render.error_box(e)
    if st.session_state.get(REFUSED):  # said until the next upload, whatever reruns the page
        st.error(message_markdown(st.session_state[REFUSED]), icon=":material/block:")
    paired_bib.bib_uploader(settings)
    row = st.container(horizontal=True, vertical_alignment="center")  # wraps instead of cutting labels when narrow
    row.button("Try an example", type="tertiary", icon=":material/lightbulb:", on_click=_use_example, args=(settings,))
    has_work = _has_work()
    row.button("Start over", type="tertiary", icon=":material/restart_alt:", on_click=ask, args=("start_over",),
               disabled=not has_work, help="Clear the draft, its results and your picks (it asks first; "
               "*Bring back the cleared draft* undoes it).")
    if not has_work and workspace.has_previous(library_folder(settings)):
        row.button("Bring back the cleared draft", type="tertiary", icon=":material/undo:", on_click=bring_back,
                   args=(settings,), key="cite_bring_back")
    caption = source_caption(st.session_state.get(state.CITE_SOURCE), st.session_state.get(SOURCE_TEXT),
                             st.session_state.get(state.CITE_TEXT, ""))
    if caption:
        row.caption(caption)
    text = st.text_area(
        "...or paste your text", key=state.CITE_TEXT, height=180, on_change=_typed, args=(settings,),
        placeholder="Self-attention alone can replace recurrence [CITATION]. ...",
    )
    st.session_state[state.CITE_DRAFT] = text
    confirm_start_over(settings)
    folder = library_folder(settings)
    st.caption("Your draft, results and picks are kept for this library in "
               f"{escape_markdown(workspace.draft_path(folder, draft_id()))} until you start over.")
    other_drafts(settings)
    return text


def other_drafts(settings: Settings) -> None:
    """The library's other saved drafts, each to reopen here; a record that could not be read, said."""
    folder = library_folder(settings)
    drafts = workspace.summaries(folder, but=draft_id())
    for path in workspace.unreadable(folder):
        st.warning(f"A saved draft could not be read; it is kept, untouched, as {escape_markdown(path)} "
                   "(nothing was written over it).", icon=":material/report:")
    if not drafts:
        return
    with st.expander(f"Your other drafts in this library ({len(drafts)})", icon=":material/folder_open:"):
        for d in drafts[:20]:
            when = datetime.fromtimestamp(d.saved_at).strftime("%Y-%m-%d %H:%M") if d.saved_at else ""
            row = st.container(horizontal=True, vertical_alignment="center")
            row.markdown(f"**{escape_markdown(d.title)}** · {when} · {d.slots} slots, "
                         f"{d.picks} pick{'s' if d.picks != 1 else ''}")
            row.button("Open", key=f"cite_open_{d.draft_id}", on_click=open_draft, args=(settings, d.draft_id),
                       help="Open this draft here, with its own results and picks (this one stays saved)")


def slot_count_line(slots: Sequence[Slot]) -> None:
    if slots:
        st.markdown(f"**{len(slots)}** citation slot{'s' if len(slots) != 1 else ''} found.")
    else:
        st.caption("No slot yet: mark each place that needs a reference with [CITATION], [CITE], [?] or \\cite{?}.")
