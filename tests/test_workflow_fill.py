"""One fill, two faces (issue 45): ``citefinder fill paper.tex --bib refs.bib`` and the Cite page given the same
draft and .bib both run the workflow's :func:`citefinder.workflow.fill.run_slots` and cite the same keys in
the same places (real .bib, real Chroma, bm25s and MiniLM; AppTest for the page)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import DownloadSpy, build_sample_library
from citefinder.cli.main import main
from citefinder.text.slots import find_slots
from citefinder.ui import paired_bib, state
from citefinder.workflow import fill as workflow_fill
from latex_support import assert_only_placeholders_changed, cited_keys

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LATEX = Path(__file__).parent / "data" / "latex"


def test_the_cli_and_the_cite_page_fill_through_the_workflow_with_the_same_keys(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")  # neither run teaches the other
    calls: list[str] = []
    run_slots = workflow_fill.run_slots

    def spy(pipeline, request, progress=None):
        calls.append(request.text)
        return run_slots(pipeline, request, progress)

    monkeypatch.setattr(workflow_fill, "run_slots", spy)
    original = (LATEX / "paper.tex").read_text(encoding="utf-8")
    slots = find_slots(original)

    # the CLI
    # fills at the old default threshold: what this test compares is the two faces, not the threshold
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")
    project = tmp_path / "cli"
    project.mkdir()
    shutil.copy(LATEX / "paper.tex", project / "paper.tex")
    shutil.copy(LATEX / "refs.bib", project / "refs.bib")
    assert main(["fill", str(project / "paper.tex"), "--bib", str(project / "refs.bib")]) == 0
    capsys.readouterr()
    by_cli = assert_only_placeholders_changed(original, (project / "paper.cited.tex").read_text("utf-8"), slots)
    assert len(calls) == 1

    # the Cite page
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(build_sample_library(tmp_path / "page" / "library")))
    downloads = DownloadSpy(monkeypatch)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.file_uploader(key=state.CITE_UPLOAD).upload("paper.tex", (LATEX / "paper.tex").read_bytes(), "text/x-tex").run()
    at.file_uploader(key=paired_bib.UPLOAD).upload("refs.bib", (LATEX / "refs.bib").read_bytes(),
                                                   "application/x-bibtex").run()
    next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception and not at.error
    assert len(calls) == 2  # the page's worker ran the same workflow step
    draft = next(b for b in at.get("download_button") if b.label.startswith("Download draft"))
    by_page = assert_only_placeholders_changed(original, downloads.data(draft).decode("utf-8"), slots)

    assert len([k for piece in by_cli for k in cited_keys(piece)]) >= 12  # most slots filled
    assert by_page == by_cli  # the same key, in the draft's own command, in every slot
