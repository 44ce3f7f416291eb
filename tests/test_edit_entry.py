"""The editor can change every field a paper has: a field edited in the form is changed inside the user's own
.bib entry (the rest of its text kept), and the whole entry can be edited as text. Real Chroma and MiniLM."""

from __future__ import annotations

from dataclasses import replace

import pytest

from citefinder.config import Settings
from citefinder.errors import LibraryError
from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.edit import edit_bibtex, edit_paper
from citefinder.library.store import Library
from citefinder.types import Paper

pytestmark = pytest.mark.slow

ENTRY = ("@Inproceedings{pro:LeCun98,\n  author =   {Y. LeCun and L. Bottou},\n"
         "  title =    {{Gradient-Based Learning Applied to Document Recognition}},\n"
         "  booktitle =    {Proceedings of the IEEE, 86(11)},\n  year =     {1998},\n  pages =    {2278-2324},\n}")


@pytest.fixture
def library(tmp_path) -> Library:
    bib = tmp_path / "refs.bib"
    bib.write_text(f"% mine\n{ENTRY}\n", encoding="utf-8")
    library = Library.open(Settings(library=tmp_path / "lib"))
    assert library.import_files([bib]).added == 1
    return library


def test_a_field_edited_in_the_form_changes_only_that_field_of_the_entry(library):
    paper = library.by_key("pro:LeCun98")
    assert paper is not None and paper.bibtex == ENTRY
    saved = edit_paper(library, paper.doc_id, year=1999, doi="10.1109/5.726791", venue="Proc. IEEE", key="lecun98")
    assert (saved.year, saved.doi, saved.venue, saved.key) == (1999, "10.1109/5.726791", "Proc. IEEE", "lecun98")
    assert saved.bibtex == (ENTRY.replace("{pro:LeCun98,", "{lecun98,").replace("{1998}", "{1999}")
                            .replace("{Proceedings of the IEEE, 86(11)}", "{Proc. IEEE}")
                            .replace("{2278-2324},\n}", "{2278-2324},\n  doi = {10.1109/5.726791}\n}"))
    assert papers_to_bibtex([saved])[0] == saved.bibtex + "\n"


def test_the_whole_entry_can_be_edited_as_text(library):
    paper = library.by_key("pro:LeCun98")
    text = ENTRY.replace("pages =    {2278-2324},", "pages =    {2278--2324},\n  number = {11},")
    saved = edit_bibtex(library, paper.doc_id, text)
    assert saved.doc_id == paper.doc_id and saved.bibtex == text and saved.title == paper.title
    assert library.get([paper.doc_id])[0].bibtex == text
    with pytest.raises(LibraryError, match="exactly one entry"):
        edit_bibtex(library, paper.doc_id, text + "\n" + text.replace("pro:LeCun98", "other"))
    with pytest.raises(LibraryError, match="exactly one entry"):
        edit_bibtex(library, paper.doc_id, "not bibtex at all")


def test_changed_fields_name_what_an_edit_did() -> None:
    from citefinder.library.edit import changed_fields

    old = Paper("a", "Title", ("A B",), 2020, url=None, doi="10.1/x")
    assert changed_fields(old, replace(old, url="https://x.org")) == ["URL added"]
    assert changed_fields(old, replace(old, doi=None, year=2021)) == ["year changed", "DOI removed"]
    assert changed_fields(old, old) == []


def test_the_export_reads_each_paper_as_the_library_holds_it_now() -> None:
    from citefinder.types import Candidate, Query, Selection, Slot, SlotResult
    from citefinder.ui.exports import bibliography

    then = Paper("p1", "Adam", ("Diederik Kingma",), 2014, key="kingma2014adam",
                 bibtex="@article{kingma2014adam,\n  title={Adam},\n  year={2014}\n}")
    now = replace(then, url="https://arxiv.org/abs/1412.6980",
                  bibtex="@article{kingma2014adam,\n  title={Adam},\n  year={2014},\n  url={https://arxiv.org/abs/1412.6980}\n}")
    slot = Slot(0, 0, 10, "[CITATION]", "Adam [CITATION].", "Adam [CITATION].")
    result = SlotResult(slot, Query("Adam"), (Candidate(then),), Selection("found", then, 0.9, "threshold"), ())
    stale, _ = bibliography([result], {0: "p1"})
    fresh, _ = bibliography([result], {0: "p1"}, current=lambda ids: [now] if ids == ["p1"] else [])
    assert "url" not in stale and "url={https://arxiv.org/abs/1412.6980}" in fresh
