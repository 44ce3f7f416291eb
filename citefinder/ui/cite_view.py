"""The Cite page's parts: draft input, filling with live progress, one card per slot, downloads."""

from __future__ import annotations

import time
from collections.abc import Sequence

import streamlit as st

from citefinder.config import Settings
from citefinder.drafts import extract_draft_text
from citefinder.errors import CitefinderError
from citefinder.library.store import Library
from citefinder.slots import find_slots, looks_like_latex
from citefinder.types import Slot, SlotResult
from citefinder.ui import exports, paired_bib, render, resources, state, tables
from citefinder.ui.markdown import escape_markdown

DRAFT_TYPES = ["pdf", "tex", "txt", "md"]
NOT_CITED = "__none__"
EXAMPLE = (
    "Recurrent networks long dominated sequence modelling. Then the Transformer showed that attention is all "
    "you need [CITATION]. This changed the field quickly. Pre-training deep bidirectional transformers improved "
    "language understanding [CITATION].\n\nSearch engines still matter in this picture. The probabilistic "
    "relevance framework behind BM25 remains a strong lexical baseline [CITATION]. Neural methods arrived later. "
    "Dense passage retrieval embeds questions and passages for open-domain question answering [CITATION]. "
    "Both can be combined: reciprocal rank fusion merges the two rankings [CITATION]."
)


def draft_input() -> str:
    """Uploader and text area; an uploaded draft's text replaces the text area's content."""
    upload = st.file_uploader(
        "Upload a draft (PDF, LaTeX, text or Markdown)", type=DRAFT_TYPES, key=state.CITE_UPLOAD,
        help="Mark each place that needs a reference with [CITATION].",
    )
    if upload is not None and st.session_state.get(state.CITE_UPLOAD_SEEN) != upload.file_id:
        st.session_state[state.CITE_UPLOAD_SEEN] = upload.file_id
        try:
            st.session_state[state.CITE_TEXT] = extract_draft_text(upload.getvalue(), upload.name)
            st.session_state[state.CITE_SOURCE] = upload.name
        except CitefinderError as e:
            render.error_box(e)
    paired_bib.bib_uploader()
    if st.button("Try an example", type="tertiary", icon=":material/lightbulb:"):
        st.session_state[state.CITE_TEXT] = EXAMPLE
        st.session_state[state.CITE_SOURCE] = None
    return st.text_area(
        "...or paste your text", key=state.CITE_TEXT, height=180,
        placeholder="Self-attention alone can replace recurrence [CITATION]. ...",
    )


def slot_count_line(slots: Sequence[Slot]) -> None:
    if slots:
        st.markdown(f"**{len(slots)}** citation slot{'s' if len(slots) != 1 else ''} found.")
    else:
        st.caption("No slot yet: mark each place that needs a reference with [CITATION], [CITE], [?] or \\cite{?}.")


def fill_with_progress(settings: Settings, text: str, source_name: str | None) -> state.CiteRun | None:
    """Run the pipeline over every slot with a progress bar and a live per-slot table."""
    slots = find_slots(text, settings.context_sentences)
    total = len(slots)
    rows = [{"slot": s.index + 1, "status": "waiting", "paper": "", "confidence": None, "seconds": None} for s in slots]
    start = time.perf_counter()
    with st.status(f"Filling {total} slots...", expanded=True) as box:
        bar = st.progress(0.0, text=f"0 of {total} slots filled")
        table = st.empty()
        last = [start]

        def progress(done: int, total: int, result: SlotResult | None) -> None:
            now = time.perf_counter()
            if result is not None and 0 < done <= len(rows):
                sel = result.selection
                rows[done - 1].update(
                    status="found" if sel.status == "found" else "not found",
                    paper=sel.paper.title if sel.paper else "",
                    confidence=round(sel.confidence, 2),
                    seconds=round(now - last[0], 2),
                )
            last[0] = now
            if done < len(rows):
                rows[done]["status"] = "searching..." if done else "searching... (loading models)"
            bar.progress(done / total if total else 1.0, text=f"{done} of {total} slots filled")
            box.update(label=f"Filling slot {min(done + 1, total)} of {total}..." if done < total else "Finishing...")
            table.dataframe(tables.slot_progress_frame(rows), hide_index=True, width="stretch")

        try:
            pipeline = paired_bib.paired_pipeline(settings) or resources.make_pipeline(settings)
            results = pipeline.cite_text(text, progress=progress)
        except CitefinderError as e:
            box.update(label="Stopped", state="error", expanded=True)
            render.error_box(e)
            return None
        elapsed = time.perf_counter() - start
        found = sum(r.selection.status == "found" for r in results)
        box.update(label=f"Filled {found} of {total} slots in {elapsed:.1f} s", state="complete", expanded=False)
    return state.CiteRun(text=text, results=tuple(results), elapsed_s=elapsed, source_name=source_name)


