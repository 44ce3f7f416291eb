"""The one writer (citefinder.text.safewrite, issue 27 items 3 and 4): a multi-file write is all or nothing (every
file encoded before the first is replaced, every encoding failure said with the file's real encoding and the key),
a replaced file keeps its mode, a read-only one is refused unless forced, backups never overwrite older ones."""

from __future__ import annotations

import os
import stat

import pytest

from citefinder.errors import InputError
from citefinder.text import written
from citefinder.text.safewrite import WritePlan, atomic_write


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
