"""The literature's offers (issue 50, citefinder/pipeline/offers.py): ordered by their probability from the
evidence (never a surname prior over every slot), a panel that shows what it says, never a paper the user has
(the same work under another key, its arXiv version), *Add* linking to the entry the library holds, and a filled
slot's literature trace that does not contradict its card. Real literature library folders (bm25s, Chroma) built
from tests/data/offers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.index.static import build_static
from citefinder.library.store import Library
from citefinder.pipeline.literature import LibraryLiterature, LiteratureTier
from citefinder.pipeline.offers import OfferModel, order_is_probability, panel, probability_of
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.text.slots import find_slots
from citefinder.types import Candidate, Paper, Selection, SlotResult, StageScore
from citefinder.workflow.add_paper import add_to_library

pytestmark = pytest.mark.usefixtures("literature_cache")
DATA = Path(__file__).parent / "data" / "offers"
RECORDS = [json.loads(x) for x in (DATA / "literature.jsonl").read_text(encoding="utf-8").splitlines() if x]
# each written from one literature paper's title (RECORDS[i]), in other words than the title's
SENTENCES = [
    "Neural scoring functions can be trained with listwise ranking losses [CITATION].",
    "Molecular properties are predicted by passing messages over the graph of a molecule [CITATION].",
    "Speech is transcribed end to end with connectionist temporal classification [CITATION].",
    "Sparse subnetworks can be found early in training by pruning small magnitudes [CITATION].",
    "Back-translation of monolingual text helps machine translation in low-resource settings [CITATION].",
    "Robots learn grasping policies from depth images rendered in simulation [CITATION].",
    "Face verification systems show demographic bias in their error rates [CITATION].",
    "Precipitation nowcasting uses convolutional recurrent networks [CITATION].",
]
BERT_ARXIV = {"doc_id": "arxiv:1810.04805", "title": "BERT: Pre-training of Deep Bidirectional Transformers for "
              "Language Understanding", "authors": ["Jacob Devlin", "Ming-Wei Chang"], "year": 2018, "venue": None,
              "abstract": "We introduce BERT, a language representation model pre-trained on unlabeled text.",
              "arxiv_id": "1810.04805"}


def _folder(root: Path, rows: list[dict]) -> Path:
    src = root / "dump.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    folder = root / "lit"
    library = Library.open(Settings(library=folder))
    assert library.import_files([src], defer_embedding=True).added == len(rows)
    assert build_static(library).papers == len(rows)  # with static vectors, as the literature is searched
    return folder


@pytest.fixture(scope="module")
def literature(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("offers"), RECORDS + [BERT_ARXIV])


@pytest.fixture
def own(tmp_path: Path) -> Library:
    lib = Library.open(Settings(library=tmp_path / "mine"))
    lib.import_files([DATA / "refs.bib"], defer_embedding=True)
    return lib


def _slots(text: str) -> list[SlotResult]:
    return [SlotResult(s, reformulate(s)[0], (), Selection("not_found"), ()) for s in find_slots(text, 1)]


def test_each_slot_offers_its_own_paper_first_not_the_surname_match_for_every_slot(own, literature):
    tier = LiteratureTier(LibraryLiterature(own.settings, literature), own, when="always")
    firsts = []
    for n, sentence in enumerate(SENTENCES):
        offered = tier.extend(_slots(sentence)[0], top_confidence=0.0).literature
        assert offered and order_is_probability(offered), [probability_of(c) for c in offered]
        firsts.append(offered[0].doc_id)
        assert offered[0].doc_id == RECORDS[n]["doc_id"], (SENTENCES[n], [c.paper.title for c in offered[:3]])
    assert firsts.count("lit:muller2020") == 1  # the Müller paper (a .bib author's surname) first for its own only


def test_never_offered_what_the_user_has_and_add_links_to_the_held_entry(own, literature):
    tier = LiteratureTier(LibraryLiterature(own.settings, literature), own, when="always")
    result = _slots("We fine-tune BERT, pre-training deep bidirectional transformers for language "
                    "understanding [CITATION].")[0]
    extended = tier.extend(result, top_confidence=0.0)
    assert BERT_ARXIV["doc_id"] not in {c.doc_id for c in extended.literature}  # the .bib's NAACL entry
    assert BERT_ARXIV["doc_id"] in extended.trace("literature").details["yours"]
    # a paired .bib the library does not hold is the user's too
    bare = Library.open(Settings(library=own.path.parent / "bare"))
    paired = [p for p in own.iter_papers() if p.key == "devlin2019bert"]
    alone = LiteratureTier(tier.search, bare, when="always", also_yours=paired).extend(result, top_confidence=0.0)
    assert BERT_ARXIV["doc_id"] not in {c.doc_id for c in alone.literature}
    # Add of the arXiv version links to the entry the library holds: nothing added twice, its key unchanged
    before = own.count()
    arxiv = Paper(BERT_ARXIV["doc_id"], BERT_ARXIV["title"], tuple(BERT_ARXIV["authors"]), 2018,
                  arxiv_id="1810.04805")
    added = add_to_library(own, Candidate(arxiv, origin="lit"))
    assert not added.new and added.paper.key == "devlin2019bert" and own.count() == before


def test_a_panel_shows_what_it_says_and_collapses_below_the_floor():
    def offer(n: int, p: float) -> Candidate:
        return Candidate(Paper(f"d{n}", f"T{n}"), (StageScore("literature", n, p),), origin="lit")

    offers = [offer(1, 0.6), offer(2, 0.3), offer(3, 0.05), offer(4, 0.02)] + [offer(n, 0.01) for n in range(5, 11)]
    shown = panel(offers, limit=5, floor=0.1)
    assert [c.doc_id for c in shown.open] == ["d1", "d2"] and len(shown.collapsed) == 3
    assert shown.heading.startswith("2 papers") and "10" not in shown.heading
    nothing = panel(offers[2:], limit=5, floor=0.1)
    assert not nothing.open and nothing.heading == "nothing likely in the literature"
    assert panel(list(reversed(offers)), limit=3, floor=0.0).open[0].doc_id == "d1"  # its order is the probability's


def test_a_checked_fill_does_not_say_its_confidence_is_zero(own, literature):
    tier = LiteratureTier(LibraryLiterature(own.settings, literature), own, when="unsure", threshold=0.85)
    result = _slots(SENTENCES[1])[0]
    mine = next(iter(own.iter_papers()))
    filled = replace(result, selection=Selection("found", mine, 0.89, "threshold"))
    extended = tier.extend(filled, top_confidence=0.89, check=True)
    why = extended.trace("literature").inputs["why"]
    assert "0.89" in why and "0.00" not in why and "below" not in why


def test_the_model_is_a_probability_of_the_evidence():
    model = OfferModel({"gap:bm25": 2.0, "agree10": 0.5}, bias=-2.0)
    strong, weak = {"gap:bm25": 1.0, "agree10": 3.0}, {"gap:bm25": -0.5, "agree10": 1.0}
    assert 0.0 < model.probability(weak) < model.probability(strong) < 1.0
    assert OfferModel.shipped().weights  # the fitted model ships (citefinder/data/offers.json)