def current_choices(run: state.CiteRun) -> dict[int, str | None]:
    """The selector's picks, overridden by whatever the user chose in each slot's selectbox."""
    choices = exports.default_choices(run.results)
    for r in run.results:
        picked = st.session_state.get(run.pick_key(r.slot.index))
        if picked is not None:
            choices[r.slot.index] = None if picked == NOT_CITED else picked
    return choices


def summary_and_downloads(run: state.CiteRun, choices: dict[int, str | None],
                          library: Library | None = None) -> dict[int, str]:
    """Counts and the three downloads: .bib, the filled draft, the full results as JSON; returns slot -> key."""
    n = len(run.results)
    found = sum(r.selection.status == "found" for r in run.results)
    chosen = sum(v is not None for v in choices.values())
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Slots", n)
    c2.metric("Found", found)
    c3.metric("Not found", n - found)
    c4.metric("Time", f"{run.elapsed_s:.1f} s")
    command = st.session_state.get(paired_bib.COMMAND) or paired_bib.COMMANDS[0]
    taken = (lambda key: library.by_key(key) is not None) if library is not None else None
    try:
        bib, keys = exports.bibliography(run.results, choices, taken=taken)
        filled = exports.filled_draft(run.text, run.results, keys, command=command)
    except CitefinderError as e:
        render.error_box(e)
        return {}
    d1, d2, d3 = st.columns(3)
    n_papers = len(set(keys.values()))
    d1.download_button(f"Download .bib ({n_papers} paper{'s' if n_papers != 1 else ''})", bib or "% no paper chosen\n",
                       file_name="references.bib", mime="application/x-bibtex", icon=":material/download:",
                       on_click="ignore", key="download_bib", width="stretch", disabled=not chosen)
    d2.download_button(f"Download draft with \\cite ({len(keys)} of {n} filled)", filled,
                       file_name=exports.filled_name(run.source_name), mime="text/plain",
                       icon=":material/description:", on_click="ignore", key="download_draft", width="stretch")
    d3.download_button("Download results (JSON)", exports.results_json(run.results, choices, keys),
                       file_name="citefinder-results.json", mime="application/json", icon=":material/data_object:",
                       on_click="ignore", key="download_json", width="stretch")
    if looks_like_latex(run.text) and any(r.slot is not None and not r.slot.command for r in run.results):
        st.selectbox("Command for plain [CITATION] markers", paired_bib.COMMANDS, key=paired_bib.COMMAND,
                     help="Placeholders written as \\citep{?}, \\citet{?} ... keep their own command.")
    return keys


def _option_label(result: SlotResult):
    titles = {c.doc_id: c.paper for c in result.candidates}

    def label(doc_id: str) -> str:
        if doc_id == NOT_CITED:
            return "(leave this slot empty)"
        paper = titles.get(doc_id) or result.selection.paper
        text = f"{paper.title} ({paper.year})" if paper and paper.year else (paper.title if paper else doc_id)
        text = f"[{paper.key}] {text}" if paper and paper.key else text
        return text if len(text) <= 110 else text[:107] + "..."

    return label


