"""The Library page's parts: what is open, import with progress and a summary, linked files, browse/search, remove."""

from __future__ import annotations

import logging
import re
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library import sample
from citefinder.library.link import link_file, linked_files, sync_all, unlink_file
from citefinder.library.review import Duplicate, ImportReview, import_reviewed
from citefinder.library.store import Library
from citefinder.types import ImportReport, Paper
from citefinder.ui import enrich_view, layout, paper_editor, render, resources, state, tables
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.paired_view import whose

log = logging.getLogger(__name__)

IMPORT_TYPES = ["bib", "jsonl", "gz", "ndjson", "json", "pdf"]
PAGE_SIZE = 50
SEARCH_K = 100
LINK_PATH = "library_link_path"  # the path typed into "Keep this library in sync with a file"
LISTED = 50  # duplicates and PDFs listed by name in an import summary


def header(library: Library) -> None:
    try:
        stats = library.stats()
    except Exception as e:  # noqa: BLE001 - shown as a message, logged with its traceback
        render.failure("Reading the library", e)
        return
    c1, c2, c3 = st.columns([1, 2, 2])
    c1.metric("Papers", f"{stats['papers']:,}")
    c2.markdown(f"**Folder**  \n{escape_markdown(stats['library'])}")
    c3.markdown(f"**Store** · {escape_markdown(stats['mode'])}  \n"
                f"**Embedder** · {escape_markdown(stats['embedder'].get('model', ''))}"
                + (f" on {escape_markdown(stats['embedder_device'])}" if stats.get("embedder_device") else ""))
    health(library)


def health(library: Library) -> None:
    """What is wrong with the library, and a button that rebuilds what can be rebuilt."""
    try:
        problems = library.problems()
    except Exception as e:  # noqa: BLE001
        render.failure("Checking the library", e)
        return
    if not problems:
        return
    st.warning("This library needs a repair: " + "; ".join(escape_markdown(p) for p in problems) + ".",
               icon=":material/build:")
    if st.button("Repair the library", icon=":material/build:", disabled=library.read_only,
                 help="Rebuilds the BM25 index and the manifest from the papers the store holds."):
        try:
            done = library.repair()
        except Exception as e:  # noqa: BLE001
            render.failure("Repair", e)
            return
        st.session_state[state.LIBRARY_MESSAGE] = "Repaired: " + "; ".join(done) + "."
        st.rerun()


def empty_state(library: Library) -> None:
    """How to start when the library holds no paper."""
    st.info(
        "This library is empty. Import your references below (BibTeX, JSONL, CSL-JSON from Zotero, or "
        "paper PDFs), or start with the sample library of landmark NLP, IR and ML papers.",
        icon=":material/library_add:",
    )
    if st.button("Load the sample library", type="primary", icon=":material/auto_stories:"):
        run_import(library, None)


def _safe_name(name: str) -> str:
    base = Path(name).name or "upload"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base)


