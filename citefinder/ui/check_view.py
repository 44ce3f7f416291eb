"""The Check view: upload a LaTeX draft and its .bib, see for every cited key whether it fits its context
(and what fits better), replace a key in one click, and download the corrected .tex.

The .bib is saved under the library folder (``paired/<hash>/``, as the Cite page pairs one) with a
library of its own linked to it. Replacements are kept per citation and applied to the uploaded bytes'
text, so the download differs from the upload only at the replaced keys, in the upload's encoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

from citefinder.check.draft import CheckReport, check_project
from citefinder.check.model import DOUBTFUL, FITS, WRONG
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

TEX = "check_tex_upload"
BIB = "check_bib_upload"
RUN = "check_run"  # CheckRun of the last "Check citations"
BADGE = {FITS: ":green[fits]", DOUBTFUL: ":orange[doubtful]", WRONG: ":red[likely wrong]"}


@dataclass
class CheckRun:
    """One check: the uploaded draft as read, the report, and the keys the user replaced (citation -> key)."""

    name: str
    source: SourceFile
    report: CheckReport
    fixes: dict[int, str] = field(default_factory=dict)

    def corrected(self) -> bytes:
        citations = find_citations(self.source.text)
        return self.source.encode(replace_keys(self.source.text, citations, self.fixes))


def uploaders() -> None:
    left, right = st.columns(2)
    left.file_uploader("Your LaTeX draft (.tex)", type=["tex"], key=TEX,
                       help="The file with \\cite{...} commands. Files it \\input are not read here: check them one "
                            "by one, or run `citefinder check main.tex` on the whole project.")
    right.file_uploader("Its bibliography (.bib or CSL-JSON)", type=["bib", "json"], key=BIB,
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

        report = check_project(pipeline, project, [saved], progress=progress)
        bar.empty()
    except CitefinderError as e:
        error_box(e)
        return
    st.session_state[RUN] = CheckRun(tex.name, source, report)


def judged_sentence(c: CheckedCitation) -> str:
    """The sentence (markdown) with the judged cite command highlighted and the key's place in it named."""
    parts = [escape_markdown(part, strip=False).replace(escape_markdown("[OTHER]"), "[·]")
             for part in (c.focus or c.sentence).split("[CITATION]")]
    where = f"{c.key}, key {c.position} of {c.keys_in_command}" if c.keys_in_command > 1 else c.key
    mark = f":red-background[**\\[{escape_markdown(where)}\\]**]"
    return mark.join(parts) if len(parts) > 1 else f"{parts[0]} {mark}"


def show(run: CheckRun) -> None:
    report = run.report
    n = len(report.citations)
    wrong, doubtful = len(report.likely_wrong), len(report.doubtful)
    st.markdown(f"**{n} citations** checked against {report.library_size} papers in {report.elapsed_s:.1f} s: "
                f"{n - wrong - doubtful} fit, {BADGE[DOUBTFUL]} {doubtful}, {BADGE[WRONG]} {wrong}.")
    rows = [{"#": c.index + 1, "line": c.line, "key": c.key, "verdict": c.verdict, "fit": round(c.probability, 2),
             "rank": f"{c.rank}/{c.ranked}" if c.rank else "-",
             "better fit": (c.alternatives[0].key or c.alternatives[0].title) if c.alternatives else "",
             "now": run.fixes.get(c.index, "")} for c in report.citations]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    flagged = [c for c in report.citations if c.verdict != FITS]
    if flagged:
        st.subheader("To look at")
    for c in flagged:
        with st.container(border=True):
            st.markdown(f"**{escape_markdown(c.key)}** · line {c.line} · {BADGE[c.verdict]} "
                        f"(fit {c.probability:.2f}; {escape_markdown(c.reason)})")
            st.markdown(judged_sentence(c), help="The judged cite command is highlighted; the sentence's other "
                        "cite commands are shown as [·].")
            if c.index in run.fixes:
                st.success(f"Replaced by {run.fixes[c.index]} in the corrected draft.")
            for a in c.alternatives:
                line = (f"More probable here: **{escape_markdown(a.title)}** ({a.year or 'n.d.'}) · probability "
                        f"{a.probability:.2f} that it is the paper cited (the key written: {c.probability:.2f}) · "
                        f"{escape_markdown(a.evidence)}")
                left, right = st.columns([5, 2])
                left.markdown(line)
                if a.key and right.button(f"Replace with {a.key}", key=f"check-fix-{c.index}-{a.doc_id}"):
                    run.fixes[c.index] = a.key
                    st.rerun()
    problems = report.problems_after(run.fixes)  # "never cited" follows each replacement
    if problems:
        st.subheader("The .bib")
        for p in problems:
            st.markdown(f"- *{escape_markdown(p.kind)}*: {escape_markdown(p.message)}")
    stem = Path(run.name).stem
    left, mid, right = st.columns(3)
    left.download_button("Download corrected .tex", run.corrected(), file_name=f"{stem}.fixed.tex",
                         mime="text/x-tex", disabled=not run.fixes, icon=":material/download:")
    mid.download_button("Download report (.md)", markdown(report, f"Citation check of {run.name}"),
                        file_name=f"{stem}.check.md", mime="text/markdown")
    right.download_button("Download results (.json)", to_json(report), file_name=f"{stem}.check.json",
                          mime="application/json")
