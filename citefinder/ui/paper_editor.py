"""Editing a stored paper on the Library page: its fields (title, authors, year, key, venue, DOI, URL,
abstract), or its whole BibTeX entry, where every field it has can be changed (pages, number, publisher...).
A paper with its own .bib entry gets each change in that entry, the rest of the user's text untouched."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from citefinder.library.edit import changed_fields, edit_bibtex, edit_paper, parse_authors, parse_year
from citefinder.library.review import ImportReview
from citefinder.library.store import Library
from citefinder.types import Paper
from citefinder.ui import render, state
from citefinder.ui.markdown import escape_markdown
from citefinder.workflow.enrich import field_source, provenance


def _replace_in_review(paper: Paper) -> None:
    """After an edit: the summary shows the paper as now stored."""
    review: ImportReview | None = st.session_state.get(state.LIBRARY_REVIEW)
    if review is not None:
        st.session_state[state.LIBRARY_REVIEW] = replace(
            review, pdf_papers=tuple(paper if p.doc_id == paper.doc_id else p for p in review.pdf_papers))


def edit_form(library: Library, paper: Paper, form_key: str, *, full: bool = True) -> None:
    """Title, authors, year (and with ``full`` the key, venue, DOI, URL and abstract) of one paper; Save writes
    them (into the paper's own .bib entry too)."""
    with st.form(f"edit_{form_key}", border=False):
        title = st.text_input("Title", value=paper.title, key=f"{form_key}_title")
        authors = st.text_area("Authors (one per line)", value="\n".join(paper.authors), key=f"{form_key}_authors",
                               height=100 if full else 80)
        year = st.text_input("Year", value=str(paper.year or ""), key=f"{form_key}_year", max_chars=4)
        more: dict[str, object] = {}
        if full:
            more["key"] = st.text_input("Citation key", value=paper.key or "", key=f"{form_key}_key",
                                        help="Used in the .bib and in \\cite{...}; empty: made from author and year.")
            more["venue"] = st.text_input("Venue (journal, proceedings, publisher)", value=paper.venue or "",
                                          key=f"{form_key}_venue")
            more["doi"] = st.text_input("DOI", value=paper.doi or "", key=f"{form_key}_doi",
                                        help=found_in(paper, "doi"))
            more["url"] = st.text_input("URL", value=paper.url or "", key=f"{form_key}_url")
            more["abstract"] = st.text_area("Abstract", value=paper.abstract, key=f"{form_key}_abstract", height=150,
                                            help=found_in(paper, "abstract"))
            if completed := provenance(paper):
                st.caption(escape_markdown("Completed by CiteFinder, not in your .bib: "
                                           + "; ".join(f.text() for f in completed) + "."))
        if not st.form_submit_button("Save", type="primary", icon=":material/save:", disabled=library.read_only):
            return
    try:
        saved = edit_paper(library, paper.doc_id, title=title, authors=parse_authors(authors),
                           year=parse_year(year), **more)  # type: ignore[arg-type]
    except Exception as e:  # noqa: BLE001 - a message on the page, the traceback in the log
        render.failure("Saving the paper", e)
        return
    _replace_in_review(saved)
    _saved(paper, saved)
    st.rerun()


def found_in(paper: Paper, field: str) -> str | None:
    """The help of a field CiteFinder completed: where it was found (None for the user's own field)."""
    found = field_source(paper, field)
    return f"Found in {found.source} ({found.source_id}) by *Complete*; your .bib does not hold it." if found else None


SAVED = "library_saved"  # the last Save's confirmation, shown where the user clicked (and at the top)


def _saved(old: Paper, new: Paper) -> None:
    """Say what the Save changed, where the user clicked it (the editor stays open) and at the top of the page."""
    fields = changed_fields(old, new)
    if fields:
        where = (" Its .bib entry has them too: the .bib you download holds the new text." if new.bibtex
                 else " The .bib you download is written from these fields.")
        text = f"Saved “{new.title}”: {', '.join(fields)}." + where
    else:
        text = f"Nothing changed in “{new.title}”."
    st.session_state[state.LIBRARY_MESSAGE] = escape_markdown(text)
    st.session_state[SAVED] = (new.doc_id, escape_markdown(text))
    st.toast(escape_markdown(text), icon=":material/save:")


def saved_note(paper: Paper) -> None:
    """The last Save's confirmation, under the editor of the paper it was about."""
    last = st.session_state.get(SAVED)
    if last and last[0] == paper.doc_id:
        st.success(last[1], icon=":material/check:")


def bibtex_form(library: Library, paper: Paper, form_key: str) -> None:
    """The paper's BibTeX entry as text: every field it has (pages, number, publisher, ...) can be edited."""
    from citefinder.library.bibtex import papers_to_bibtex

    own = paper.bibtex is not None
    text = paper.bibtex if own else papers_to_bibtex([paper])[0].strip()
    st.caption("The entry exactly as your .bib has it; it is what the downloaded .bib holds." if own else
               "Made from the fields above (this paper did not come from a .bib); saving keeps your text.")
    with st.form(f"bibtex_{form_key}", border=False):
        new = st.text_area("BibTeX entry", value=text, key=f"{form_key}_bibtex", height=260)
        if not st.form_submit_button("Replace the entry", icon=":material/save:", disabled=library.read_only):
            return
    try:
        saved = edit_bibtex(library, paper.doc_id, new or "")
    except Exception as e:  # noqa: BLE001 - a message on the page, the traceback in the log
        render.failure("Saving the BibTeX entry", e)
        return
    _saved(paper, saved)
    st.rerun()


def edit_section(library: Library, shown: list[Paper]) -> None:
    """Open one of the papers shown above and edit it (its fields, or its whole BibTeX entry)."""
    if not shown:
        return
    with st.expander("Open and edit a paper", icon=":material/edit:", expanded=bool(st.session_state.get(SAVED))):
        titles = {p.doc_id: f"{p.title} ({p.year})" if p.year else p.title for p in shown}
        doc_id = st.selectbox("Paper (from the table above)", list(titles), index=None, key=state.LIBRARY_EDIT,
                              format_func=lambda i: titles.get(i, i), placeholder="Choose a paper")
        paper = next((p for p in shown if p.doc_id == doc_id), None)
        if paper is not None:
            st.caption(f"id {escape_markdown(paper.doc_id)} · from {escape_markdown(paper.source or 'unknown')}")
            saved_note(paper)
            fields, entry = st.tabs(["Fields", "BibTeX entry"])
            with fields:
                edit_form(library, paper, f"paper_{shown.index(paper)}")
            with entry:
                bibtex_form(library, paper, f"paper_{shown.index(paper)}")