def run_import(library: Library, uploads) -> None:
    """Import uploaded files (saved to a temp folder first, each under its own name), or the sample library when
    ``uploads`` is None. What the page says names the user's files, never the temp folder."""
    names = [u.name for u in uploads] if uploads else [resources.SAMPLE_BIB.name]
    before = library.count()
    with st.status(f"Importing {escape_markdown(', '.join(names))}...", expanded=True) as box:
        bar = st.progress(0.0, text="Reading...")

        def progress(done: int, total: int | None) -> None:
            fraction = min(1.0, done / total) if total else min(0.95, done / (done + 200))
            stored = library.count() - before
            bar.progress(fraction, text=f"{stored:,} papers stored and embedded · {done:,} records read"
                         + (f" of {total:,}" if total else ""))

        with tempfile.TemporaryDirectory(prefix="citefinder-upload-") as tmp:
            try:
                if uploads is None:
                    review = ImportReview(resources.load_sample(library, progress))
                else:
                    paths = []
                    for i, u in enumerate(uploads):  # a folder each: the papers' source is the user's file name
                        path = Path(tmp) / str(i) / _safe_name(u.name)
                        path.parent.mkdir()
                        path.write_bytes(u.getvalue())
                        paths.append(path)
                    review = import_reviewed(library, paths, progress=progress)
                    review = replace(review, report=_tidy_sources(review.report, tmp))
                report = review.report
            except Exception as e:  # noqa: BLE001 - a message on the page, the traceback in the log
                box.update(label="Import failed", state="error")
                render.failure("Import", _untemped(e, tmp))
                partial = getattr(e, "report", None)
                if partial is not None:
                    st.session_state[state.LIBRARY_REPORT] = (_tidy_sources(partial, tmp), names)
                    st.session_state.pop(state.LIBRARY_REVIEW, None)
                    import_summary(library)
                return
        bar.progress(1.0, text="Done")
        box.update(label=f"Imported {report.added:,} papers in {report.elapsed_s:.1f} s", state="complete",
                   expanded=False)
    st.session_state[state.LIBRARY_REPORT] = (report, names)
    st.session_state[state.LIBRARY_REVIEW] = review
    st.rerun()  # redraw the header and table with the new papers


def _untemped(error: Exception, tmp: str) -> Exception:
    """The same error with the temp folder taken out of its message (a CitefinderError stays one)."""
    text = untemp(str(error), tmp)
    if text == str(error):
        return error
    try:
        return type(error)(text)
    except Exception:  # noqa: BLE001 - an error type with another constructor: said as it was
        return error


def _tidy_sources(report: ImportReport, tmp: str) -> ImportReport:
    """Failure sources and reasons without the temp folder each upload was saved in (the user's file names)."""
    from citefinder.types import ImportFailure

    return replace(report, failures=tuple(ImportFailure(untemp(f.source, tmp), untemp(f.reason, tmp))
                                          for f in report.failures))


def untemp(text: str, tmp: str) -> str:
    """``text`` with the uploads' temp folder (``<tmp>/<n>/``) taken out of the paths it names."""
    return re.sub(re.escape(tmp.rstrip("/")) + r"/[0-9]+/", "", text).replace(tmp, "")


def import_summary(library: Library) -> None:
    """Added, duplicates skipped (each with what it matched), failures with reasons, and each PDF's
    extracted title and authors with a form to fix them, of the last import in this session."""
    last = st.session_state.get(state.LIBRARY_REPORT)
    if not last:
        return
    report, names = last
    updated = getattr(report, "updated", ())
    more = ", …" if len(updated) > 10 else ""
    changed = f"{len(updated):,} updated ({escape_markdown(', '.join(updated[:10]))}{more}), " if updated else ""
    line = (f"**Last import** ({escape_markdown(', '.join(names))}): {report.added:,} added, {changed}"
            f"{report.duplicates:,} duplicates skipped, {len(report.failures):,} failed.")
    (st.warning if report.failures else st.success)(line)
    enrich_view.enrich_button(library.settings, lambda: library, library.path, key="library_enrich")
    if report.failures:
        st.dataframe(tables.failures_frame(report), hide_index=True, width="stretch")
    review: ImportReview | None = st.session_state.get(state.LIBRARY_REVIEW)
    if review is None:
        return
    skipped = skipped_duplicates(review)
    if skipped and report.duplicates:
        with st.expander(f"Duplicates skipped ({report.duplicates:,}): what each one matched", expanded=True,
                         icon=":material/content_copy:"):
            lines = [f"- “{escape_markdown(d.title)}” ({escape_markdown(d.source)}) "
                     f"matched “{escape_markdown(d.matched_title)}”"
                     + (f" · key {escape_markdown(d.matched_key)}" if d.matched_key else "")
                     for d in skipped[:LISTED]]
            more = report.duplicates - min(len(skipped), LISTED)
            st.markdown("\n".join(lines) + (f"\n\n…and {more:,} more." if more > 0 else ""))
    if review.pdf_papers:
        st.markdown("**What each PDF became** (title and authors are read from its first page): fix any that are "
                    "wrong here.")
        for paper in review.pdf_papers[:LISTED]:
            who = ", ".join(paper.authors) or "no authors"
            label = f"{paper.title} · {who} · {paper.year or 'no year'} ({paper.source or 'PDF'})"
            with st.expander(escape_markdown(label), icon=":material/picture_as_pdf:"):
                paper_editor.edit_form(library, paper, f"pdf_{review.report.added_ids.index(paper.doc_id)}",
                                       full=False)


