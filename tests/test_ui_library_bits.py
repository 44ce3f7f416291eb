"""The Library page's small parts (issue 37, items 9 and 10): the duplicates listed are the ones the import counts,
two paired files named alike are told apart, the papers table has a key and whose, no temp folder in a message."""

from __future__ import annotations

from pathlib import Path

from citefinder.library.review import Duplicate, ImportReview
from citefinder.types import ImportReport, Paper
from citefinder.ui.library_view import skipped_duplicates, untemp
from citefinder.ui.paired_view import distinct_names
from citefinder.ui.tables import papers_frame


def _dup(title: str, key: str) -> Duplicate:
    return Duplicate("mine.bib", title, f"id:{key}", title, key)


def test_the_records_that_updated_a_paper_are_not_listed_as_skipped() -> None:
    listed = (_dup("A", "a"), _dup("B", "b"), _dup("C", "c"), _dup("A", "a"))  # A twice in the file
    review = ImportReview(ImportReport(added=1, duplicates=2, updated=("a", "b")), listed)
    skipped = skipped_duplicates(review)
    assert [d.title for d in skipped] == ["C", "A"]  # the second A is a duplicate; the first updated A
    assert len(skipped) == review.report.duplicates
    assert skipped_duplicates(ImportReview(ImportReport(duplicates=0, updated=("a",)), listed[:1])) == []


def test_two_paired_files_named_alike_are_told_apart() -> None:
    one, two, other = Path("paired/aaaa1111"), Path("paired/bbbb2222"), Path("paired/cccc3333")
    names = distinct_names({one: ("refs.bib", 1_700_000_000.0), two: ("refs.bib", 1_700_090_000.0),
                            other: ("thesis.bib", 1_700_000_000.0)})
    assert names[other] == "thesis.bib"
    assert names[one].startswith("refs.bib (paired ") and names[one] != names[two]
    same = distinct_names({one: ("refs.bib", 1_700_000_000.0), two: ("refs.bib", 1_700_000_000.0)})
    assert same[one] != same[two] and "aaaa1111" in same[one] and "bbbb2222" in same[two]


def test_the_papers_table_has_the_key_and_whose() -> None:
    papers = [Paper("d1", "Attention", key="vaswani2017"), Paper("d2", "GANs")]
    frame = papers_frame(papers, {"d1": "yours · paired with refs.bib", "d2": "sample"})
    assert list(frame.columns[:3]) == ["key", "title", "whose"]
    assert frame["key"].tolist() == ["vaswani2017", ""] and frame["whose"].tolist()[1] == "sample"
    assert "whose" not in papers_frame(papers).columns


def test_messages_name_the_users_file_not_the_temp_folder() -> None:
    tmp = "/tmp/citefinder-upload-x1y2"
    assert untemp(f"{tmp}/0/random5mb.pdf is not a readable PDF", tmp) == "random5mb.pdf is not a readable PDF"
    assert untemp(f"read {tmp}/12/refs.bib", tmp) == "read refs.bib"
