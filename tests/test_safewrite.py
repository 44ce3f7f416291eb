"""The one writer (citefinder.text.safewrite, issue 27 items 3 and 4): a multi-file write is all or nothing (every
file encoded before the first is replaced, every encoding failure said with the file's real encoding and the key),
a replaced file keeps its mode, a read-only one is refused unless forced, backups never overwrite older ones."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from citefinder.errors import InputError
from citefinder.text import written
from citefinder.text.safewrite import WritePlan, atomic_write, resolve


def _mode(p) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_an_encoding_failure_stops_the_write_before_any_file_is_replaced(tmp_path):
    a, b, c = tmp_path / "a.tex", tmp_path / "latin.tex", tmp_path / "latin2.tex"
    a.write_text("one \\cite{?}\n", encoding="utf-8")
    b.write_bytes("M\u00e9thode \\cite{?}\n".encode("latin-1"))
    c.write_bytes("Na\u00efve \\cite{?}\n".encode("latin-1"))
    before = {p: p.read_bytes() for p in (a, b, c)}
    plan = WritePlan(draft=a)
    plan.protect("the draft", [a, b, c], editable=True)
    for p in (a, b, c):
        plan.target("--in-place", p, in_place=True)
    plan.put(a, "one \\cite{smith2020}\n")
    plan.put(b, "M\u00e9thode \\cite{do\u011fan2021}\n", codec="cp1252")
    plan.put(c, "Na\u00efve \\cite{y\u0131lmaz2019}\n", codec="cp1252")
    with pytest.raises(InputError) as e:
        plan.commit()
    message = str(e.value)
    assert "latin.tex is written in Latin-1" in message and "do\u011fan2021" in message  # the real encoding
    assert "latin2.tex" in message and "y\u0131lmaz2019" in message  # every failure, not the first only
    assert "Nothing was written" in message
    assert {p: p.read_bytes() for p in (a, b, c)} == before  # not even a.tex, planned first
    assert not list(tmp_path.glob("*.bak*")) and not list(tmp_path.glob(".*tmp"))


def test_a_replaced_file_keeps_its_mode_and_a_read_only_file_needs_force(tmp_path):
    private, locked = tmp_path / "private.tex", tmp_path / "locked.tex"
    private.write_text("x [CITATION]\n")
    locked.write_text("y [CITATION]\n")
    private.chmod(0o600)
    locked.chmod(0o444)
    plan = WritePlan(draft=private)
    plan.protect("the draft", [private, locked], editable=True)
    plan.target("--in-place", private, in_place=True)
    with pytest.raises(InputError, match="is read-only.*--force"):
        plan.target("--in-place", locked, in_place=True)
    plan.put(private, "x \\cite{a}\n")
    (path, bak), = plan.commit()
    assert path == private.resolve() and _mode(private) == 0o600 and private.read_text() == "x \\cite{a}\n"
    assert bak is not None and bak.read_text() == "x [CITATION]\n" and _mode(bak) == 0o600

    forced = WritePlan(draft=private, force=True)
    forced.protect("the draft", [locked], editable=True)
    forced.target("--in-place", locked, in_place=True)
    forced.put(locked, "y \\cite{b}\n")
    forced.commit()
    assert locked.read_text() == "y \\cite{b}\n" and _mode(locked) == 0o444


def test_a_backup_never_overwrites_an_older_one(tmp_path):
    f = tmp_path / "main.tex"
    for text in ("first", "second", "third"):
        f.write_text(text)
        plan = WritePlan(draft=f)
        plan.protect("the draft", [f], editable=True)
        plan.target("--in-place", f, in_place=True)
        plan.put(f, f"{text} filled")
        plan.commit()
    assert (tmp_path / "main.tex.bak").read_text() == "first"
    assert (tmp_path / "main.tex.bak.1").read_text() == "second"
    assert (tmp_path / "main.tex.bak.2").read_text() == "third"


def test_links_and_other_spellings_of_a_protected_file_are_refused(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{a, title={A}}\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sym.bib").symlink_to(bib)
    os.link(bib, tmp_path / "hard.bib")
    plan = WritePlan()
    plan.protect("your bibliography", [bib])
    for name in ("sym.bib", "hard.bib", "sub/../refs.bib", "refs.bib"):
        with pytest.raises(InputError, match="is your bibliography"):
            plan.target("-o", tmp_path / name)
    with pytest.raises(InputError, match="is a folder"):
        plan.target("-o", tmp_path / "sub")
    plan.protect_folder("the library folder", tmp_path / "sub")
    with pytest.raises(InputError, match="inside the library folder"):
        plan.target("--json", tmp_path / "sub" / "x.json")


def test_an_output_is_replaced_only_while_it_is_what_citefinder_wrote_for_this_draft(tmp_path):
    draft, other, out = tmp_path / "a.tex", tmp_path / "b.tex", tmp_path / "out.tex"
    draft.write_text("a")
    other.write_text("b")
    plan = WritePlan(draft=draft)
    plan.target("-o", out)
    plan.put(out, "filled a")
    plan.commit()
    assert written.is_ours(out.resolve(), draft.resolve())
    WritePlan(draft=draft).target("-o", out)  # CiteFinder's own output for this draft: may be replaced
    with pytest.raises(InputError, match="not a file CiteFinder wrote for this draft"):
        WritePlan(draft=other).target("-o", out)
    out.write_text("the user edited it")
    with pytest.raises(InputError, match="not a file CiteFinder wrote for this draft"):
        WritePlan(draft=draft).target("-o", out)


def test_atomic_write_keeps_the_mode(tmp_path):
    f = tmp_path / "state.json"
    f.write_text("{}")
    f.chmod(0o600)
    atomic_write(f, b'{"a": 1}')
    assert f.read_bytes() == b'{"a": 1}' and _mode(f) == 0o600


# --- issue 35: backups reserved, temporary files never followed, failures undone, --force, resolution ------------


def _files(folder) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), _mode(p)) for p in sorted(folder.rglob("*")) if p.is_file()}


def _in_place_plan(tmp_path, names=("main.tex", "big.tex", "small.tex")):
    paths = [tmp_path / n for n in names]
    for i, p in enumerate(paths):
        p.write_text(f"file {i} [CITATION]\n")
    paths[1].chmod(0o600)
    plan = WritePlan(draft=paths[0])
    plan.protect("the draft", paths, editable=True)
    for p in paths:
        plan.target("--in-place", p, in_place=True)
        plan.put(p, p.read_text().replace("[CITATION]", "\\cite{a}"))
    return plan, paths


def test_an_output_named_like_a_backup_of_this_run_is_refused_or_the_backup_moves(tmp_path):
    plan, (main_tex, *_) = _in_place_plan(tmp_path)
    with pytest.raises(InputError, match="is the name of the backup this run keeps of main.tex"):
        plan.target("--json", tmp_path / "main.tex.bak")
    # the other order: an output planned first takes the name, the backup made later moves to the next one
    fixed = tmp_path / "x.fixed.tex"
    first = WritePlan(draft=main_tex)  # a first --fix: x.fixed.tex is CiteFinder's own output
    first.target("the fixed copy of x.tex", fixed, keep=True)
    first.put(fixed, "the earlier fix")
    first.commit()
    plan = WritePlan(draft=main_tex)
    plan.target("-o", tmp_path / "x.fixed.tex.bak")
    plan.put(tmp_path / "x.fixed.tex.bak", "main fixed")
    plan.target("the fixed copy of x.tex", fixed, keep=True)
    plan.put(fixed, "second fix")
    done = dict(plan.commit())
    assert (tmp_path / "x.fixed.tex.bak").read_text() == "main fixed"  # the output, not overwritten by a backup
    assert done[fixed.resolve()] == (tmp_path / "x.fixed.tex.bak.1").resolve()
    assert (tmp_path / "x.fixed.tex.bak.1").read_text() == "the earlier fix" and fixed.read_text() == "second fix"


def test_the_temporary_file_is_made_exclusively_never_through_a_planted_link(tmp_path, monkeypatch):
    import itertools
    import tempfile

    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    out = tmp_path / "main.cited.tex"
    (tmp_path / ".main.cited.tex.citefinder-tmp").symlink_to(victim)  # the name the writer used to use
    names = itertools.chain(["planted", "planted", "fresh"], tempfile._get_candidate_names())
    (tmp_path / ".main.cited.tex.planted.citefinder-tmp").symlink_to(victim)  # even the random name, guessed
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    plan = WritePlan(draft=tmp_path / "main.tex")
    plan.target("-o", out)
    plan.put(out, "filled\n")
    plan.commit()
    assert victim.read_text() == "the user's file\n" and out.read_text() == "filled\n" and not out.is_symlink()
    assert not list(tmp_path.glob(".main.cited.tex.fresh*"))  # the temporary file itself is gone (renamed)


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])
def test_a_full_disk_mid_commit_puts_every_file_back_and_removes_its_backups(tmp_path, monkeypatch, fail_at):
    import errno

    plan, paths = _in_place_plan(tmp_path)
    new = tmp_path / "results.json"
    plan.target("--json", new)
    plan.put(new, b"{}")
    before = _files(tmp_path)
    real, calls = os.replace, []

    def full(src, dst):  # the rename of the fail_at-th file (4: the record of what was written) hits a full disk
        calls.append(dst)
        if len(calls) == fail_at:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", full)
    for _ in range(2):  # and a retry: no .bak.1
        calls.clear()
        with pytest.raises(InputError) as e:
            plan.commit()
        assert "No space left on device" in str(e.value) and "nothing was changed (no backup was kept)" in str(e.value)
        assert _files(tmp_path) == before  # every file as it was, no .bak, no temporary or undo file, no record
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    monkeypatch.setattr(os, "replace", real)
    done = dict(plan.commit())
    assert all(done[p.resolve()] == p.resolve().with_name(p.name + ".bak") for p in paths)


def test_a_full_disk_while_staging_changes_nothing(tmp_path, monkeypatch):
    import errno

    plan, paths = _in_place_plan(tmp_path)
    before = _files(tmp_path)
    real, n = os.fsync, []

    def full(fd):
        n.append(fd)
        if len(n) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InputError, match="big.tex: No space left on device; nothing was changed"):
        plan.commit()
    assert _files(tmp_path) == before and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_record_of_what_was_written_is_part_of_the_write(tmp_path):
    plan, paths = _in_place_plan(tmp_path)
    (tmp_path / written.MANIFEST).mkdir()  # the record cannot be written (here: a folder stands in its way)
    before = _files(tmp_path)
    with pytest.raises(InputError, match=r"\.citefinder-written\.json.*nothing was changed"):
        plan.commit()
    assert _files(tmp_path) == before  # the files written before it were put back: no cite unrecorded


def test_a_failure_that_cannot_be_undone_says_where_each_original_is(tmp_path, monkeypatch):
    import errno

    plan, paths = _in_place_plan(tmp_path)
    real, calls = os.replace, []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 2 or len(calls) == 3:  # the second file fails, then putting the first back fails too
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(InputError) as e:
        plan.commit()
    message = str(e.value)
    assert "Cannot write" in message and "big.tex" in message and "nothing was changed" not in message
    assert f"{paths[0].resolve()} holds the new text" in message and "its original is" in message
    original = message.split("its original is ")[1].split(";")[0].rstrip(".")
    assert Path(original).read_text() == "file 0 [CITATION]\n"  # where it says, the original is


def test_force_replaces_only_an_output_you_named_and_keeps_a_backup(tmp_path):
    draft, bib, mine, notes = tmp_path / "main.tex", tmp_path / "refs.bib", tmp_path / "mine.bib", tmp_path / "n.txt"
    draft.write_text("d")
    bib.write_text("@misc{a}")
    mine.write_text("@misc{b}")
    notes.write_text("my notes")
    plan = WritePlan(draft=draft, force=True)
    plan.protect("the draft", [draft])
    plan.protect("your bibliography", [bib])
    with pytest.raises(InputError, match="is the draft.*--force replaces only an output you named, never a .bib"):
        plan.target("--json", draft)
    for b in (bib, mine):  # the draft's .bib, and an unrelated one elsewhere
        with pytest.raises(InputError, match="never replaced, even with --force|is your bibliography"):
            plan.target("--json", b)
    plan.target("--json", notes)
    plan.put(notes, b"{}")
    (path, bak), = plan.commit()
    assert notes.read_bytes() == b"{}" and bak == notes.resolve().with_name("n.txt.bak")
    assert bak.read_text() == "my notes"
    assert (draft.read_text(), bib.read_text(), mine.read_text()) == ("d", "@misc{a}", "@misc{b}")


def test_dot_dot_after_a_linked_folder_goes_where_the_system_goes(tmp_path):
    proj, deep = tmp_path / "proj", tmp_path / "elsewhere" / "deep"
    proj.mkdir()
    deep.mkdir(parents=True)
    (proj / "out").symlink_to(Path("..") / "elsewhere" / "deep")
    target = proj / "out" / ".." / "r.json"
    assert resolve(target) == (tmp_path / "elsewhere" / "r.json").resolve() == Path(os.path.realpath(target))
    plan = WritePlan()
    plan.target("--json", target)
    plan.put(target, b"{}")
    plan.commit()
    assert (tmp_path / "elsewhere" / "r.json").read_bytes() == b"{}" and not (proj / "r.json").exists()
    protected = WritePlan()
    protected.protect("your bibliography", [tmp_path / "elsewhere" / "r.json"])
    with pytest.raises(InputError, match="is your bibliography"):
        protected.target("--json", target)


def test_a_model_folder_is_new_empty_or_one_citefinder_made(tmp_path):
    lib, examples, model, mine = tmp_path / "lib", tmp_path / "ex.jsonl", tmp_path / "model", tmp_path / "mine"
    for f in (lib, model, mine):
        f.mkdir()
    examples.write_text("{}")
    (model / "model_card.json").write_text('{"citefinder_reranker": 1}')
    (mine / "thesis.tex").write_text("mine")
    plan = WritePlan()
    plan.protect("an input of this run", [examples])
    plan.protect_folder("the library folder", lib, inside_ok=True)

    def ours(folder):
        return (folder / "model_card.json").is_file()

    for path, why in ((examples, "is a file"), (tmp_path, "holds ex.jsonl"), (lib, "is the library folder"),
                      (mine, "not a folder CiteFinder made")):
        with pytest.raises(InputError, match=why):
            plan.target_folder("-o", path, ours=ours)
    assert plan.target_folder("-o", model, ours=ours) == model.resolve()
    assert plan.target_folder("-o", lib / "rerankers" / "new", ours=ours) == (lib / "rerankers" / "new").resolve()


def test_a_folder_is_replaced_whole_and_kept_when_the_rename_fails(tmp_path, monkeypatch):
    import errno

    from citefinder.text.staging import new_folder, replace_folder

    out = tmp_path / "model"
    out.mkdir()
    (out / "weights").write_text("old")
    staged = new_folder(out)
    assert staged.name == "model"  # a card written into it keeps the model's name
    (staged / "weights").write_text("new")
    real = os.rename

    def fail(src, dst):
        if Path(src) == staged:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", fail)
    with pytest.raises(InputError, match="the earlier folder is as it was"):
        replace_folder(staged, out)
    assert (out / "weights").read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["model"]
    monkeypatch.setattr(os, "rename", real)
    staged = new_folder(out)
    (staged / "weights").write_text("new")
    replace_folder(staged, out)
    assert (out / "weights").read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["model"]


def test_a_source_file_names_its_real_encoding_when_a_key_does_not_fit(tmp_path):
    from citefinder.text.project import SourceFile

    latin = SourceFile(tmp_path / "latin.tex", "M\u00e9thode \\cite{a}\n", "cp1252")
    with pytest.raises(InputError, match=r"latin.tex is written in Latin-1 \(ISO-8859-1\).*do\u011fan2021"):
        latin.encode("M\u00e9thode \\cite{do\u011fan2021}\n")
    windows = SourceFile(tmp_path / "w.tex", "\u201cquoted\u201d \\cite{a}\n", "cp1252")
    with pytest.raises(InputError, match="w.tex is written in Windows-1252"):
        windows.encode("\u201cquoted\u201d \\cite{do\u011fan2021}\n")


def test_folders_made_for_an_output_are_removed_when_its_write_fails(tmp_path, monkeypatch):
    import errno

    out = tmp_path / "bench" / "out" / "r.json"
    plan = WritePlan()
    plan.target("--out", out, parents=True)
    plan.put(out, b"{}")
    assert not (tmp_path / "bench").exists()  # nothing is made while planning

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(InputError, match="nothing was changed"):
        plan.commit()
    assert list(tmp_path.iterdir()) == []