def skipped_duplicates(review: ImportReview) -> list[Duplicate]:
    """The records the import really skipped, as many as its report counts: a record that updated the paper it
    matched (its key or entry adopted, a sample paper made the user's: the report's ``updated``) is no skipped
    duplicate, though the review lists it with the paper it matched."""
    updated = Counter(review.report.updated)
    out: list[Duplicate] = []
    for d in review.duplicates:
        name = d.matched_key or d.matched_id
        if updated[name] > 0:
            updated[name] -= 1  # the record that updated it; another record of the same paper is a duplicate
            continue
        out.append(d)
    return out[:review.report.duplicates]


def sample_section(settings: Settings, library: Library) -> None:
    """The sample library, apart from the user's papers: how many, suggested or not, removable in one click."""
    try:
        counts = sample.counts(library)
    except CitefinderError:
        return
    if not counts.sample:
        return
    hidden = counts.own and not settings.suggest_sample
    with st.container(border=True):
        st.markdown(f"**Sample library** · {counts.sample} landmark NLP, IR and ML papers (from "
                    f"{sample.SAMPLE_FILE}), beside {counts.own:,} papers of yours."
                    + (" They are left out of suggestions." if hidden else ""))
        layout.sample_controls(settings, library, counts, where="library")


def import_section(library: Library) -> None:
    st.subheader("Import")
    uploads = st.file_uploader(
        "BibTeX (.bib), JSON Lines (.jsonl, .jsonl.gz), CSL-JSON (.json) or paper PDFs",
        type=IMPORT_TYPES, accept_multiple_files=True, key=state.LIBRARY_UPLOAD,
        help="Up to 50 MB per file. Duplicates (same DOI, arXiv id or title) are skipped. "
        "For very large files use the command line: citefinder library import FILE.",
    )
    if st.button(f"Import {len(uploads)} file{'s' if len(uploads) != 1 else ''}" if uploads else "Import",
                 disabled=not uploads, icon=":material/upload:"):
        run_import(library, uploads)
    import_summary(library)


def link_section(library: Library) -> None:
    """Keep this library in sync with a .bib / CSL-JSON file on this computer (:mod:`citefinder.library.link`)."""
    with st.expander("Keep this library in sync with a .bib / CSL-JSON file", icon=":material/sync:"):
        st.caption("Link a file the library should follow, e.g. a Better BibTeX auto-export from Zotero. It is "
                   "imported now; later edits (added, changed, removed entries) are applied on **Sync now**.")
        path = st.text_input("Path of the .bib or CSL-JSON file on this computer", key=LINK_PATH,
                             placeholder="~/Zotero/My Library.bib")
        if st.button("Link and import", icon=":material/link:", disabled=not path.strip() or library.read_only):
            try:
                report = link_file(library, path.strip())
            except Exception as e:  # noqa: BLE001 - a message on the page, the traceback in the log
                render.failure("Linking the file", e)
            else:
                st.session_state[state.LIBRARY_MESSAGE] = escape_markdown("Linked " + report.summary())
                st.session_state.pop(LINK_PATH, None)
                st.rerun()
        try:
            files = linked_files(library)
        except Exception as e:  # noqa: BLE001
            render.failure("Reading the linked files", e)
            return
        if not files:
            return
        st.markdown("**Linked files**")
        for i, linked in enumerate(files):
            left, right = st.columns([0.8, 0.2], vertical_alignment="center")
            missing = "" if linked.is_file() else " :orange[(missing: its papers are kept)]"
            left.markdown(f"`{str(linked).replace('`', '')}`{missing}")
            if right.button("Unlink", key=f"library_unlink_{i}", type="tertiary", icon=":material/link_off:",
                            help="Stop following this file; its papers stay in the library."):
                try:
                    unlink_file(library, linked)
                except Exception as e:  # noqa: BLE001
                    render.failure("Unlinking the file", e)
                    return
                st.session_state[state.LIBRARY_MESSAGE] = escape_markdown(
                    f"Unlinked {linked}; its papers stay in the library.")
                st.rerun()
        if st.button("Sync now", icon=":material/sync:", disabled=library.read_only):
            try:
                reports = sync_all(library)
            except Exception as e:  # noqa: BLE001
                render.failure("Syncing the linked files", e)
                return
            st.session_state[state.LIBRARY_MESSAGE] = escape_markdown(" · ".join(r.summary() for r in reports))
            st.rerun()


