"""The Check view: upload a LaTeX draft and its .bib, see for every cited key whether it fits its context
(and what fits better), replace a key in one click, and download the corrected .tex.

The .bib is saved under the library folder (``paired/<hash>/``, as the Cite page pairs one) with a
library of its own linked to it. Replacements are kept per citation and applied to the uploaded bytes'
text, so the download differs from the upload only at the replaced keys, in the upload's encoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

from citefinder.check.draft import CheckReport
from citefinder.check.model import DOUBTFUL, FITS, WRONG, default_model
from citefinder.check.report import markdown, to_json
from citefinder.check.run import CheckedCitation
from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.text.citations import find_citations, replace_keys
from citefinder.text.decode import decode_keeping_encoding
from citefinder.text.project import Project, Segment, SourceFile
from citefinder.ui import paired_bib, state
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.render import error_box
from citefinder.workflow import check as workflow_check

TEX = "check_tex_upload"
BIB = "check_bib_upload"
RUN = "check_run"  # CheckRun of the last "Check citations"


@dataclass
class CheckRun:
    """One check: the uploaded draft as read, the report, and the keys the user replaced (citation -> key)."""

    name: str
    source: SourceFile
    report: CheckReport
    fixes: dict[int, str] = field(default_factory=dict)
    bib_name: str = ""
    bib: bytes = b""  # the uploaded .bib, for the download with its preprints' published versions

    def corrected(self) -> bytes:
        citations = find_citations(self.source.text)
        return self.source.encode(replace_keys(self.source.text, citations, self.fixes))


def new_upload() -> None:
    """A new .tex or .bib was uploaded (or one removed): the results of the files before leave the page."""
    st.session_state.pop(RUN, None)


def uploaders() -> None:
    left, right = st.columns(2)
    left.file_uploader("Your LaTeX draft (.tex)", type=["tex"], key=TEX, on_change=new_upload,
                       help="The file with \\cite{...} commands. Files it \\input are not read here: check them one "
                            "by one, or run `citefinder check main.tex` on the whole project.")
    right.file_uploader("Its bibliography (.bib or CSL-JSON)", type=["bib", "json"], key=BIB, on_change=new_upload,
                        help="The .bib your draft cites from; a library is built from it once.")


def run_check(settings: Settings) -> None:
    """Check the uploaded draft against the uploaded .bib; the result goes into the session."""
    tex, bib = st.session_state.get(TEX), st.session_state.get(BIB)
    if tex is None or bib is None:
        st.warning("Upload the .tex and its .bib first.")
        return
    text, encoding, bom = decode_keeping_encoding(tex.getvalue())
    source = SourceFile(Path(tex.name), text, encoding, bom)
    project = Project((source,), text, (Segment(0, len(text), 0, 0),))
    try:
        saved = paired_bib.save_bib(settings, bib.name, bib.getvalue())
        own = state.paired_settings(settings, saved.parent)
        pipeline = paired_bib.bib_pipeline(settings, own, saved, bib.name)
        bar = st.progress(0.0, text="Checking citations...")

        def progress(done: int, total: int) -> None:
            bar.progress(done / max(1, total), text=f"Checking citations: {done} of {total} cite commands")

        report = workflow_check.check_draft(pipeline, project, [saved], progress=progress)
        bar.empty()
    except CitefinderError as e:
        error_box(e)
        return
    st.session_state[RUN] = CheckRun(tex.name, source, report, bib_name=bib.name, bib=bib.getvalue())


def judged_sentence(c: CheckedCitation, now: str | None = None) -> str:
    """The sentence (markdown) with the judged cite command highlighted and the key's place in it named (with
    the key that replaces it, ``now``, when the user replaced it)."""
    parts = [escape_markdown(part, strip=False).replace(escape_markdown("[OTHER]"), "[·]")
             for part in (c.focus or c.sentence).split("[CITATION]")]
    key = f"{c.key} → {now}" if now else c.key
    where = f"{key}, key {c.position} of {c.keys_in_command}" if c.keys_in_command > 1 else key
    mark = f":red-background[**\\[{escape_markdown(where)}\\]**]"
    return mark.join(parts) if len(parts) > 1 else f"{parts[0]} {mark}"


FIXED = "fixed"  # a citation whose key the user replaced: no longer counted under its verdict
COLOR = {FITS: "green", DOUBTFUL: "orange", WRONG: "red", FIXED: "blue"}


def shown_verdict(c: CheckedCitation, fixes: Mapping[int, str]) -> str:
    """The citation's word now: its verdict, or "fixed: KEY" once the user replaced its key."""
    return f"{FIXED}: {fixes[c.index]}" if c.index in fixes else c.verdict


def tally(report: CheckReport, fixes: Mapping[int, str]) -> dict[str, int]:
    """How many citations have each word now (a replaced key counts as fixed, not under its old verdict)."""
    out = {FITS: 0, DOUBTFUL: 0, WRONG: 0, FIXED: 0}
    for c in report.citations:
        out[FIXED if c.index in fixes else c.verdict] += 1
    return out


def summary_line(report: CheckReport, fixes: Mapping[int, str]) -> str:
    """The counts as Markdown: "**24 citations** checked against 24 papers in 7.2 s: fits 23 · ..."."""
    counts = tally(report, fixes)
    words = [f":{COLOR[w]}[{w}] {n}" for w, n in counts.items() if w != FIXED or n]
    return (f"**{len(report.citations)} citations** checked against {report.library_size} papers in "
            f"{report.elapsed_s:.1f} s: " + " · ".join(words) + ".")


