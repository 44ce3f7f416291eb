"""Settings page piece: the compiled picker in use, and a form to optimise it with progress.

Call :func:`optimize_panel` from the page. The work is :func:`citefinder.train.optimize.optimize`; the
program lands in ``<library>/programs/``, where every session's LLM selector picks up the newest.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.select.programs import active_program, program_info
from citefinder.ui import resources
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.render import error_box

OPTIMIZE_REPORT = "optimize_report"  # the last run's OptimizeReport (this session)
OPTIMIZE_UPLOAD = "optimize_upload"
SHARED_DATA = resources.ROOT.parent / "shared" / "data"
STAGE_TEXT = {"examples": "Building training examples", "compile": "Compiling the picker", "saved": "Saved"}


def _code(text: object) -> str:
    """Inline code: markdown is not interpreted there, only a backtick would end it."""
    return "`" + str(text).replace("`", "'") + "`"


def program_summary(settings: Settings) -> str:
    """One line on the program the selector uses with these settings."""
    choice = settings.llm_program.strip().lower()
    if choice in ("none", "off", ""):
        return "The selector uses the plain prompt (setting llm_program = none)."
    if choice != "auto":
        return f"The selector uses the program {_code(settings.llm_program)} (setting llm_program)."
    path = active_program(settings.library)
    if path is None:
        return "No compiled program yet: the selector uses the plain prompt. Optimise one below."
    info = program_info(path)
    made = ", ".join(f"{k} {info[k]}" for k in ("optimizer", "examples", "demos") if k in info)
    about = f" ({escape_markdown(made)}; model {_code(info.get('model'))})" if made else ""
    return f"The selector uses {_code(path.name)}{about}."


@contextmanager
def _examples_file(upload: Any) -> Iterator[Path | None]:
    """The uploaded examples in a temporary folder removed afterwards, else CiteME from ../shared/data."""
    if upload is None:
        citeme = SHARED_DATA / "citeme.jsonl"
        yield citeme if citeme.is_file() else None
        return
    with tempfile.TemporaryDirectory(prefix="citefinder-optimize-") as tmp:
        path = Path(tmp) / "examples.jsonl"
        path.write_bytes(upload.getvalue())
        yield path


def optimize_panel(settings: Settings) -> None:
    """Show the active compiled picker and run ``citefinder optimize`` from a form, with progress."""
    from citefinder.train.optimize import Optimizer

    st.subheader("Compiled picker")
    st.caption("Optimising compiles the LLM picker's prompt (few-shot demos, instructions) with DSPy from labeled "
               "excerpts whose cited papers are in your library. Every session then uses the newest program.")
    st.markdown(program_summary(settings))
    if not settings.llm_enabled:
        st.info("Set an LLM above to optimise the picker.", icon=":material/info:")
        return
    with st.form("optimize"):
        upload = st.file_uploader("Labeled excerpts (JSONL: id, text with [CITATION], gold doc_ids); "
                                  "empty = CiteME from ../shared/data", type=["jsonl"], key=OPTIMIZE_UPLOAD)
        c1, c2, c3 = st.columns(3)
        split = c1.selectbox("Split", ["train", "all", "test"])
        optimizers: list[Optimizer] = ["bootstrap", "mipro"]
        optimizer = c2.selectbox("Optimizer", optimizers,
                                 help="BootstrapFewShot (a few calls per example) or MIPROv2 (many more calls)")
        demos = int(c3.number_input("Demos", 1, 8, 3))
        go = st.form_submit_button("Optimise", type="primary")
    if go:
        with _examples_file(upload) as path:  # an upload lives in a temporary folder, removed after the run
            _optimise(settings, path, upload, split, optimizer, demos)
    last = st.session_state.get(OPTIMIZE_REPORT)
    if last is not None:
        st.success(f"{last.examples} examples ({len(last.skipped)} excerpts skipped), {last.demos} demos "
                   f"({last.bootstrapped_demos} bootstrapped) in {last.elapsed_s:.0f} s: "
                   f"saved {escape_markdown(last.program.name)}.", icon=":material/check_circle:")


def _optimise(settings: Settings, path: Path | None, upload: Any, split: str, optimizer: Any, demos: int) -> None:
    """Run the optimisation from the form's choices, with progress; the report into the session."""
    from citefinder.evaluate.dataset import load_items
    from citefinder.train.optimize import optimize

    if path is None:
        st.error("Upload a labeled JSONL file: no CiteME file was found in ../shared/data.")
        return
    with st.status("Optimising the picker...", expanded=True) as box:
        bar = st.progress(0.0, text="Reading the examples")

        def progress(done: int, total: int | None, stage: str) -> None:
            label = STAGE_TEXT.get(stage, stage)
            fraction = min(1.0, done / total) if total else 0.0
            bar.progress(fraction, text=f"{label}: {done}" + (f" of {total}" if total else " answers scored"))

        try:
            items = load_items(path, split=None if split == "all" else split)
            report = optimize(settings, items, resources.get_library(settings), optimizer=optimizer,
                              demos=demos, source=upload.name if upload is not None else path.name,
                              progress=progress)
        except CitefinderError as e:
            box.update(label="Optimisation failed", state="error")
            error_box(e)
            return
        box.update(label=f"Saved {report.program.name}", state="complete", expanded=False)
    st.session_state[OPTIMIZE_REPORT] = report