def papers_view(library: Library, settings: Settings | None = None) -> list[Paper]:
    """Search (BM25) or browse page by page, each paper with its key and whose it is (yours, the sample's, also
    in a paired .bib); returns the papers shown."""
    st.subheader("Browse and search")
    query = st.text_input("Search titles, authors and abstracts", key=state.LIBRARY_QUERY,
                          placeholder="e.g. contrastive sentence embeddings")
    try:
        if query.strip():
            hits = library.bm25_search(query, SEARCH_K)
            papers = library.get([h.doc_id for h in hits])
            st.caption(f"{len(papers)} best BM25 matches")
        else:
            n = library.count()
            pages = max(1, -(-n // PAGE_SIZE))
            page = st.number_input(f"Page (of {pages})", min_value=1, max_value=pages, value=1, step=1,
                                   key=state.LIBRARY_PAGE)
            papers = library.browse((int(page) - 1) * PAGE_SIZE, PAGE_SIZE)
    except Exception as e:  # noqa: BLE001
        render.failure("Searching the library", e)
        return []
    st.dataframe(
        tables.papers_frame(papers, whose(settings, library, papers) if settings is not None else None),
        hide_index=True, width="stretch",
        column_config={"title": st.column_config.TextColumn(width="large"),
                       "year": st.column_config.NumberColumn(format="%d"),
                       "whose": st.column_config.TextColumn(help="yours: imported by you; sample: the sample "
                                                            "library; paired with NAME: a .bib paired on the "
                                                            "Cite or Check page holds it too")},
    )
    return papers


def remove_section(library: Library, shown: list[Paper]) -> None:
    """Pick papers among those shown, confirm, remove."""
    if not shown:
        return
    with st.expander("Remove papers", icon=":material/delete:"):
        titles = {p.doc_id: f"{p.title} ({p.year})" if p.year else p.title for p in shown}
        # titles.get: the options are titles' keys (a str each); kept as is for the widget's stale-value path
        chosen = st.multiselect("Papers to remove (from the table above)", list(titles),
                                format_func=titles.get,  # type: ignore[arg-type]
                                key=state.LIBRARY_REMOVE)
        sure = st.checkbox(f"Yes, remove {len(chosen)} paper{'s' if len(chosen) != 1 else ''} from this library",
                           key=state.LIBRARY_CONFIRM, disabled=not chosen)
        if st.button("Remove", type="primary", disabled=not (chosen and sure), icon=":material/delete_forever:"):
            try:
                removed = library.remove(chosen)
            except Exception as e:  # noqa: BLE001
                render.failure("Removing papers", e)
                return
            st.session_state[state.LIBRARY_MESSAGE] = f"Removed {removed} paper{'s' if removed != 1 else ''}."
            for key in (state.LIBRARY_REMOVE, state.LIBRARY_CONFIRM):
                st.session_state.pop(key, None)
            st.rerun()


def flash_message() -> None:
    message = st.session_state.pop(state.LIBRARY_MESSAGE, None)
    if message:
        st.success(message)  # built here from counts, not from user data
