"""The sample library is a sample: marked, hidden from suggestions once the user's own papers exist (one
setting brings it back), removable at once, counted apart; the user's own .bib entry of a paper the sample
also holds makes that paper theirs. Real Chroma, bm25s and MiniLM."""

from __future__ import annotations

import shutil

import pytest

from app_support import SAMPLE_SIZE, build_sample_library
from citefinder.config import Settings
from citefinder.library import sample
from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.store import Library
from citefinder.pipeline.pipeline import Pipeline

pytestmark = pytest.mark.slow

OWN_ATTENTION = ("@InProceedings{vaswani17,\n  author    = {Vaswani, Ashish and others},\n"
                 "  title     = {Attention is All you Need},\n  booktitle = {NIPS},\n  year      = 2017,\n"
                 "  pages     = {5998--6008},\n}")
OWN_HEDGEHOG = ("@Article{hog21,\n  author = {Prickle, Ann},\n  title = {Hedgehogs Tunnelling Under Frozen Meadows},\n"
                "  journal = {Journal of Small Mammals},\n  year = {2021},\n  number = {CMU-CS-96-118},\n}")


@pytest.fixture
def library(tmp_path, tmp_path_factory) -> Library:
    built = build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")
    shutil.copytree(built, tmp_path / "lib", ignore=shutil.ignore_patterns("workspace"))
    return Library.open(Settings(library=tmp_path / "lib"))


def test_the_sample_alone_is_suggested_then_hidden_once_own_papers_exist(library, tmp_path):
    assert sample.counts(library) == sample.Counts(0, SAMPLE_SIZE)
    assert sample.hidden_ids(library) == frozenset()  # nothing of the user's yet: the sample is what there is
    question = "probabilistic relevance framework BM25 and beyond"
    first = Pipeline(library.settings, library).search(question).candidates[0].paper
    assert sample.SAMPLE_FILE == first.source

    bib = tmp_path / "refs.bib"
    bib.write_text(f"% mine\n{OWN_ATTENTION}\n\n{OWN_HEDGEHOG}\n", encoding="utf-8")
    report = library.import_files([bib])
    assert (report.added, report.duplicates, len(report.updated)) == (1, 0, 1)  # the sample's work became the user's
    assert sample.counts(library) == sample.Counts(2, SAMPLE_SIZE - 1)  # the duplicate became the user's

    attention = library.by_key("vaswani17")
    assert attention is not None and attention.source == "refs.bib" and attention.bibtex == OWN_ATTENTION
    assert papers_to_bibtex([attention])[0] == OWN_ATTENTION + "\n"  # their entry, byte for byte

    hidden = Pipeline(library.settings, library)
    assert hidden.exclude == frozenset(sample.sample_ids(library))
    shown = {c.paper.source for c in hidden.search(question).candidates}
    assert shown == {"refs.bib"}
    for trace in hidden.search(question).traces:
        assert not {h.doc_id for h in trace.top} & hidden.exclude
    back = Pipeline(library.settings.with_overrides(suggest_sample=True), library)
    assert back.search(question).candidates[0].paper == first

    again = Library.open(Settings(library=library.path))  # what is a sample survives reopening
    assert sample.counts(again) == sample.Counts(2, SAMPLE_SIZE - 1)
    assert sample.remove_sample(again) == SAMPLE_SIZE - 1
    assert sample.counts(again) == sample.Counts(2, 0) and again.by_key("hog21") is not None


def test_a_lookup_reads_a_year_and_an_author(library):
    from citefinder.library.find import find_papers, read_query

    assert read_query("LeCun 1998 gradient").year == 1998
    assert read_query("LeCun 1998 gradient").names == ("lecun", "gradient")
    found = find_papers(library, "LeCun 1998", 3)
    assert found[0].key == "lecun1998gradient"
    assert [p.key for p in find_papers(library, "LeCun deep", 2)][0] == "lecun2015deep"
    assert all(p.year == 1998 for p in find_papers(library, "1998", 5))
    assert find_papers(library, "   ") == []
