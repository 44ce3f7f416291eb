"""What CiteFinder wrote is known in file coordinates (issue 35, item 6): a cite noted for a file is found in that
file's own text, whatever the project inlines before it (the very start of an ``\\input`` file, a one-line file,
just after an ``\\input`` line), and only in that file; a copy of a filled file, or the file filled again or with a
key fixed, keeps CiteFinder's own cites as its own. Real files, the real writer; no model."""

from __future__ import annotations

from pathlib import Path

from citefinder.text.project import read_project
from citefinder.text.safewrite import WritePlan
from citefinder.text.written import Cite, WrittenCites, carried_cites, cites_written, new_cites, without_written

MAIN = ("\\begin{document}\nOkapi BM25 \\cite{robertson}.\n\\input{sections/intro}\n\\input one\n"
        "Dense retrieval \\citep{?}.\n\\end{document}\n")
INTRO = "\\citet{?} introduced the Transformer.\n"
ONE = "Residual networks \\cite{?}."


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _fill_in_place(root: Path, fills: dict[str, tuple[str, str]]) -> None:
    """Each file's placeholder replaced by a key, through the writer, noting CiteFinder's cites as fill does."""
    plan = WritePlan(draft=root / "main.tex")
    for name, (old, new) in fills.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        plan.target("--in-place", path, in_place=True)
        plan.protect("a file of the draft", [path], editable=True)
        filled = text.replace(old, new)
        plan.put(path, filled, cites=new_cites(text, filled))
    plan.commit()


def test_cites_written_at_the_edges_of_included_files_are_found_in_their_own_files(tmp_path):
    for name, text in (("main.tex", MAIN), ("sections/intro.tex", INTRO), ("one.tex", ONE)):
        _write(tmp_path, name, text)
    _fill_in_place(tmp_path, {"main.tex": ("\\citep{?}", "\\citep{karpukhin}"),
                              "sections/intro.tex": ("\\citet{?}", "\\citet{vaswani}"),
                              "one.tex": ("\\cite{?}", "\\cite{he}")})
    project = read_project(tmp_path / "main.tex")
    written = cites_written(f.path for f in project.files)
    assert written.of(tmp_path / "sections" / "intro.tex") == {Cite("vaswani", "")}  # the file's very start
    user = without_written(project, written)
    assert "\\cite{robertson}" in user  # the user's own
    for cite in ("\\citep{?}", "\\citet{?} introduced", "networks \\cite{?}"):  # CiteFinder's: back to ?
        assert cite in user, cite
    # noted for one file, a cite is CiteFinder's in that file only: the same text elsewhere is the user's
    only_intro = WrittenCites({tmp_path / "sections" / "intro.tex": written.of(tmp_path / "sections" / "intro.tex")})
    other = _write(tmp_path, "other/intro.tex", INTRO.replace("{?}", "{vaswani}"))
    assert not only_intro.holds(other, other.read_text(), 0, "vaswani")
    assert only_intro.holds(tmp_path / "sections" / "intro.tex", INTRO.replace("{?}", "{vaswani}"), 0, "vaswani")


def test_a_later_change_keeps_citefinders_own_cites_its_own():
    original = "A \\cite{?} b \\cite{mine}. Then \\cite{user,also}.\n"
    ours = frozenset({Cite.at(original, original.index("\\cite{mine}"), "mine"),
                      Cite.at(original, original.index("\\cite{user"), "also")})
    filled = original.replace("\\cite{?}", "\\cite{new}")  # a fill just before changes the text before "mine"
    assert Cite.at(filled, filled.index("\\cite{mine}"), "mine") not in ours
    carried = set(carried_cites(original, filled, ours))
    assert Cite.at(filled, filled.index("\\cite{mine}"), "mine") in carried
    fixed = original.replace("\\cite{user,also}", "\\cite{fixed,also}")  # the user's key replaced, ours kept
    assert Cite.at(fixed, fixed.index("\\cite{fixed"), "also") in set(carried_cites(original, fixed, ours))
    assert all(c.key != "fixed" for c in carried_cites(original, fixed, ours))
    marked = original.replace("\\cite{?}", "[CITATION]")  # a plain marker becomes a new cite command
    mine = frozenset({Cite.at(marked, marked.index("\\cite{mine}"), "mine")})
    filled = marked.replace("[CITATION]", "\\cite{new}")
    assert carried_cites(marked, filled, mine) == [Cite.at(filled, filled.index("\\cite{mine}"), "mine")]


def test_a_cite_stays_citefinders_after_words_just_before_it_are_edited(tmp_path):
    """Issue 42 item 10: the record keys a cite on the 60 characters before it; after a few words are edited there,
    the cite is still CiteFinder's, so a check does not learn CiteFinder's pick as the user's."""
    text = ("Okapi BM25 \\cite{robertson}.\nThe Transformer relies entirely on self-attention, dispensing with "
            "recurrence \\cite{?}.\nDense retrieval \\cite{karpukhin}.\n")
    _write(tmp_path, "main.tex", text)
    _fill_in_place(tmp_path, {"main.tex": ("\\cite{?}", "\\cite{vaswani}")})
    path = tmp_path / "main.tex"
    edited = path.read_text().replace("dispensing with recurrence", "doing away with recurrence and convolutions")
    path.write_text(edited)
    written = cites_written([path])
    assert not any(c.before in edited for c in written.of(path))  # the noted text is gone
    assert written.holds(path, edited, edited.index("\\cite{vaswani}"), "vaswani")
    user = without_written(read_project(path), written)
    assert "\\cite{robertson}" in user and "\\cite{karpukhin}" in user and "convolutions \\cite{?}" in user
    # the user cites the same key again elsewhere: that one is the user's, the one most like the noted text ours
    again = edited + "Self-attention alone \\cite{vaswani} suffices.\n"
    ours = written.holds(path, again, again.index("\\cite{vaswani}"), "vaswani")
    theirs = written.holds(path, again, again.rindex("\\cite{vaswani}"), "vaswani")
    assert ours and not theirs
    # a copy of the edited file filled again keeps the edited cite CiteFinder's
    refilled = edited.replace("\\cite{karpukhin}", "\\cite{karpukhin,dpr}")
    carried = carried_cites(edited, refilled, written.of(path))
    assert [c.key for c in carried] == ["vaswani"]


def test_only_the_noted_keys_are_ever_citefinders():
    text = "A \\cite{mine} b \\cite{user}. Then \\cite{user,mine}.\n"
    noted = [Cite.at(text, text.index("\\cite{mine}"), "mine")]
    from citefinder.text.written import owned

    assert owned(noted, text) == {(text.index("\\cite{mine}"), "mine")}  # the exact one; the second is the user's
    assert owned(noted, text.replace("A ", "Another word ")) == {(text.index("\\cite{mine}") + 11, "mine")}
    assert owned([], text) == frozenset()
