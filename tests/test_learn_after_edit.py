"""After a few words are edited just before a cite CiteFinder wrote, ``check`` does not learn CiteFinder's own
pick as the user's (issue 42 item 10): the written record finds the cite by its key and the text most like the
noted one (citefinder.text.written.owned). Real library of tests/data/latex/refs.bib, real MiniLM."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.contexts.memory import memory_of
from citefinder.library.store import Library

LATEX = Path(__file__).parent / "data" / "latex"
DRAFT = ("\\documentclass{article}\n\\begin{document}\n"
         "Okapi BM25 is the probabilistic relevance framework's ranking function \\cite{Robertson.Zaragoza.2009}.\n"
         "The Transformer relies entirely on self-attention, dispensing with recurrence [CITATION].\n"
         "\\bibliography{refs}\n\\end{document}\n")


@pytest.mark.slow
def test_check_after_an_edit_before_a_filled_cite_learns_only_the_users_own(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "true")
    tex, bib = tmp_path / "main.tex", tmp_path / "refs.bib"
    tex.write_text(DRAFT, encoding="utf-8")
    shutil.copy(LATEX / "refs.bib", bib)
    assert main(["fill", str(tex), "--in-place"]) == 0
    assert "learned 1 citation from main.tex" in capsys.readouterr().err  # the user's own \cite
    filled = tex.read_text()
    assert "[CITATION]" not in filled
    tex.write_text(filled.replace("dispensing with recurrence", "doing away with recurrence entirely"))
    assert main(["check", str(tex)]) in (0, 1)
    assert "learned" not in capsys.readouterr().err
    library = Library.open(Settings(library=tmp_path / ".refs.citefinder"))
    assert memory_of(library).counts().get("contexts_user") == 1
