"""Multi-file outputs compile what was filled or fixed (issue 35, items 8 and 9): ``check --fix`` of a project and
``fill`` of a nested ``\\subfile`` chain write a copy of every file on the include path between the main file and a
changed file, each naming the changed copies as LaTeX resolves them; read back with ``read_project`` the main copy
is the fixed (filled) text. Each "wrote" line names only its own file's changes; ``-o`` names the main file's copy
even when only an included file changed. TeX's brace-less ``\\input file`` is read (its slots, its citations, its
protection), and files are named by their path from the main file (two ``intro.tex`` told apart). No model: the
check's fixes need none and the fill's keys are given."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.text.project import read_project
from latex_support import plan_project_outputs

LATEX = Path(__file__).parent / "data" / "latex"
MAIN = ("\\documentclass{article}\n\\usepackage{subfiles}\n\\begin{document}\n"
        "Okapi BM25 ranks documents \\cite{Robertson.Zaragoza.2009}.\n"
        "\\input sections/intro\n"
        "\\subfile{chapters/ch1}\n"
        "\\bibliography{refs}\n\\end{document}\n")
INTRO = "Late interaction over BERT \\cite{Khattab.Zaharia.2020} beats BM25.\n"
CH1 = ("\\documentclass[../main.tex]{subfiles}\n\\begin{document}\nChapter one.\n\\subfile{sec/a}\n"
       "\\end{document}\n")
LEAF = ("\\documentclass[../../main.tex]{subfiles}\n\\begin{document}\n"
        "Identity shortcuts make deep networks trainable \\cite{lecun2015deep}.\n\\end{document}\n")
FILES = {"main.tex": MAIN, "sections/intro.tex": INTRO, "chapters/ch1.tex": CH1, "chapters/sec/a.tex": LEAF}


def _project(root: Path, files: dict[str, str] = FILES) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    shutil.copy(LATEX / "refs.bib", root / "refs.bib")
    return root / "main.tex"


def _names(project, paths) -> list[str]:
    """Each path from the main file's folder (computed here: the test does not trust the code it tests)."""
    return [Path(p).relative_to(project.main.parent).as_posix() for p in paths]


