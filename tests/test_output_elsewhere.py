"""``-o`` in another folder (issue 42, item 5): ``fill main.tex -o ../out/main.tex`` (and ``check --fix -o``) of a
project with ``\\input``, ``\\subfile`` and ``\\bibliography`` writes a set that compiles where it is written: the
project's files copied beside the output at their paths from the main file, a file outside the project named by
its path from the output folder, the .bib named where it is. Checked by reading the output back as LaTeX resolves
it (:func:`read_project`): every include found among the written files, every .bib the original one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_project_outputs import FILES, _project

from citefinder.cli.main import main
from citefinder.text.project import read_project

MAIN = FILES["main.tex"].replace("\\begin{document}\n", "\\input{../shared/defs}\n\\begin{document}\n")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _compiles_where_written(out: Path, written: list[Path], bib: Path) -> None:
    back = read_project(out)
    assert back.missing == (), back.missing  # every \input, \subfile found from where the output is
    shared = bib.parent.parent / "shared" / "defs.tex"
    assert [f.path for f in back.files if f.path.parent != out.parent and out.parent not in f.path.parents] == [
        shared.resolve()]  # only the file outside the project: read where it is
    assert all(f.path in written for f in back.files[1:] if out.parent in f.path.parents)
    assert back.bibliographies == (bib.resolve(),)  # the user's .bib, named from the output's folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "defs.tex").write_text("\\newcommand{\\method}{CF}\n", encoding="utf-8")
    (tmp_path / "proj").mkdir()
    return _project(tmp_path / "proj", {**FILES, "main.tex": MAIN})


def test_check_fix_o_in_another_folder_writes_a_set_that_compiles_there(tmp_path, capsys, project):
    before = _tree(tmp_path)
    out = tmp_path / "deep" / "out" / "main.tex"
    (tmp_path / "deep" / "out").mkdir(parents=True)
    assert main(["check", str(project), "--fix", "lecun2015deep=He.Zhang.ea.2016", "-o", str(out)]) == 0
    capsys.readouterr()
    written = sorted(p for p in (tmp_path / "deep").rglob("*.tex"))
    assert [p.relative_to(out.parent).as_posix() for p in written] == [
        "chapters/ch1.tex", "chapters/sec/a.tex", "main.tex", "sections/intro.tex"]
    _compiles_where_written(out, written, project.parent / "refs.bib")
    text = out.read_text(encoding="utf-8")
    assert "\\input{../../shared/defs}" in text and "\\bibliography{../../proj/refs}" in text
    assert "\\cite{He.Zhang.ea.2016}" in read_project(out).text and "lecun2015deep" not in read_project(out).text
    after = _tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("deep/")} == before  # the project as it was


@pytest.mark.slow
def test_fill_o_in_another_folder_writes_a_set_that_compiles_there(tmp_path, capsys, project):
    intro = project.parent / "sections" / "intro.tex"
    intro.write_text(intro.read_text(encoding="utf-8") + "Residual learning eases training \\citep{?}.\n",
                     encoding="utf-8")
    out = tmp_path / "out" / "main.tex"
    (tmp_path / "out").mkdir()
    assert main(["fill", str(project), "-o", str(out), "--library", str(tmp_path / "lib")]) == 0
    capsys.readouterr()
    written = sorted((tmp_path / "out").rglob("*.tex"))
    assert {p.relative_to(out.parent).as_posix() for p in written} >= {"main.tex", "sections/intro.tex",
                                                                       "chapters/ch1.tex", "chapters/sec/a.tex"}
    _compiles_where_written(out, written, project.parent / "refs.bib")
    assert re.search(r"eases training \\citep\{[^?}][^}]*\}", read_project(out).text)  # the filled slot, read back
    assert not list(project.parent.rglob("*.cited.tex"))  # nothing written beside the originals
