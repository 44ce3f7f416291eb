"""The literature tier (citefinder.pipeline.literature): a real literature library folder built here (real
Chroma store, real bm25s, papers from ../shared/data), searched in place without a byte changing; its papers
marked "not in your library", traced, never selected; the user's own papers left out of it; an online source
(a fake Source in-process) ranked by the same agents; and the key a paper gets when the user adds it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from literature_support import (
    as_paper,
    only_theirs,
    own_library,
    snapshot,
)

from citefinder.errors import SourceError
from citefinder.library.keystyle import key_in_style, read_style
from citefinder.library.store import Library
from citefinder.pipeline.literature import LiteratureTier, literature_tier, open_literature, own_paper
from citefinder.pipeline.pipeline import Pipeline
from citefinder.pipeline.priors import NEWEST_NEEDS, Priors, prior_order
from citefinder.select.fallback import ThresholdSelector
from citefinder.sources.base import Lookup, SourceRecord
from citefinder.types import Paper

pytestmark = pytest.mark.usefixtures("literature_cache")


@pytest.fixture
def own(tmp_path: Path, records: list[dict]) -> Library:
    return own_library(tmp_path / "mine", records)


def _text(records: list[dict]) -> str:
    """Two slots: one naming a paper only the literature has (its title), one naming one of the user's."""
    return (f"We follow {records[only_theirs(records)]['title'].lower()} [CITATION]. "
            f"Our method extends {records[1]['title'].lower()} [CITATION].")


def test_the_tier_offers_papers_not_in_the_library_marked_traced_and_never_selected(own, literature, records):
    before = snapshot(literature)
    settings = own.settings
    # neutral priors: the literature's own order (the shipped ones tilt it towards the user's field)
    tier = LiteratureTier(open_literature(literature, settings), own, when="always", priors=Priors())
    # a selector that always picks: even then only the user's own papers are ever selected
    pipeline = Pipeline(settings, own, literature=tier, selector=ThresholdSelector(0.0))
    results = pipeline.cite_text(_text(records))
    assert snapshot(literature) == before  # searched in place: not a byte, not a file added
    mine = {p.doc_id for p in own.iter_papers()}
    first, second = results
    assert first.literature and first.literature[0].doc_id == records[only_theirs(records)]["doc_id"]
    assert any(r.selection.papers for r in results)
    for r in results:
        assert all(p.doc_id in mine for p in r.selection.papers)
        assert all(c.doc_id in mine for c in r.candidates)
        assert all(not c.in_library and c.origin == literature.name for c in r.literature)
        assert all(c.doc_id not in mine for c in r.literature)  # the user's own are never offered as new
        trace = r.trace("literature")
        assert trace is not None and trace.status == "ok" and trace.kind == "stage"
        assert [h.doc_id for h in trace.top] == [c.doc_id for c in r.literature]
        assert {t["agent"] for t in trace.details["traces"]} >= {"bm25", "title", "fuse"}
        assert [c.stage("literature").rank for c in r.literature] == list(range(1, len(r.literature) + 1))
        assert all(c.stage("fused") is not None for c in r.literature)  # the same stages as the user's papers
    # the user's paper the second slot names is in the literature too: left out of it, and said
    assert records[1]["doc_id"] in second.trace("literature").details["yours"]
    d = first.to_dict()
    assert d["literature"][0]["in_library"] is False and d["literature"][0]["origin"] == literature.name
    assert "origin" not in d["candidates"][0]


def test_unsure_asks_the_literature_only_when_nothing_of_yours_is_confident(own, literature, records):
    settings = own.settings
    tier = literature_tier(settings, own, literature)
    assert tier is not None and tier.when == "unsure"
    sure = Pipeline(settings.with_overrides(confidence_threshold=0.0), own,
                    literature=LiteratureTier(tier.search, own, threshold=0.0, band=False))
    for r in sure.cite_text(_text(records)):
        assert r.literature == () and r.trace("literature").status == "skipped"
        assert "confident" in r.trace("literature").message
    unsure = Pipeline(settings.with_overrides(confidence_threshold=1.0), own,
                      literature=LiteratureTier(tier.search, own, threshold=1.0))
    r = unsure.cite_text(_text(records))[0]
    assert r.selection.status == "not_found" and r.literature
    assert "below" in r.trace("literature").inputs["why"]


def test_no_literature_named_means_no_tier_and_a_bad_folder_says_what_to_do(own, tmp_path):
    assert literature_tier(own.settings, own) is None
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match="not a CiteFinder library folder|no such literature library"):
        literature_tier(own.settings, own, tmp_path / "empty")


class FakeSource:
    """An online source in-process: ``search`` answers its records in its own order (or fails)."""

    name = "fake-online"
    sends = "the slot's sentence"

    def __init__(self, papers: Sequence[Paper], fail: bool = False) -> None:
        self.papers = list(papers)
        self.fail = fail
        self.asked: list[str] = []

    def lookup(self, queries: Sequence[Lookup]) -> list[list[SourceRecord]]:
        return [[] for _ in queries]

    def search(self, text: str, k: int) -> list[SourceRecord]:
        self.asked.append(text)
        if self.fail:
            raise SourceError("fake-online answered 503; try again later")
        return [SourceRecord(p, self.name, f"F{n}") for n, p in enumerate(self.papers[:k])]


