"""The smaller items of issue 29 (item 7), each on its own: blank cells instead of "None", the LLM banner after a
settings reset, a failed connection test that saves nothing, the box's source line after other text was pasted,
and a .bib given as a PDF."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from citefinder.errors import InputError
from citefinder.text.pdf import BIBTEX, looks_like, open_pdf
from citefinder.types import Candidate, Hit, Paper, StageScore
from citefinder.ui import state
from citefinder.ui.cite.draft import source_caption
from citefinder.ui.tables import candidates_frame, hits_frame, shown

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def test_missing_values_are_blank_cells_not_none() -> None:
    a = Candidate(Paper("a", "Alpha", year=2020), (StageScore("bm25", 1, 3.2), StageScore("fused", 1, 0.5)))
    b = Candidate(Paper("b", "Beta"), (StageScore("dense", 1, 0.7), StageScore("fused", 2, 0.4)))
    html = shown(candidates_frame([a, b])).to_html()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert "" in cells and not any(c.strip() in ("None", "<NA>", "nan", "&lt;NA&gt;") for c in cells)
    html = shown(hits_frame([Hit("x", 1, 0.5)], {})).to_html()
    assert "None" not in html and "&lt;NA&gt;" not in html


BANNER = '''
import streamlit as st
from citefinder.config import Settings
from citefinder.types import Candidate, Paper, Query, Selection, Slot, SlotResult, StageTrace
from citefinder.ui import state
from citefinder.ui.cite.results import llm_banner

slot = Slot(0, 0, 10, "[CITATION]", "x [CITATION].", "x [CITATION].")
trace = StageTrace("select", details={"llm_error": "connection refused"})
result = SlotResult(slot, Query("x"), (), Selection("not_found", method="threshold"), (trace,))
llm_banner(state.CiteRun("x [CITATION].", (result,), 1.0), Settings(llm_model=st.session_state.get("model")))
'''


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", None])
def test_the_llm_banner_after_a_settings_reset(model: str | None, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    at = AppTest.from_string(BANNER)
    at.session_state["model"] = model
    at.run()
    assert not at.exception
    text = re.sub(r"\\(.)", r"\1", " ".join([w.value for w in at.warning] + [c.value for c in at.caption]))
    assert "(the LLM)" not in text
    if model:
        assert len(at.warning) == 1 and "openai/gpt-4o-mini" in text and "Settings" in text
    else:
        assert not at.warning and "No LLM is set now" in text


def test_a_failed_connection_test_saves_nothing(tmp_path, monkeypatch) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens once the socket is closed
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    next(t for t in at.text_input if t.label == "Model (LiteLLM form)").set_value("openai/nowhere")
    next(t for t in at.text_input if t.label == "API base URL").set_value(f"http://127.0.0.1:{closed}/v1")
    next(n for n in at.number_input if n.label == "Timeout per call (s)").set_value(5.0)
    at.button(key="FormSubmitter:llm-Save and test connection").click().run()
    assert not at.exception
    assert at.session_state[state.SETTINGS].llm_model is None  # not saved
    errors = " ".join(e.value for e in at.error)
    assert "Not saved" in errors
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "none \\(threshold rule\\)" in sidebar and "nowhere" not in sidebar


def test_the_source_line_follows_the_box() -> None:
    loaded = "Line one [CITATION].\nLine two.\nLine three [CITATION]."
    assert source_caption("draft.txt", loaded, loaded) == "Text from **draft\\.txt**"
    assert source_caption("draft.txt", loaded, loaded + "\nA fourth.") == "Text from **draft\\.txt**, edited here"
    assert source_caption("draft.txt", loaded, "Something else entirely [CITATION].") is None
    assert source_caption(None, None, "x") is None


def test_a_bib_given_as_a_pdf_says_what_it_is() -> None:
    data = (DATA / "refs.bib").read_bytes()
    assert looks_like(data) == BIBTEX
    with pytest.raises(InputError, match="is not a PDF: it looks like a BibTeX file.*Pair with your .bib"):
        open_pdf(data, "refs.pdf")
    assert looks_like((DATA / "paper.pdf").read_bytes()) is None
