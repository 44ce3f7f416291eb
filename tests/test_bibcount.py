"""One count of a .bib's entries (issue 48 item 3): the Cite page's count of an upload (before any import) is the
number of papers the import stores, which the Library, *Complete* and Check pages count."""

from __future__ import annotations

from pathlib import Path

import pytest

from citefinder.library.bibcount import BibCount, count_file, count_library
from citefinder.ui.state import PairedBib

BIB = Path(__file__).parent / "data" / "bibcount.bib"


def test_an_upload_is_counted_as_the_import_stores_it() -> None:
    # 11 entries in the file: one never closes; srivastava2014 is given twice (BibTeX reads the first);
    # "attention" is Vaswani's paper by DOI, "adam-preprint" is Kingma's by title, author and year;
    # LeCun's and Goodfellow's "Deep Learning" are two works (other first author, years apart)
    assert count_file(BIB) == BibCount(papers=7, entries=9, unread=1)


def test_the_words_say_the_papers_first_and_the_repeats_when_there_are_any() -> None:
    assert BibCount(61, 70).words() == "61 papers (70 entries: 9 repeat another entry's work)"
    assert BibCount(1, 2).words() == "1 paper (2 entries: 1 repeats another entry's work)"
    assert BibCount(61, 61).words() == "61 papers"


def test_the_cite_page_and_the_saved_draft_keep_the_repeats() -> None:
    paired = PairedBib.from_count("refs.bib", "/tmp/x", BibCount(61, 70))
    assert paired is not None and paired.words() == "61 papers (70 entries: 9 repeat another entry's work)"
    assert PairedBib.from_dict(paired.to_dict()) == paired
    old = PairedBib.from_dict({"name": "refs.bib", "folder": "/tmp/x", "entries": 61})  # a draft saved before
    assert old is not None and old.words() == "61 papers"


@pytest.mark.slow
def test_the_library_of_the_file_holds_as_many_papers(tmp_path) -> None:
    from citefinder.config import Settings
    from citefinder.library.link import link_file
    from citefinder.library.store import Library

    library = Library.open(Settings(library=tmp_path / "lib"))
    link_file(library, BIB)
    assert library.count() == count_file(BIB).papers == 7
    assert count_library(library) == BibCount(papers=7, entries=9)
