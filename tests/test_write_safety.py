"""Nothing of the user's is overwritten (issue 27): the data-safety matrix through the real CLI, every output flag
of ``fill`` and ``check`` (with and without ``--bib`` and ``--in-place``, twice in a row) pointed at every file of
a LaTeX project (the main file, an ``\\input`` file in a subfolder, a Latin-1 + CRLF file, a read-only file, a 0600
file, the ``\\bibliography`` .bib, a symlink and a hard link to it, a folder): each is refused in one line, exit 2,
no traceback, and every file of the project keeps its bytes and its mode. Then the writes that are allowed
(``--in-place`` twice, ``-o``), with the real engine: only placeholders change, each changed file keeps a .bak of
its original bytes and its mode, and the second fill learns nothing CiteFinder wrote."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from citefinder.cli.main import main
from latex_support import assert_only_placeholders_changed, plan_project_outputs

LATEX = Path(__file__).parent / "data" / "latex"
MAIN = ("\\documentclass{article}\n\\begin{document}\n"
        "Okapi BM25 is the probabilistic relevance framework's ranking function \\cite{Robertson.Zaragoza.2009}.\n"
        "The bench was quiet and the tea was cold that grey morning [CITATION].\n"
        "\\input{sections/intro}\n\\input{latin}\n\\input{locked}\n\\input{private}\n"
        "\\bibliography{refs}\n\\end{document}\n")
INTRO = ("The Transformer replaced recurrence with self-attention alone for sequence transduction and machine "
         "translation \\citep{?}.\n")
LATIN = "M\u00e9thode: deep networks are trained with adaptive moment estimation \\citep{?}.\r\nNa\u00efve.\r\n"
LOCKED = "Lexical ranking remains a strong baseline.\n"
PRIVATE = "Identity shortcut connections make residual networks of a hundred layers easy to optimize \\cite{?}.\n"
TARGETS = ("main.tex", "sections/intro.tex", "latin.tex", "locked.tex", "private.tex", "refs.bib", "link.bib",
           "hard.bib", "folder", "sections/../refs.bib")


def _project(root: Path) -> Path:
    (root / "sections").mkdir()
    (root / "folder").mkdir()
    (root / "main.tex").write_text(MAIN, encoding="utf-8")
    (root / "sections" / "intro.tex").write_text(INTRO, encoding="utf-8")
    (root / "latin.tex").write_bytes(LATIN.encode("latin-1"))
    (root / "locked.tex").write_text(LOCKED, encoding="utf-8")
    (root / "private.tex").write_text(PRIVATE, encoding="utf-8")
    shutil.copy(LATEX / "refs.bib", root / "refs.bib")
    (root / "link.bib").symlink_to(root / "refs.bib")
    os.link(root / "refs.bib", root / "hard.bib")
    (root / "locked.tex").chmod(0o444)
    (root / "private.tex").chmod(0o600)
    return root / "main.tex"


def _snapshot(root: Path) -> dict[str, tuple[bytes | str, int]]:
    out: dict[str, tuple[bytes | str, int]] = {}
    for p in sorted(root.rglob("*")):
        if ".citefinder" in p.name and p.is_dir():
            continue
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            out[str(p.relative_to(root))] = (os.readlink(p), stat.S_IMODE(st.st_mode))
        elif p.is_file():
            out[str(p.relative_to(root))] = (p.read_bytes(), stat.S_IMODE(st.st_mode))
    return out


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (argv, out, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    assert "Traceback" not in out + err
    return lines[0]


FILL_FLAGS = [(flag, bib, in_place) for flag in ("-o", "--filled", "--bib-out", "--json")
              for bib in (False, True) for in_place in (False, True)]


@pytest.mark.parametrize(("flag", "bib", "in_place"), FILL_FLAGS)
def test_fill_never_writes_over_a_file_of_the_project(tmp_path, capsys, flag, bib, in_place):
    main_tex = _project(tmp_path)
    before = _snapshot(tmp_path)
    extra = (["--bib", str(tmp_path / "refs.bib")] if bib else []) + (["--in-place"] if in_place else [])
    for target in TARGETS:
        for _ in range(2):
            _refused(capsys, ["fill", str(main_tex), flag, str(tmp_path / target), *extra,
                              "--library", str(tmp_path / "lib")])
            assert _snapshot(tmp_path) == before, (flag, target)


CHECK_FLAGS = [(flag, bib) for flag in ("--json", "--markdown", "--fix") for bib in (False, True)]


@pytest.mark.parametrize(("flag", "bib"), CHECK_FLAGS)
def test_check_never_writes_over_a_file_of_the_project(tmp_path, capsys, flag, bib):
    main_tex = _project(tmp_path)
    before = _snapshot(tmp_path)
    extra = ["--bib", str(tmp_path / "refs.bib")] if bib else []
    for target in TARGETS:
        argv = ["check", str(main_tex), *extra]
        if flag == "--fix":
            argv += ["--fix", "Robertson.Zaragoza.2009=Karpukhin.Oguz.ea.2020", "-o", str(tmp_path / target)]
        else:
            argv += [flag, str(tmp_path / target)]
        for _ in range(2):
            line = _refused(capsys, argv)
            assert "nothing was written" in line
            assert _snapshot(tmp_path) == before, (flag, target)


def test_each_refusal_says_what_the_target_is(tmp_path, capsys):
    main_tex = _project(tmp_path)
    says = {"main.tex": "is the draft", "sections/intro.tex": "is a file of the draft",
            "refs.bib": "is a .bib the draft names", "link.bib": "is a .bib the draft names",
            "hard.bib": "is a .bib the draft names", "folder": "is a folder",
            "sections/../refs.bib": "is a .bib the draft names"}
    for target, what in says.items():
        line = _refused(capsys, ["fill", str(main_tex), "-o", str(tmp_path / target)])
        assert what in line, line
    # --bib names another .bib: the one \bibliography names is protected all the same, used or not
    other = tmp_path / "other.bib"
    shutil.copy(LATEX / "refs.bib", other)
    assert "is a .bib the draft names" in _refused(capsys, ["fill", str(main_tex), "--bib", str(other), "-o",
                                                            str(tmp_path / "refs.bib")])
    assert "is your bibliography" in _refused(capsys, ["fill", str(main_tex), "--bib", str(other), "-o",
                                                       str(other)])
    # the library's folder
    (tmp_path / ".refs.citefinder").mkdir()
    assert "inside the library folder" in _refused(
        capsys, ["fill", str(main_tex), "--json", str(tmp_path / ".refs.citefinder" / "r.json")])


def test_an_existing_file_citefinder_did_not_write_is_not_replaced(tmp_path, capsys):
    main_tex = _project(tmp_path)
    notes = tmp_path / "notes.tex"
    notes.write_text("my own notes\n", encoding="utf-8")
    line = _refused(capsys, ["fill", str(main_tex), "-o", str(notes)])
    assert "exists and is not a file CiteFinder wrote for this draft" in line and "--force" in line
    assert notes.read_text(encoding="utf-8") == "my own notes\n"


def test_in_place_refuses_a_read_only_file_with_a_placeholder_unless_forced(tmp_path, capsys):
    main_tex = _project(tmp_path)
    locked = tmp_path / "locked.tex"
    locked.chmod(0o644)
    locked.write_text("BM25 remains a strong baseline [CITATION].\n", encoding="utf-8")
    locked.chmod(0o444)
    before = _snapshot(tmp_path)
    line = _refused(capsys, ["fill", str(main_tex), "--in-place"])
    assert "is read-only" in line and "--force" in line
    assert _snapshot(tmp_path) == before


def test_old_spellings_work_only_where_they_mean_one_thing(tmp_path, capsys):
    main_tex = _project(tmp_path)
    assert "give one of them" in _refused(capsys, ["fill", str(main_tex), "-o", str(tmp_path / "a.tex"),
                                                   "--filled", str(tmp_path / "b.tex")])
    assert "drop one of them" in _refused(capsys, ["fill", str(main_tex), "--bib", str(tmp_path / "refs.bib"),
                                                   "--bib-out", str(tmp_path / "out.bib")])
    line = _refused(capsys, ["fill", str(main_tex), "--bib", str(tmp_path / "refs.bib"),
                             "-o", str(tmp_path / "new.bib")])
    assert "-o is the filled draft" in line and "--bib-out" in line
    line = _refused(capsys, ["check", str(main_tex), "-o", str(tmp_path / "x.tex")])
    assert "-o is the fixed draft of --fix" in line


def test_fix_refuses_a_key_no_bib_holds_and_keeps_an_earlier_fixed_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    main_tex = _project(tmp_path)
    before = _snapshot(tmp_path)
    line = _refused(capsys, ["check", str(main_tex), "--fix", "Robertson.Zaragoza.2009=nosuchkey2020"])
    assert "nosuchkey2020: no such key in refs.bib" in line
    assert _snapshot(tmp_path) == before
    assert main(["check", str(main_tex), "--fix", "Robertson.Zaragoza.2009=Karpukhin.Oguz.ea.2020"]) == 0
    fixed = tmp_path / "main.fixed.tex"
    first = fixed.read_bytes()
    assert b"\\cite{Karpukhin.Oguz.ea.2020}" in first
    assert main(["check", str(main_tex), "--fix", "Robertson.Zaragoza.2009=Khattab.Zaharia.2020"]) == 0
    assert (tmp_path / "main.fixed.tex.bak").read_bytes() == first  # the first fix is kept, not lost
    assert b"\\cite{Khattab.Zaharia.2020}" in fixed.read_bytes()
    assert {k: v for k, v in _snapshot(tmp_path).items() if k in before} == before


def test_a_missing_draft_exits_non_zero(tmp_path, capsys):
    assert main(["fill", str(tmp_path / "missing.tex"), "--bib-out", str(tmp_path / "x.bib")]) != 0
    assert main(["contexts", "import", str(tmp_path / "missing.jsonl"), "--library", str(tmp_path / "lib")]) != 0


@pytest.mark.slow
def test_the_allowed_writes_change_only_placeholders_keep_modes_and_learn_nothing_of_their_own(tmp_path, capsys,
                                                                                                monkeypatch):
    # about which writes are allowed, not the threshold: fill at a fixed 0.55, whatever the shipped default
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")
    main_tex = _project(tmp_path)
    originals = _snapshot(tmp_path)
    # -o: the filled draft (never a .bib, whatever the draft names); the changed \input files beside theirs
    assert main(["fill", str(main_tex), "-o", str(tmp_path / "main.filled.tex")]) == 0
    out, err = capsys.readouterr()
    assert "learned 1 citation from main.tex" in err  # the user's own \cite{Robertson.Zaragoza.2009}
    filled = (tmp_path / "main.filled.tex").read_text(encoding="utf-8")
    assert "\\input{sections/intro.cited}" in filled and "\\input{latin.cited}" in filled
    assert "\\input{locked}" in filled  # no placeholder there: the original is the filled copy
    assert {k: v for k, v in _snapshot(tmp_path).items() if k in originals} == originals
    intro = (tmp_path / "sections" / "intro.cited.tex").read_text(encoding="utf-8")
    assert "\\citep{Vaswani.Shazeer.ea.2017}" in intro
    # the same again: CiteFinder's own output for this draft is replaced, nothing else
    assert main(["fill", str(main_tex), "-o", str(tmp_path / "main.filled.tex")]) == 0
    assert "learned" not in capsys.readouterr().err

    # --in-place, twice: only placeholders change, each changed file has a .bak of its bytes and keeps its mode
    for run in range(2):
        assert main(["fill", str(main_tex), "--in-place"]) == 0
        out, err = capsys.readouterr()
        assert "learned" not in err, (run, err)  # the first run's picks are CiteFinder's, not the user's
        now = _snapshot(tmp_path)
        for name, text, codec in (("sections/intro.tex", INTRO, "utf-8"), ("latin.tex", LATIN, "latin-1"),
                                  ("private.tex", PRIVATE, "utf-8"), ("main.tex", MAIN, "utf-8")):
            assert now[name][1] == originals[name][1]  # 0600 stays 0600
            if now[name] != originals[name]:
                assert now[f"{name}.bak"] == originals[name]  # the first run's backup, never overwritten
            assert f"{name}.bak.1" not in now  # the second run changed nothing: no second backup
            assert_only_placeholders_changed(text, now[name][0].decode(codec), _slots(text))
        assert "[CITATION]" in now["main.tex"][0].decode()  # the nonsense slot abstained, left for the next run
        assert b"\r\n" in now["latin.tex"][0] and "M\u00e9thode".encode("latin-1") in now["latin.tex"][0]
        for name in ("locked.tex", "refs.bib", "link.bib", "hard.bib"):
            assert now[name] == originals[name], name


def _slots(text: str):
    from citefinder.text.slots import find_slots

    return find_slots(text, latex=True)


def test_the_filled_copies_include_each_other_down_the_tree(tmp_path):
    from citefinder.text.project import read_project
    from citefinder.text.slots import find_slots
    from citefinder.workflow.outputs import put_filled

    (tmp_path / "sections").mkdir()
    (tmp_path / "main.tex").write_text("\\begin{document}\n\\input{sections/part}\n\\end{document}\n")
    (tmp_path / "sections" / "part.tex").write_text("Part.\n\\input{sections/leaf}\n")
    (tmp_path / "sections" / "leaf.tex").write_text("Dense retrieval works \\citep{?}.\n")
    project = read_project(tmp_path / "main.tex")
    plan, outputs = plan_project_outputs(project)
    slots = find_slots(project.text, latex=True)
    put_filled(plan, project, slots, {slots[0].index: ["karpukhin2020"]}, "\\cite", outputs, in_place=False)
    plan.commit()
    assert "\\input{sections/part.cited}" in (tmp_path / "main.cited.tex").read_text()
    assert "\\input{sections/leaf.cited}" in (tmp_path / "sections" / "part.cited.tex").read_text()
    assert "\\citep{karpukhin2020}" in (tmp_path / "sections" / "leaf.cited.tex").read_text()
    assert (tmp_path / "sections" / "part.tex").read_text() == "Part.\n\\input{sections/leaf}\n"  # untouched


# --- issue 35: --force, backups named before any output, temporary files, full disks, the record of a write ----

FIX = "Robertson.Zaragoza.2009=Karpukhin.Oguz.ea.2020"


def _two_file_project(root: Path) -> Path:
    """main.tex and sections/intro.tex both cite Robertson.Zaragoza.2009 (a --fix changes both)."""
    main_tex = _project(root)
    (root / "sections" / "intro.tex").write_text(INTRO + "BM25 \\cite{Robertson.Zaragoza.2009}.\n", encoding="utf-8")
    return main_tex


def test_force_replaces_an_output_you_named_never_a_bib_or_a_draft(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    (tmp_path / "proj").mkdir()
    main_tex = _project(tmp_path / "proj")
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.bib").write_text("@misc{mine, title={Mine}}\n")
    notes = tmp_path / "notes.tex"
    notes.write_text("my own notes\n")
    notes.chmod(0o600)
    before = _snapshot(tmp_path)
    for target in (other / "mine.bib", tmp_path / "proj" / "refs.bib", main_tex, tmp_path / "proj" / "private.tex"):
        for argv in (["--json", str(target)], ["--fix", FIX, "-o", str(target)]):
            line = _refused(capsys, ["check", str(main_tex), *argv, "--force"])
            assert "--force replaces only an output you named, never a .bib or a file of the draft" in line, line
            assert _snapshot(tmp_path) == before
    assert main(["check", str(main_tex), "--fix", FIX, "-o", str(notes), "--force"]) == 0
    assert "kept the original of notes.tex as notes.tex.bak" in capsys.readouterr().err
    assert b"\\cite{Karpukhin.Oguz.ea.2020}" in notes.read_bytes() and stat.S_IMODE(notes.stat().st_mode) == 0o600
    assert (tmp_path / "notes.tex.bak").read_text() == "my own notes\n"
    assert {k: v for k, v in _snapshot(tmp_path).items() if k in before and k != "notes.tex"} == \
        {k: v for k, v in before.items() if k != "notes.tex"}


def test_an_output_named_like_the_runs_own_backup_is_refused_or_the_backup_moves(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    main_tex = _two_file_project(tmp_path)
    before = _snapshot(tmp_path)
    line = _refused(capsys, ["fill", str(main_tex), "--in-place", "--json", str(tmp_path / "main.tex.bak")])
    assert "is the name of the backup this run keeps of main.tex" in line
    assert _snapshot(tmp_path) == before
    assert main(["check", str(main_tex), "--fix", FIX]) == 0  # main.fixed.tex and sections/intro.fixed.tex
    capsys.readouterr()
    intro_fixed = tmp_path / "sections" / "intro.fixed.tex"
    first = intro_fixed.read_bytes()
    taken = tmp_path / "sections" / "intro.fixed.tex.bak"  # -o: the name the backup of intro.fixed.tex would take
    assert main(["check", str(main_tex), "--fix", "Robertson.Zaragoza.2009=Khattab.Zaharia.2020",
                 "-o", str(taken)]) == 0
    err = capsys.readouterr().err
    assert b"\\cite{Khattab.Zaharia.2020}" in taken.read_bytes() and b"\\documentclass" in taken.read_bytes()
    assert "kept the original of intro.fixed.tex as intro.fixed.tex.bak.1" in err  # what it says is where it is
    assert (tmp_path / "sections" / "intro.fixed.tex.bak.1").read_bytes() == first


def test_a_temporary_file_link_planted_in_the_folder_is_never_followed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    main_tex = _project(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("not to be written\n")
    (tmp_path / ".main.fixed.tex.citefinder-tmp").symlink_to(victim)
    assert main(["check", str(main_tex), "--fix", FIX]) == 0
    assert victim.read_text() == "not to be written\n"
    fixed = tmp_path / "main.fixed.tex"
    assert not fixed.is_symlink() and b"Karpukhin.Oguz.ea.2020" in fixed.read_bytes()


def _full_disk_at(monkeypatch, n: int, root: Path) -> list[str]:
    """os.replace into the project (``root`` and its sections/; not the library kept beside the .bib) fails with a
    full disk at its ``n``-th call (counted again once the list returned is cleared)."""
    import errno

    real, calls = os.replace, []

    def full(src, dst):
        if Path(dst).parent not in (root, root / "sections"):
            return real(src, dst)
        calls.append(dst)
        if len(calls) == n:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", full)
    return calls


@pytest.mark.parametrize("fail_at", [1, 2, 3])  # 3: the record of what was written
def test_a_full_disk_mid_fix_puts_every_file_back_and_says_so(tmp_path, capsys, monkeypatch, fail_at):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    main_tex = _two_file_project(tmp_path)
    assert main(["check", str(main_tex), "--fix", FIX]) == 0
    capsys.readouterr()
    before = _snapshot(tmp_path)
    with monkeypatch.context() as m:
        calls = _full_disk_at(m, fail_at, tmp_path)
        for _ in range(2):  # a retry leaves no .bak.1 either
            calls.clear()
            line = _refused(capsys, ["check", str(main_tex), "--fix", "Robertson.Zaragoza.2009=Khattab.Zaharia.2020"])
            assert "No space left on device" in line and "nothing was changed (no backup was kept)" in line
            assert _snapshot(tmp_path) == before  # the earlier fixed files, no .bak, no temporary or undo file


def test_a_record_of_the_write_that_cannot_be_written_fails_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    main_tex = _project(tmp_path)
    (tmp_path / ".citefinder-written.json").mkdir()  # the record cannot be written (a folder in its way)
    before = _snapshot(tmp_path)
    line = _refused(capsys, ["check", str(main_tex), "--fix", FIX])
    assert ".citefinder-written.json" in line and "nothing was changed" in line
    assert _snapshot(tmp_path) == before and not (tmp_path / "main.fixed.tex").exists()


def test_in_place_is_refused_for_a_draft_that_is_not_latex_and_honoured_for_a_txt_it_inputs(tmp_path, capsys):
    from citefinder.cli.outputs import project_plan
    from citefinder.text.project import read_project

    md = tmp_path / "draft.md"
    md.write_text("Transformers [CITATION].\n")
    shutil.copy(LATEX / "refs.bib", tmp_path / "refs.bib")
    line = _refused(capsys, ["fill", str(md), "--bib", str(tmp_path / "refs.bib"), "--in-place"])
    assert "--in-place rewrites the files of a LaTeX project; draft.md is not one" in line and "-o FILE" in line
    assert md.read_text() == "Transformers [CITATION].\n"
    tex = tmp_path / "main.tex"
    tex.write_text("\\begin{document}\n\\input{notes.txt}\n\\end{document}\n")
    (tmp_path / "notes.txt").write_text("Transformers \\cite{?}.\n")
    project = read_project(tex)
    assert [f.path.name for f in project.files] == ["main.tex", "notes.txt"]
    plan = project_plan(project, [], None, in_place=True)
    plan.target("--in-place", tmp_path / "notes.txt", in_place=True)  # no "choose another file name" here


@pytest.mark.slow
def test_a_full_disk_during_fill_in_place_leaves_no_backup_and_says_nothing_changed(tmp_path, capsys, monkeypatch):
    main_tex = _project(tmp_path)
    before = _snapshot(tmp_path)
    with monkeypatch.context() as m:
        calls = _full_disk_at(m, 2, tmp_path)  # the second file of the in-place write
        for _ in range(2):
            calls.clear()
            code = main(["fill", str(main_tex), "--in-place"])
            err = capsys.readouterr().err.strip().splitlines()[-1]
            assert code == 2 and "nothing was changed (no backup was kept)" in err, err
            now = {k: v for k, v in _snapshot(tmp_path).items() if not k.startswith(".refs.citefinder")}
            assert now == before  # no main.tex.bak, no sections/intro.tex.bak, no .bak.1 on the retry
    assert main(["fill", str(main_tex), "--in-place"]) == 0
    baks = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.bak*"))
    assert "sections/intro.tex.bak" in baks and not [b for b in baks if not b.endswith(".bak")], baks