def slot_card(run: state.CiteRun, result: SlotResult, which: int, choice: str | None, lookup,
              key: str | None = None) -> None:
    """One slot: sentence, chosen paper (with the key it is cited by and a copyable cite), confidence,
    "cite as" picker and the lazy trace expander."""
    slot, sel = result.slot, result.selection
    with st.container(border=True, key=f"slot_{run.run_id}_{slot.index}"):
        head, badge = st.columns([0.85, 0.15], vertical_alignment="center")
        head.markdown(f"**Slot {slot.index + 1}**")
        with badge:
            render.status_badge(result)
        st.markdown(render.highlight_slot(slot.sentence, which))
        left, right = st.columns([3, 2], gap="medium")
        with left:
            paper = exports.paper_for(result, choice)
            if paper is not None:
                render.paper_card(paper)
                if key:
                    command = st.session_state.get(paired_bib.COMMAND) or paired_bib.COMMANDS[0]
                    st.caption("Copy the cite:" if paper.key else "Copy the cite (generated key):")
                    st.code(exports.cite_snippet(result, key, command), language="latex")
                if sel.paper is None or paper.doc_id != sel.paper.doc_id:
                    st.caption("Your pick (overrides the selector).")
            else:
                _not_found(result)
        with right:
            render.confidence_bar(sel.confidence)
            options = [NOT_CITED] + [c.doc_id for c in result.candidates[:10]]
            if sel.paper is not None and sel.paper.doc_id not in options:
                options.append(sel.paper.doc_id)
            default = sel.paper.doc_id if sel.paper else NOT_CITED
            st.selectbox("Cite as", options, index=options.index(default), format_func=_option_label(result),
                         key=run.pick_key(slot.index))
        trace = st.expander("Trace: how this paper was chosen", key=run.trace_key(slot.index), on_change="rerun",
                            icon=":material/account_tree:")
        if trace.open:
            with trace:
                render.trace_panel(result, lookup)


def _not_found(result: SlotResult) -> None:
    top = result.candidates[:3]
    headline = "**No confident match.** " if top else "**Not found in your library.** "
    st.warning(headline + escape_markdown(_why(result)), icon=":material/search_off:")
    if top:
        st.caption("Closest candidates (pick one with *Cite as* if it fits):")
        st.markdown("\n".join(
            f"{i}. {escape_markdown(c.paper.title)} ({c.paper.year or 'n.d.'})"
            + (f" · key {escape_markdown(c.paper.key)}" if c.paper.key else "") for i, c in enumerate(top, 1)
        ))


def _why(result: SlotResult) -> str:
    trace = result.trace("select")
    why = trace.message if trace and trace.message else "No candidate was convincing enough."
    basis = trace.details.get("confidence_basis") if trace else None
    return f"{why} ({basis['explanation']})." if basis else why


def positions_in_sentence(results: Sequence[SlotResult]) -> list[int]:
    """For each slot, which [CITATION] of its sentence it is (slots sharing a sentence are adjacent)."""
    out: list[int] = []
    for i, r in enumerate(results):
        prev = results[i - 1] if i else None
        same = prev is not None and prev.slot.sentence == r.slot.sentence
        out.append(out[-1] + 1 if same else 0)
    return out


def results_view(run: state.CiteRun, library: Library) -> None:
    """Summary, downloads and one card per slot."""
    if st.session_state.get(state.CITE_TEXT, run.text) != run.text:
        st.warning("The text changed since these results were made; press **Find citations** again to update them.")
    choices = current_choices(run)
    library = paired_bib.run_library(library)
    keys = summary_and_downloads(run, choices, library)
    for result, which in zip(run.results, positions_in_sentence(run.results)):
        slot_card(run, result, which, choices.get(result.slot.index), library.get, keys.get(result.slot.index))
