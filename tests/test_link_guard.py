"""A linked .bib that suddenly reads as nothing (a half-written export) or loses most of its entries is
not a mass deletion; a key deleted while the same work stays under another key is followed; a key
given to two entries is reported as what was kept and why (issue 21). Real Chroma, bm25s, MiniLM."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.link import link_file, sync_all
from citefinder.library.store import Library

pytestmark = pytest.mark.slow

LATEX = Path(__file__).parent / "data" / "latex"
ATTENTION = """
@inproceedings{attention,
  title     = {Attention is all you need},
  author    = {Vaswani, Ashish and Shazeer, Noam},
  year      = {2017},
}
"""


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def _linked(tmp_path: Path, embedder: Embedder, text: str | None = None) -> tuple[Library, Path]:
    bib = tmp_path / "refs.bib"
    bib.write_text(text if text is not None else (LATEX / "refs.bib").read_text(encoding="utf-8"), encoding="utf-8")
    library = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    link_file(library, bib)
    return library, bib


def test_an_empty_linked_file_removes_nothing_until_confirmed(tmp_path, embedder, capsys):
    library, bib = _linked(tmp_path, embedder)
    assert library.count() == 24
    saved = bib.read_bytes()
    bib.write_text("")  # `: > zotero.bib`, or an export caught half-written
    (report,) = sync_all(library)
    assert report.held and report.removed == 0 and library.count() == 24
    assert "now reads as 0 entries where it held 24" in report.summary()
    assert "--accept-removals" in report.summary()
    # held, not recorded: the file coming back is "unchanged" and nothing is embedded again
    bib.write_bytes(saved)
    (report,) = sync_all(library)
    assert not report.changed and library.count() == 24

    # losing more than half at once is held too; the user confirms with `library link --accept-removals`
    text = saved.decode("utf-8")
    bib.write_text(text[: text.index("@inproceedings{Brown.Mann.ea.2020")], encoding="utf-8")  # 3 entries left
    (report,) = sync_all(library)
    assert report.held and library.count() == 24
    assert main(["library", "link", "--accept-removals", str(bib), "--library", str(tmp_path / "lib")]) == 0
    out = capsys.readouterr().out
    assert "21 removed" in out
    assert Library.open(Settings(library=tmp_path / "lib"), embedder=embedder).count() == 3


def test_fill_says_what_happened_to_an_empty_bib(tmp_path, capsys):
    tex, bib = tmp_path / "paper.tex", tmp_path / "refs.bib"
    shutil.copy(LATEX / "paper.tex", tex)
    shutil.copy(LATEX / "refs.bib", bib)
    assert main(["fill", str(tex), "--bib", str(bib)]) == 0
    capsys.readouterr()
    bib.write_text("")
    assert main(["fill", str(tex), "--bib", str(bib)]) == 2
    err = capsys.readouterr().err
    assert "now reads as 0 entries where it held 24" in err and "keeps all 24 papers" in err
    assert Library.open(Settings(library=tmp_path / ".refs.citefinder")).count() == 24


def test_a_deleted_duplicate_key_is_followed_to_the_kept_one(tmp_path, embedder):
    from citefinder.library.link import keys_by_doc

    text = (LATEX / "refs.bib").read_text(encoding="utf-8")
    library, bib = _linked(tmp_path, embedder, ATTENTION + text)  # `attention` first: it names the stored paper
    assert library.by_key("attention") is not None
    doc_id = library.by_key("attention").doc_id
    assert keys_by_doc(library, bib)[doc_id] == "attention"
    bib.write_text(text, encoding="utf-8")  # the user deletes the duplicate `attention`
    (report,) = sync_all(library)
    assert report.removed == 0 and report.updated == 1
    assert library.by_key("attention") is None
    assert library.by_key("Vaswani.Shazeer.ea.2017").doc_id == doc_id
    assert keys_by_doc(library, bib)[doc_id] == "Vaswani.Shazeer.ea.2017"


def test_a_key_given_to_two_entries_is_a_note_not_a_read_failure(tmp_path, embedder):
    text = (LATEX / "refs.bib").read_text(encoding="utf-8")
    twice = text + "\n@article{Kingma.Ba.2015, title = {Another paper under the same key}, year = {2020}}\n"
    library, bib = _linked(tmp_path, embedder, twice)
    report = link_file(library, bib)
    assert report.failures == ()
    (note,) = report.notes
    assert "key 'Kingma.Ba.2015' names 2 entries" in note and '("Adam: A Method for Stochastic Optimization")' in note
    assert '"Another paper under the same key"' in note and "not imported" in note


def test_a_crossref_child_and_its_parent_leave_the_stored_paper_alone(tmp_path, embedder):
    # the child inherits its parent's title: both entries read as one work, stored once
    crossref = Path(__file__).parent / "hostile" / "crossref.bib"
    library = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    first = library.import_files([crossref])
    assert (first.added, first.duplicates) == (1, 1)
    (stored,) = library.iter_papers()
    again = library.import_files([crossref])
    assert (again.added, again.duplicates) == (0, 2)
    assert list(library.iter_papers()) == [stored]  # the re-import did not give it the parent's key
    assert stored.key == "child"
