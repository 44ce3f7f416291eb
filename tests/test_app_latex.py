"""The Cite page with a LaTeX draft paired with its own .bib (AppTest, real library and MiniLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import ROOT, DownloadSpy, build_sample_library
from citefinder.library.readers import read_papers
from citefinder.text.slots import find_slots
from citefinder.types import Paper
from citefinder.ui import paired_bib, state
from latex_support import LATEX, assert_only_placeholders_changed, cited_keys

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def library_folder(tmp_path_factory) -> Path:
    return build_sample_library(tmp_path_factory.mktemp("latex-app") / "library")


def test_tex_paired_with_its_bib_downloads_a_draft_citing_only_its_keys(library_folder, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(library_folder))
    spy = DownloadSpy(monkeypatch)
    tex = (LATEX / "paper.tex").read_bytes()
    bib = (LATEX / "refs.bib").read_bytes()
    bib_keys = {p.key for p in read_papers(LATEX / "refs.bib") if isinstance(p, Paper)}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.file_uploader(key=state.CITE_UPLOAD).upload("paper.tex", tex, "text/x-tex").run()
    at.file_uploader(key=paired_bib.UPLOAD).upload("refs.bib", bib, "application/x-bibtex").run()
    next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception and not at.error

    run = at.session_state[state.CITE_RUN]
    assert len(run.results) == 22
    chosen = [r.selection.paper for r in run.results if r.selection.paper]
    assert chosen and all(p.key in bib_keys for p in chosen)  # searched the paired .bib only

    buttons = {b.label.split(" (")[0]: b for b in at.get("download_button")}
    filled = spy.data(buttons["Download draft with \\cite"]).decode()
    original = tex.decode()
    became = assert_only_placeholders_changed(original, filled, find_slots(original))
    assert became[0] == "\\citep{Vaswani.Shazeer.ea.2017}"  # the draft's own command, the user's key
    assert set(cited_keys(filled)) <= bib_keys
    rows = json.loads(spy.data(buttons["Download results"]))
    assert rows[0]["cite_key"] == "Vaswani.Shazeer.ea.2017"
    # each found slot offers its cite to copy
    assert "\\citep{Vaswani.Shazeer.ea.2017}" in [c.value for c in at.code]

    # plain [CITATION] markers take the command the user picks
    at.selectbox(key=paired_bib.COMMAND).set_value("\\citep").run()
    filled = spy.data(next(b for b in at.get("download_button") if b.label.startswith("Download draft"))).decode()
    assert "\\citep{Robertson.Zaragoza.2009}" in filled
