"""A LaTeX project filled whole from its own .bib (issue 21): the files it includes are read (commented-out
ones are not), each changed file is written beside its original in its own encoding and line endings and
differs only at its placeholders, and no output may overwrite an input. Real Chroma, bm25s and MiniLM."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.text.slots import find_slots
from latex_support import assert_only_placeholders_changed

LATEX = Path(__file__).parent / "data" / "latex"

MAIN = r"""\documentclass{article}
\usepackage[latin1]{inputenc}
\usepackage{natbib}
\usepackage{subfiles}
\title{Retrieval for citation recommendation}
\begin{document}
\maketitle
\input{sections/intro}
% \input{sections/old}
\include{method}
\subfile{appendix}
\import{parts/}{extra}
\bibliographystyle{plainnat}
\bibliography{refs}
\end{document}
"""
INTRO = ("\\section{Introduction}\n"
         "The Transformer replaced recurrence with self-attention alone for sequence transduction and machine "
         "translation \\citep{?}.\n")
OLD = "An old paragraph about Adam, adaptive moment estimation \\citep{?}.\n"
METHOD = ("\\section{M\u00e9thode}\n"
          "Deep networks are trained with adaptive moment estimation \\citep{?}, regularized by randomly dropping "
          "units \\citep{?}; na\u00efve training fails.\n")
APPENDIX = ("\\documentclass[main.tex]{subfiles}\n\\begin{document}\n"
            "Identity shortcut connections make residual networks of over a hundred layers easy to optimize "
            "\\cite{?}.\r\n\r\nLexical ranking with BM25 remains a strong baseline [CITATION].\r\n\\end{document}\r\n")
EXTRA = "Scaling language models to 175 billion parameters enabled few-shot learning \\autocite{?}.\n"


def _project(root: Path) -> Path:
    (root / "sections").mkdir()
    (root / "parts").mkdir()
    (root / "main.tex").write_text(MAIN, encoding="utf-8")
    (root / "sections" / "intro.tex").write_text(INTRO, encoding="utf-8")
    (root / "sections" / "old.tex").write_text(OLD, encoding="utf-8")
    (root / "method.tex").write_bytes(METHOD.encode("latin-1"))
    (root / "appendix.tex").write_bytes(APPENDIX.encode("utf-8"))
    (root / "parts" / "extra.tex").write_text(EXTRA, encoding="utf-8")
    shutil.copy(LATEX / "refs.bib", root / "refs.bib")
    return root / "main.tex"


def test_the_project_is_read_as_latex_reads_it(tmp_path):
    from citefinder.text.project import read_project

    project = read_project(_project(tmp_path))
    assert [f.path.name for f in project.files] == ["main.tex", "intro.tex", "method.tex", "appendix.tex",
                                                    "extra.tex"]
    assert project.files[2].encoding != "utf-8" and "M\u00e9thode" in project.text  # Latin-1, decoded
    assert "old paragraph" not in project.text and "documentclass[main.tex]" not in project.text
    assert project.bibliographies == ((tmp_path / "refs.bib").resolve(),)
    slots = find_slots(project.text, latex=True)
    assert len(slots) == 6
    assert [project.line(s.start)[0].name for s in slots] == ["intro.tex", "method.tex", "method.tex",
                                                             "appendix.tex", "appendix.tex", "extra.tex"]
    assert all("usepackage" not in s.context and "latin1" not in s.context for s in slots)


@pytest.mark.slow
def test_fill_a_project_from_the_bib_it_names(tmp_path, capsys, monkeypatch):
    # about writing a LaTeX project's files, not the threshold: fill at a fixed 0.55, whatever the shipped default
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")
    main_tex = _project(tmp_path)
    originals = {p: p.read_bytes() for p in tmp_path.rglob("*.tex")}
    assert main(["fill", str(main_tex)]) == 0  # no --bib: \bibliography{refs} names it
    out, err = capsys.readouterr()
    assert "citing the keys of refs.bib (named in main.tex)" in err
    # every changed file beside its original; the main file (unchanged) too; the commented-out file untouched
    for name in ("sections/intro.cited.tex", "method.cited.tex", "appendix.cited.tex", "parts/extra.cited.tex",
                 "main.cited.tex"):
        assert (tmp_path / name).is_file(), (name, out)
    assert not (tmp_path / "sections" / "old.cited.tex").exists()
    assert {p: p.read_bytes() for p in originals} == originals  # no input was changed
    # the filled main file \input's the filled copies (and nothing else changed in it)
    assert (tmp_path / "main.cited.tex").read_text() == (
        MAIN.replace("\\input{sections/intro}", "\\input{sections/intro.cited}")
        .replace("\\include{method}", "\\include{method.cited}")
        .replace("\\subfile{appendix}", "\\subfile{appendix.cited}")
        .replace("\\import{parts/}{extra}", "\\import{parts/}{extra.cited}"))
    for name, encoding in (("method", "latin-1"), ("appendix", "utf-8"), ("sections/intro", "utf-8")):
        before = (tmp_path / f"{name}.tex").read_bytes()
        after = (tmp_path / f"{name}.cited.tex").read_bytes()
        text = before.decode(encoding)
        became = assert_only_placeholders_changed(text, after.decode(encoding),
                                                  find_slots(text, latex=True))
        assert all(piece.startswith(("\\cite", "\\autocite", "[CITATION]")) for piece in became)
    method = (tmp_path / "method.cited.tex").read_bytes()
    assert "M\u00e9thode".encode("latin-1") in method and b"\xc3" not in method  # still Latin-1
    assert b"\r\n\r\n" in (tmp_path / "appendix.cited.tex").read_bytes()  # its Windows line endings kept
    assert "\\citep{Vaswani.Shazeer.ea.2017}" in (tmp_path / "sections" / "intro.cited.tex").read_text()
    assert "Slot 1 (sections/intro.tex, line 2): \\citep{Vaswani.Shazeer.ea.2017}" in out  # named from main.tex

    # --in-place: each changed file over itself, its original kept as .bak
    assert main(["fill", str(main_tex), "--in-place"]) == 0
    assert (tmp_path / "method.tex.bak").read_bytes() == originals[tmp_path / "method.tex"]
    assert (tmp_path / "method.tex").read_bytes() == method
    assert not (tmp_path / "main.tex.bak").exists()  # unchanged: not rewritten


@pytest.mark.parametrize(
    ("extra", "says"),
    [(["-o", "refs.bib"], "is your bibliography"), (["-o", "main.tex"], "is the draft"),
     (["-o", "sections/intro.tex"], "is a file of the draft"), (["--json", "refs.bib"], "is your bibliography")],
)
def test_an_output_that_is_an_input_is_refused_in_one_line(tmp_path, capsys, extra, says):
    main_tex = _project(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    args = [a if not a.endswith((".bib", ".tex")) else str(tmp_path / a) for a in extra]
    assert main(["fill", str(main_tex), "--bib", str(tmp_path / "refs.bib"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and says in err[0]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # nothing written


def test_a_single_file_draft_never_overwrites_its_bib(tmp_path, capsys):
    tex, bib = tmp_path / "paper.tex", tmp_path / "refs.bib"
    shutil.copy(LATEX / "paper.tex", tex)
    shutil.copy(LATEX / "refs.bib", bib)
    assert main(["fill", str(tex), "--bib", str(bib), "-o", str(bib)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is your bibliography" in err[0] and "nothing was written" in err[0]
    assert bib.read_bytes() == (LATEX / "refs.bib").read_bytes()


@pytest.mark.slow
def test_a_file_linked_to_the_library_is_an_input_too(tmp_path, capsys):
    main_tex = tmp_path / "paper.tex"
    shutil.copy(LATEX / "paper.tex", main_tex)
    shutil.copy(LATEX / "refs.bib", tmp_path / "refs.bib")
    other = tmp_path / "zotero.bib"
    other.write_text("@article{extra2020, title = {An extra paper on retrieval}, year = {2020}}\n")
    library = str(tmp_path / ".refs.citefinder")
    assert main(["library", "link", str(other), "--library", library]) == 0
    before = other.read_bytes()
    assert main(["fill", str(main_tex), "--bib", str(tmp_path / "refs.bib"), "-o", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "is a file linked to the library" in err[-1]
    assert other.read_bytes() == before


@pytest.mark.slow
def test_a_deleted_duplicate_key_does_not_leave_the_slot_unfilled(tmp_path, capsys):
    tex, bib = tmp_path / "paper.tex", tmp_path / "refs.bib"
    tex.write_text("\\section{Intro}\nThe Transformer replaced recurrence with self-attention alone for sequence "
                   "transduction and machine translation \\citep{?}.\n", encoding="utf-8")
    text = (LATEX / "refs.bib").read_text(encoding="utf-8")
    bib.write_text("@inproceedings{attention, title = {Attention is all you need}, author = {Vaswani, Ashish},"
                   " year = {2017}}\n" + text, encoding="utf-8")
    assert main(["fill", str(tex), "--bib", str(bib)]) == 0
    assert "\\citep{attention}" in (tmp_path / "paper.cited.tex").read_text()
    bib.write_text(text, encoding="utf-8")  # the duplicate entry deleted: the same work stays under another key
    capsys.readouterr()
    assert main(["fill", str(tex), "--bib", str(bib)]) == 0
    out, err = capsys.readouterr()
    assert "no key in refs.bib" not in err
    assert "\\citep{Vaswani.Shazeer.ea.2017}" in (tmp_path / "paper.cited.tex").read_text(), out