def test_an_online_source_plugs_in_by_providing_the_source_alone(own, records):
    # the source answers a distractor first: the agents rank the paper the sentence names above it
    target, other = as_paper(records[300]), as_paper(records[301])
    source = FakeSource([other, target, as_paper(records[0])])  # records[0] is the user's own
    tier = literature_tier(own.settings, own, source, when="always")
    assert tier is not None and tier.name == "fake-online"
    r = Pipeline(own.settings, own, literature=tier).cite_text(
        f"We follow {records[300]['title'].lower()} [CITATION].")[0]
    assert source.asked and records[300]["title"].lower() in source.asked[0].lower()
    assert [c.doc_id for c in r.literature][:2] == [target.doc_id, other.doc_id]
    assert records[0]["doc_id"] not in {c.doc_id for c in r.literature}
    assert all(c.origin == "fake-online" for c in r.literature)
    agents = {t["agent"] for t in r.trace("literature").details["traces"]}
    assert {"fake-online search", "source", "bm25"} <= agents
    # a failing source: the slot keeps its own result, the trace says why
    failing = literature_tier(own.settings, own, FakeSource([target], fail=True), when="always")
    r = Pipeline(own.settings, own, literature=failing).cite_text("We follow it [CITATION].")[0]
    assert r.literature == () and r.trace("literature").status == "error" and "503" in r.trace("literature").message


def _p(title: str, authors: tuple[str, ...], year: int, key: str | None = None) -> Paper:
    return Paper(f"t:{abs(hash((title, year)))}", title, authors, year, key=key)


ATTENTION = _p("Attention Is All You Need", ("Ashish Vaswani", "Noam Shazeer", "Niki Parmar"), 2017)
BERT = _p("BERT: Pre-training of Deep Bidirectional Transformers", ("Jacob Devlin", "Ming-Wei Chang"), 2019)
LECUN = _p("Gradient-based learning applied to document recognition", ("Yann LeCun", "Léon Bottou"), 1998)
HE = _p("Deep Residual Learning for Image Recognition", ("Kaiming He", "Xiangyu Zhang"), 2016)


@pytest.mark.parametrize("keys, expected", [
    ({"lecun": "lecun1998gradient", "he": "he2016deep"}, "vaswani2017attention"),
    ({"lecun": "LeCun:1998", "he": "He:2016"}, "Vaswani:2017"),
    ({"lecun": "LeCun98", "he": "He16"}, "Vaswani17"),
    ({"lecun": "lecunGradientbasedLearningApplied1998", "he": "heDeepResidualLearning2016"},
     "vaswaniAttentionAllYou2017"),
    ({"lecun": "lecun-etal-1998-gradient", "he": "he-zhang-2016-deep"}, "vaswani-etal-2017-attention"),
    ({"lecun": "lenet", "he": "resnet"}, "vaswani2017attention"),  # hand-made keys: Google Scholar's
])
def test_a_new_key_follows_the_users_own_key_style(keys, expected):
    library = [replace(LECUN, key=keys["lecun"]), replace(HE, key=keys["he"])]
    style = read_style(library).style
    assert key_in_style(ATTENTION, style, lambda k: False) == expected
    # never a key in use: a letter appended, or (the ACL Anthology's way) the title's next word
    assert key_in_style(ATTENTION, style, lambda k: k == expected) == expected + ("-all" if "-" in expected else "a")


def test_an_added_paper_carries_its_key_identifiers_and_where_it_came_from(own, literature, records):
    tier = LiteratureTier(open_literature(literature, own.settings), own, when="always", priors=Priors())
    r = Pipeline(own.settings, own, literature=tier).cite_text(_text(records))[0]
    c = r.literature[0]
    paper = own_paper(c, "Key:2012")
    assert paper.key == "Key:2012" and paper.bibtex is None
    assert paper.arxiv_id == records[only_theirs(records)]["arxiv_id"]
    assert paper.source == f"literature:{literature.name}"
    assert ("title", literature.name, c.doc_id) in paper.provenance


def test_the_priors_tilt_the_literature_towards_the_users_field_and_years():
    """By authors the user cites, the user's closest paper, and no newer than the user's newest (the shipped
    priors, tuned on drafts-dev's training part, do all three); neutral priors keep the literature's order."""
    feats = [{"shared": 0.0, "topic": 1.0, "newer": 3.0},   # first in the literature, but newer than all of yours
             {"shared": 0.0, "topic": 1.0, "newer": 0.0},
             {"shared": 2.0, "topic": 1.0, "newer": 0.0},   # two of its authors are in your library
             {"shared": 0.0, "topic": 9.0, "newer": 0.0}]   # close to one of your papers
    assert prior_order(feats, feats, Priors()) == [0, 1, 2, 3]
    assert prior_order(feats, feats, Priors(newer=0.2))[-1] == 0
    assert prior_order(feats, feats, Priors(authors=1.0))[0] == 2
    assert prior_order(feats, feats, Priors(topic=4.0))[0] == 3
    shipped = Priors.shipped()
    assert not shipped.neutral and "training part" in shipped.provenance


def test_a_few_papers_do_not_say_how_recent_the_draft_is():
    """"Newer than all of yours" needs a library of some size: a new user's one paper from 2012 does not push the
    2017 paper a Transformer sentence cites down the list."""
    attention = _p("Attention Is All You Need", ("Ashish Vaswani",), 2017)
    few = own_paper_features([_p(f"Old paper {i}", ("A. Author",), 2012) for i in range(NEWEST_NEEDS - 1)], attention)
    enough = own_paper_features([_p(f"Old paper {i}", ("A. Author",), 2012) for i in range(NEWEST_NEEDS)], attention)
    assert few["newer"] == 0.0 and enough["newer"] == 5.0


def own_paper_features(papers: list[Paper], paper: Paper) -> dict[str, float]:
    from citefinder.pipeline.priors import OwnPapers

    return OwnPapers(papers).features(paper)
