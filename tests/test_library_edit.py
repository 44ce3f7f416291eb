"""Editing a stored paper and reviewing an import, on real Chroma, real bm25s and real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from citefinder.config import Settings
from citefinder.errors import LibraryError
from citefinder.index.vectors import dense_search
from citefinder.library.edit import edit_paper, parse_authors, parse_year
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.review import import_reviewed
from citefinder.library.store import Library
from citefinder.types import Paper

pytestmark = pytest.mark.slow

PAPERS = [
    Paper("t:a", "1 Introduction", (), None, abstract="", source="draft.pdf"),
    Paper("t:b", "Attention Is All You Need", ("Ashish Vaswani", "Noam Shazeer"), 2017,
          abstract="The dominant sequence transduction models are based on recurrent networks.", key="vaswani2017"),
    Paper("t:c", "Dense Passage Retrieval for Open-Domain Question Answering", ("Vladimir Karpukhin",), 2020,
          abstract="Open-domain question answering relies on efficient passage retrieval."),
]
NEW_TITLE = "Hedgehog Tunnelling Under Frozen Meadows"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture
def library(tmp_path, embedder) -> Library:
    library = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    assert library.add_papers(PAPERS).added == 3
    return library


def vector(library: Library, doc_id: str) -> np.ndarray:
    for ids, vectors in library.iter_vectors():
        if doc_id in ids:
            return vectors[ids.index(doc_id)]
    raise AssertionError(doc_id)


def test_an_edited_title_is_found_by_bm25_dense_and_dedupe_and_survives_a_reopen(library, tmp_path, embedder):
    assert library.bm25_search("hedgehog tunnelling meadows", 3) == []
    before = vector(library, "t:a")
    paper = edit_paper(library, "t:a", title=NEW_TITLE, authors=["Ann Example", "Bo Sample"], year=2021,
                       abstract="Hedgehogs dig tunnels beneath frozen meadows in winter.", key="example2021")
    assert (paper.title, paper.authors, paper.year, paper.key) == (NEW_TITLE, ("Ann Example", "Bo Sample"), 2021,
                                                                  "example2021")
    assert paper.source == "draft.pdf"  # untouched fields stay
    assert [h.doc_id for h in library.bm25_search("hedgehog tunnelling meadows", 3)] == ["t:a"]
    assert dense_search(library, "hedgehogs digging under frozen meadows", 1)[0].doc_id == "t:a"
    assert not np.allclose(vector(library, "t:a"), before)  # embedded again
    assert library.by_key("example2021").doc_id == "t:a"
    assert library.match(Paper("t:other", NEW_TITLE, ("Ann Example",), 2021)) == "t:a"  # dedupe keys follow
    assert library.match(Paper("t:other", "1 Introduction")) is None
    assert library.count() == 3 and library.problems() == []

    again = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    assert again.get(["t:a"])[0].title == NEW_TITLE
    assert [h.doc_id for h in again.bm25_search("hedgehog tunnelling meadows", 3)] == ["t:a"]


def test_a_metadata_edit_keeps_the_vector_and_clears_fields(library):
    before = vector(library, "t:b")
    paper = edit_paper(library, "t:b", year=None, key=None)
    assert (paper.year, paper.key, paper.title) == (None, None, "Attention Is All You Need")
    assert np.allclose(vector(library, "t:b"), before)
    assert library.by_key("vaswani2017") is None
    assert edit_paper(library, "t:b", year=2017).year == 2017


def test_edits_that_cannot_be_saved_say_why(library):
    with pytest.raises(LibraryError, match="already the key of “Attention Is All You Need”"):
        edit_paper(library, "t:c", key="vaswani2017")
    with pytest.raises(LibraryError, match="no title"):
        edit_paper(library, "t:c", title="   ")
    with pytest.raises(LibraryError, match="cannot be a BibTeX key"):
        edit_paper(library, "t:c", key="two words")
    with pytest.raises(LibraryError, match="No paper 't:gone'"):
        edit_paper(library, "t:gone", title="x")
    with pytest.raises(LibraryError, match="not a year"):
        parse_year("20x1")
    assert library.get(["t:c"])[0] == PAPERS[2]  # nothing changed
    assert parse_year(" 2019 ") == 2019 and parse_year("") is None
    assert parse_authors("Ann Example and Bo  Sample; C. Third\nD. Fourth") == (
        "Ann Example", "Bo Sample", "C. Third", "D. Fourth")


def test_an_import_review_lists_each_duplicate_with_what_it_matched(library, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{vas, title={Attention is all you need}, author={Vaswani, Ashish}, year={2017}}\n"
        "@article{new1, title={A Brand New Paper on Rank Fusion}, author={Doe, Jane}, year={2022}}\n"
        "@article{new2, title={A brand new paper on rank fusion}, author={Doe, Jane}, year={2022}}\n"
        "@article{bad, author={Nobody}}\n"
    )
    review = import_reviewed(library, [bib])
    assert review.report.added == 1 and review.report.duplicates == 1 and review.report.updated == ("vas",)
    got = sorted((d.title, d.matched_title, d.matched_key, d.source) for d in review.duplicates)
    assert got == [
        ("A brand new paper on rank fusion", "A Brand New Paper on Rank Fusion", "new1", "refs.bib"),
        ("Attention is all you need", "Attention Is All You Need", "vas", "refs.bib"),  # a re-import renames
    ]
    assert review.pdf_papers == () and review.more_duplicates == 0
    assert [h.doc_id for h in library.bm25_search("brand new rank fusion", 1)] == list(review.report.added_ids)