def citation_rows(report: CheckReport, fixes: Mapping[int, str]) -> list[dict[str, object]]:
    """The table: one row per cited key with its one number (fit) and its one word (the verdict, or fixed)."""
    return [{"#": c.index + 1, "line": c.line, "key": c.key, "verdict": shown_verdict(c, fixes),
             "fit": round(c.probability, 2),
             "better fit": (c.alternatives[0].key or c.alternatives[0].title) if c.alternatives else ""}
            for c in report.citations]


def _fix(run: CheckRun, index: int, key: str | None) -> None:
    """Replace citation ``index``'s key by ``key`` in the corrected draft (None: keep the key written)."""
    if key is None:
        run.fixes.pop(index, None)
    else:
        run.fixes[index] = key


def _card(run: CheckRun, c: CheckedCitation) -> None:
    """One citation to look at: its word and number, the sentence, the better fits to replace it with (or what
    replaced it), and the engine's evidence behind a disclosure."""
    fixed = run.fixes.get(c.index)
    word = shown_verdict(c, run.fixes)
    with st.container(border=True, key=f"check_card_{c.index}"):
        what = f" ({escape_markdown(c.title)})" if c.title else " · no entry in your .bib"
        st.markdown(f"**{escape_markdown(c.key)}**{what} · line {c.line} · "
                    f":{COLOR[FIXED if fixed else c.verdict]}-badge[{escape_markdown(word)}] · fit {c.probability:.2f}"
                    + (" as written" if fixed else ""))
        st.markdown(judged_sentence(c, fixed), help="The judged cite command is highlighted; the sentence's other "
                    "cite commands are shown as [·].")
        if fixed:
            row = st.container(horizontal=True, vertical_alignment="center")
            row.success(f"Replaced by {escape_markdown(fixed)} in the corrected draft.", icon=":material/check:")
            row.button(f"Keep {c.key}", key=f"check-keep-{c.index}", type="tertiary", icon=":material/undo:",
                       on_click=_fix, args=(run, c.index, None), help="Undo the replacement: the key as written.")
        for a in c.alternatives:
            left, right = st.columns([5, 2], vertical_alignment="center")
            left.markdown(f"More probable here: **{escape_markdown(a.title)}** ({a.year or 'n.d.'})"
                          + (f" · key {escape_markdown(a.key)}" if a.key else " · not in your .bib")
                          + f" · probability {a.probability:.2f} that it is the paper cited here")
            if not a.key:
                continue
            if fixed == a.key:
                right.button(f"Replaced with {a.key}", key=f"check-fix-{c.index}-{a.doc_id}", disabled=True,
                             type="primary", icon=":material/check:")
            else:
                right.button(f"Replace with {a.key}", key=f"check-fix-{c.index}-{a.doc_id}",
                             on_click=_fix, args=(run, c.index, a.key))
        with st.expander("Evidence: how the engine ranked it", icon=":material/query_stats:"):
            lines = [f"- {escape_markdown(c.key)}: {escape_markdown(c.reason)}"]
            lines += [f"- {escape_markdown(a.key or a.title)}: ranked {a.rank}; {escape_markdown(a.evidence)}"
                      for a in c.alternatives]
            st.markdown("\n".join(lines))


def show(run: CheckRun) -> None:
    """The counts and the bands said once, every citation as a row, the citations to look at as cards, the
    .bib's notes and the downloads: all of them as they stand after the user's replacements."""
    report = run.report
    st.markdown(summary_line(report, run.fixes))
    st.caption(f"**fit**: the probability that the key written is the paper its sentence cites. "
               f"{escape_markdown(default_model().legend())}. The engine's ranks and similarities are under "
               "*Evidence* on each card.")
    st.dataframe(pd.DataFrame(citation_rows(report, run.fixes)), hide_index=True, width="stretch")
    flagged = [c for c in report.citations if c.verdict != FITS or c.index in run.fixes]
    if flagged:
        st.subheader("To look at")
    for c in flagged:
        _card(run, c)
    problems = report.problems_after(run.fixes)  # "never cited" follows each replacement
    if problems:
        st.subheader("The .bib")
        for p in problems:
            st.markdown(f"- *{escape_markdown(p.kind)}*: {escape_markdown(p.message)}")
        _published_download(run)
    stem = Path(run.name).stem
    left, mid, right = st.columns(3)
    left.download_button("Download corrected .tex", run.corrected(), file_name=f"{stem}.fixed.tex",
                         mime="text/x-tex", disabled=not run.fixes, icon=":material/download:")
    mid.download_button("Download report (.md)", markdown(report, f"Citation check of {run.name}"),
                        file_name=f"{stem}.check.md", mime="text/markdown")
    right.download_button("Download results (.json)", to_json(report), file_name=f"{stem}.check.json",
                          mime="application/json")


def _published_download(run: CheckRun) -> None:
    """One click: the uploaded .bib with each preprint that was published written as its published version (same
    key), every other entry byte for byte."""
    from citefinder.workflow.published import updated_bytes

    versions = run.report.published
    if not versions or not run.bib_name.lower().endswith(".bib"):
        return
    data, keys = updated_bytes(run.bib, {v.key: v.published for v in versions})
    st.download_button(f"Download .bib with {len(keys)} published {'version' if len(keys) == 1 else 'versions'}",
                       data, file_name=f"{Path(run.bib_name).stem}.published.bib", mime="text/x-bibtex",
                       disabled=not keys, icon=":material/download:",
                       help="Your .bib with each entry cited as a preprint that was published rewritten as that "
                            "version, under the same key; every other entry as you wrote it.")
