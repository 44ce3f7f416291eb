"""A literature library folder as a source (citefinder.sources.local): a real library folder built here (papers
embedded and papers still queued), looked up by DOI, arXiv id and title through indexed queries, searched with
its BM25 index, and never written: its bytes are the same after every read, and a read-only folder works."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import SourceError
from citefinder.library.store import Library
from citefinder.sources.base import Lookup, Source
from citefinder.sources.local import LocalLiterature
from citefinder.sources.registry import open_source
from citefinder.sources.same import find_same
from citefinder.types import Paper

DATA = Path(__file__).parent / "data" / "literature"


def build_literature(folder: Path) -> Path:
    """A literature library: literature.jsonl embedded, queued.jsonl imported BM25-first (not embedded)."""
    library = Library.open(Settings(library=folder))
    library.import_files([DATA / "literature.jsonl"])
    library.import_files([DATA / "queued.jsonl"], defer_embedding=True)
    assert library.embedded_count() == 7 and library.pending_count() == 3
    return folder


pytestmark = pytest.mark.usefixtures("literature_cache")  # a cache of the test's own


@pytest.fixture(scope="module")
def literature(tmp_path_factory) -> Path:
    return build_literature(tmp_path_factory.mktemp("lit") / "papers-lit")


def snapshot(folder: Path) -> dict[str, str]:
    """Every file of the folder (names included) with the hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def ids(records) -> list[str]:
    return sorted(r.source_id for r in records)


def test_lookup_by_each_key_embedded_and_queued(literature):
    before = snapshot(literature)
    lit = LocalLiterature.open(literature)
    assert isinstance(lit, Source) and lit.name == "papers-lit" and lit.sends == ""
    assert lit.count() == 10
    answers = lit.lookup([
        Lookup("doi", "10.1145/3065386"),  # embedded
        Lookup("doi", "10.1162/neco.1997.9.8.1735"),  # queued
        Lookup("arxiv", "1706.03762"),
        Lookup("arxiv", "1406.2661"),  # queued
        Lookup("title", "{A}ttention is all you need!"),  # asked as written, matched normalised
        Lookup("title", "Deep residual learning for image recognition"),  # queued
        Lookup("title", "Deep Learning"),  # two works
        Lookup("doi", "10.9999/none"),
        Lookup("arxiv", "1706.03762"),  # the same question twice: both answered
    ])
    assert [ids(a) for a in answers] == [
        ["doi:10.1145/3065386"], ["doi:10.1162/neco.1997.9.8.1735"], ["arxiv:1706.03762"], ["arxiv:1406.2661"],
        ["arxiv:1706.03762"], ["arxiv:1512.03385"], ["t:goodfellow-deep-learning", "t:lecun-deep-learning"], [],
        ["arxiv:1706.03762"]]
    attention = answers[2][0]
    assert attention.source == "papers-lit" and attention.paper.abstract.startswith("The dominant sequence")
    assert attention.paper.authors[0] == "Ashish Vaswani" and attention.paper.year == 2017
    assert snapshot(literature) == before


def test_find_same_over_the_folder_leaves_an_ambiguous_title_alone(literature):
    lit = LocalLiterature.open(literature)
    mine = [Paper("u1", "Deep learning"), Paper("u2", "Deep learning", ("Yann LeCun",), 2015),
            Paper("u3", "Long short-term memory", ("S. Hochreiter",), 1997)]
    ambiguous, lecun, lstm = find_same(lit, mine)
    assert ambiguous.found is None and len(ambiguous.ambiguous) == 2
    assert lecun.found is not None and lecun.found.source_id == "t:lecun-deep-learning" and lecun.via == "title"
    assert lstm.found is not None and lstm.found.source_id == "doi:10.1162/neco.1997.9.8.1735"


def test_search_is_the_folders_bm25(literature):
    before = snapshot(literature)
    lit = open_source(str(literature), Settings())
    hits = lit.search("residual learning framework for deeper networks", 3)
    assert hits and hits[0].source_id == "arxiv:1512.03385"  # a queued paper, found by BM25
    assert lit.search("adaptive estimates of lower-order moments", 1)[0].paper.title.startswith("Adam")
    assert snapshot(literature) == before


def test_a_read_only_folder_is_read_and_left_as_it_was(literature, tmp_path):
    folder = tmp_path / "readonly-lit"
    shutil.copytree(literature, folder)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        before = snapshot(folder)
        names = sorted(os.listdir(folder))
        lit = LocalLiterature.open(folder)
        [[found]] = lit.lookup([Lookup("title", "Generative adversarial nets")])
        assert found.source_id == "arxiv:1406.2661"
        assert lit.search("generative models adversarial process", 1)[0].source_id == "arxiv:1406.2661"
        assert snapshot(folder) == before and sorted(os.listdir(folder)) == names
    finally:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_the_queue_key_index_lives_outside_the_folder_and_follows_the_queue(literature, tmp_path):
    folder = tmp_path / "growing"
    shutil.copytree(literature, folder)
    lit = LocalLiterature.open(folder)
    assert lit.lookup([Lookup("arxiv", "1406.2661")])[0]
    cache = list((tmp_path / "cache" / "literature").rglob("keys.sqlite"))
    assert len(cache) == 1 and not any(p.name == "keys.sqlite" for p in folder.rglob("*"))
    extra = tmp_path / "more.jsonl"
    extra.write_text('{"title": "Dropout: A Simple Way to Prevent Neural Networks from Overfitting", '
                     '"authors": ["Nitish Srivastava"], "year": 2014, "abstract": "Dropout."}\n')
    Library.open(Settings(library=folder)).import_files([extra], defer_embedding=True)  # the queue grows
    [[found]] = lit.lookup([Lookup("title", "Dropout: a simple way to prevent neural networks from overfitting")])
    assert found.paper.abstract == "Dropout."


def test_a_folder_that_is_no_library_is_said(tmp_path):
    with pytest.raises(SourceError, match="not a CiteFinder library folder"):
        LocalLiterature.open(tmp_path)
    with pytest.raises(SourceError, match="no such literature library folder"):
        open_source(str(tmp_path / "missing"), Settings())
