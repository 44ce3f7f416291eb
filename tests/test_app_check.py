"""The Check view (AppTest, real library and MiniLM): upload a LaTeX draft and its .bib, see the verdicts,
replace the wrong key in one click, download the corrected .tex (issue 21)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import ROOT, DownloadSpy, build_sample_library
from citefinder.ui import check_view
from latex_support import LATEX

pytestmark = pytest.mark.slow

WRONG = "He.Zhang.ea.2016"


@pytest.fixture(scope="module")
def library_folder(tmp_path_factory) -> Path:
    return build_sample_library(tmp_path_factory.mktemp("check-app") / "library")


def test_check_view_flags_the_wrong_key_and_downloads_the_fix(library_folder, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(library_folder))
    spy = DownloadSpy(monkeypatch)
    tex = (LATEX / "checked.tex").read_bytes()
    at = AppTest.from_file(str(ROOT / "pages" / "6_Check.py"), default_timeout=300).run()
    assert not at.exception
    at.file_uploader(key=check_view.TEX).upload("checked.tex", tex, "text/x-tex").run()
    at.file_uploader(key=check_view.BIB).upload("refs.bib", (LATEX / "refs.bib").read_bytes(),
                                                "application/x-bibtex").run()
    next(b for b in at.button if b.label == "Check citations").click().run()
    assert not at.exception and not at.error
    run = at.session_state[check_view.RUN]
    assert len(run.report.citations) == 24
    wrong = next(c for c in run.report.citations if c.key == WRONG and c.line == 33)
    assert wrong.verdict == "likely wrong"
    # the downloads are there before any fix: the report and the results
    labels = [b.label for b in at.get("download_button")]
    assert "Download report (.md)" in labels and "Download results (.json)" in labels

    next(b for b in at.button if b.label == "Replace with Robertson.Zaragoza.2009").click().run()
    assert not at.exception
    corrected = spy.data(next(b for b in at.get("download_button") if b.label == "Download corrected .tex"))
    at_ = tex.index(WRONG.encode())
    assert corrected == tex[:at_] + b"Robertson.Zaragoza.2009" + tex[at_ + len(WRONG):]