@pytest.fixture
def no_learning(monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")


def test_the_fixed_main_file_compiles_the_fixed_text_and_each_wrote_line_is_its_own(tmp_path, capsys, no_learning):
    main_tex = _project(tmp_path)
    assert main(["check", str(main_tex), "--fix", "Khattab.Zaharia.2020=Karpukhin.Oguz.ea.2020",
                 "--fix", "lecun2015deep=He.Zhang.ea.2016"]) == 0
    out = capsys.readouterr().out
    fixed = read_project(tmp_path / "main.fixed.tex")
    assert _names(fixed, [f.path for f in fixed.files]) == ["main.fixed.tex", "sections/intro.fixed.tex",
                                                            "chapters/ch1.fixed.tex", "chapters/sec/a.fixed.tex"]
    assert not fixed.missing
    assert "\\cite{Karpukhin.Oguz.ea.2020}" in fixed.text and "\\cite{He.Zhang.ea.2016}" in fixed.text
    assert "Khattab" not in fixed.text and "lecun2015deep" not in fixed.text
    assert "\\input sections/intro.fixed\n" in (tmp_path / "main.fixed.tex").read_text()  # brace-less, pointed
    assert "\\subfile{sec/a.fixed}" in (tmp_path / "chapters" / "ch1.fixed.tex").read_text()  # from ch1's folder
    for name, text in FILES.items():  # the originals are untouched
        assert (tmp_path / name).read_text() == text
    wrote = {line.split(" (", 1)[1]: line for line in out.splitlines() if line.startswith("wrote ")}
    assert len(wrote) == 4
    intro = next(v for k, v in wrote.items() if k.startswith("sections/intro.tex "))
    leaf = next(v for k, v in wrote.items() if k.startswith("chapters/sec/a.tex "))
    main_line = next(v for k, v in wrote.items() if k.startswith("main.tex "))
    assert "Khattab.Zaharia.2020 -> Karpukhin.Oguz.ea.2020" in intro and "lecun" not in intro
    assert "lecun2015deep -> He.Zhang.ea.2016" in leaf and "Khattab" not in leaf
    assert "->" not in main_line and "includes naming the fixed copies" in main_line


def test_o_names_the_main_copy_when_only_an_included_file_changed(tmp_path, capsys, no_learning):
    main_tex = _project(tmp_path)
    out = tmp_path / "paper-fixed.tex"
    assert main(["check", str(main_tex), "--fix", "lecun2015deep=He.Zhang.ea.2016", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    fixed = read_project(out)
    assert "\\cite{He.Zhang.ea.2016}" in fixed.text and "lecun2015deep" not in fixed.text
    assert not (tmp_path / "main.fixed.tex").exists()  # -o is the main file's copy, not another one


def test_a_nested_subfile_chain_is_filled_down_the_whole_path(tmp_path):
    from citefinder.text.slots import find_slots
    from citefinder.workflow.outputs import put_filled

    leaf = LEAF.replace("\\cite{lecun2015deep}", "\\cite{?}")
    braced = MAIN.replace("\\input sections/intro", "\\input{sections/intro}")
    main_tex = _project(tmp_path, {**FILES, "main.tex": braced, "chapters/sec/a.tex": leaf,
                                   "sections/intro.tex": "Late interaction over BERT [CITATION].\n"})
    project = read_project(main_tex)
    plan, outputs = plan_project_outputs(project)
    slots = find_slots(project.text, latex=True)
    assert _names(project, [project.line(s.start)[0] for s in slots]) == ["sections/intro.tex", "chapters/sec/a.tex"]
    keys = {slots[0].index: ["Khattab.Zaharia.2020"], slots[1].index: ["He.Zhang.ea.2016"]}
    written = put_filled(plan, project, slots, keys, "\\cite", outputs, in_place=False)
    plan.commit()
    assert {p.relative_to(tmp_path).as_posix() for p in written} == {
        "main.cited.tex", "sections/intro.cited.tex", "chapters/ch1.cited.tex", "chapters/sec/a.cited.tex"}
    filled = read_project(tmp_path / "main.cited.tex")
    assert not filled.missing and "[CITATION]" not in filled.text and "{?}" not in filled.text
    assert "\\cite{Khattab.Zaharia.2020}" in filled.text and "\\cite{He.Zhang.ea.2016}" in filled.text
    assert (tmp_path / "chapters" / "ch1.tex").read_text() == CH1  # untouched


def test_a_brace_less_input_is_read_protected_and_checked(tmp_path, capsys):
    from citefinder.text.citations import find_citations
    from citefinder.text.slots import find_slots

    main_tex = _project(tmp_path, {"main.tex": MAIN.replace("\\subfile{chapters/ch1}\n", "\\input last.tex\\relax\n"),
                                   "sections/intro.tex": "Late interaction over BERT [CITATION].\n",
                                   "last.tex": "Residual networks \\cite{He.Zhang.ea.2016}."})
    project = read_project(main_tex)
    assert _names(project, [f.path for f in project.files]) == ["main.tex", "sections/intro.tex", "last.tex"]
    assert _names(project, [project.line(s.start)[0] for s in find_slots(project.text, latex=True)]) == [
        "sections/intro.tex"]
    assert [c.key for c in find_citations(project.text)] == ["Robertson.Zaragoza.2009", "He.Zhang.ea.2016"]
    for target in ("sections/intro.tex", "last.tex"):
        assert main(["fill", str(main_tex), "-o", str(tmp_path / target)]) == 2
        assert "is a file of the draft" in capsys.readouterr().err
    assert (tmp_path / "sections" / "intro.tex").read_text() == "Late interaction over BERT [CITATION].\n"


def test_files_are_named_by_their_path_from_the_main_file(tmp_path):
    from citefinder.cli.fill import slot_lines
    from citefinder.text.slots import find_slots
    from citefinder.types import Query, Selection, SlotResult

    main_tex = _project(tmp_path, {"main.tex": "\\begin{document}\n\\input{sections/intro}\n\\input{appendix/intro}\n"
                                               "\\end{document}\n",
                                   "sections/intro.tex": "Dense retrieval [CITATION].\n",
                                   "appendix/intro.tex": "Sparse retrieval [CITATION].\n"})
    project = read_project(main_tex)
    results = [SlotResult(s, Query("q"), (), Selection("abstain", None), ())
               for s in find_slots(project.text, latex=True)]
    lines = slot_lines(project, results, {}, "\\cite")
    assert lines[0].startswith("Slot 1 (sections/intro.tex, line 1):")
    assert lines[1].startswith("Slot 2 (appendix/intro.tex, line 1):")
