"""Close relatives among candidates and the cousin-aware confidence (issue 49 item 2): a sequel, a variant, the same
authors in the same year, a paper that writes the other's name; whether the sentence tells the two apart; and the
shipped confidence lower when the top two are siblings the sentence does not tell apart."""

from __future__ import annotations

from citefinder.rank.calibration import COUSIN, adjust_terms, candidate_features, default_calibration
from citefinder.rank.relatives import AUTHORS, MENTIONS, SEQUEL, VARIANT, cousin_features, relatives, telling_words
from citefinder.types import Candidate, Paper, StageScore


def _p(doc: str, title: str, authors: tuple[str, ...] = (), year: int | None = None, abstract: str = "") -> Paper:
    return Paper(doc, title, authors, year, abstract=abstract)


SPHERE = _p("s1", "DeepSphere: Efficient Spherical Convolutional Neural Network", ("Perraudin, N.",), 2019)
SPHERE2 = _p("s2", "DeepSphere v2: A Graph-Based Spherical CNN", ("Defferrard, M.",), 2020)
BERT = _p("b", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", ("Devlin, J.",),
         2019)
ALBERT = _p("a", "ALBERT: A Lite BERT for Self-supervised Learning of Language Representations", ("Lan, Z.",), 2020)
WALK = _p("w", "Learning to Walk over Rough Terrain", ("Smith, J.", "Doe, A."), 2018)
RUN = _p("r", "Curriculum Policies for Quadruped Running", ("Smith, J.",), 2018)
DROPOUT = _p("d", "Regularizing Deep Networks by Randomly Dropping Units", ("Brennan, T.",), 2015)


def test_relatives_by_name_by_authors_and_by_mention() -> None:
    assert SEQUEL in relatives(SPHERE, SPHERE2).kinds and relatives(SPHERE2, SPHERE).by_name
    assert VARIANT in relatives(BERT, ALBERT).kinds and MENTIONS in relatives(BERT, ALBERT).kinds
    assert relatives(WALK, RUN).kinds == (AUTHORS,)
    assert not relatives(BERT, DROPOUT).related and not relatives(BERT, BERT).related


def test_an_abstract_counts_only_when_both_have_one() -> None:
    """An entry that gained an abstract by enrichment is not a louder cousin of one that did not."""
    rich = _p("x", "Spherical CNNs", abstract="We propose a rotation equivariant network for climate data.")
    poor = _p("y", "Graph Networks on the Sphere")
    sentence = "A rotation equivariant network for climate data"
    assert telling_words(sentence, rich, poor)[0] == 0  # climate / rotation are in the abstract only
    both = _p("y", "Graph Networks on the Sphere", abstract="Graphs approximate the sphere for cosmology.")
    assert telling_words(sentence, rich, both)[0] >= 2


def test_cousin_features_say_whether_the_sentence_tells_the_siblings_apart() -> None:
    untold = cousin_features("We use DeepSphere, a spherical network [CITATION], for the maps.", SPHERE, SPHERE2)
    assert untold["cousin"] == 1.0 and untold["cousin_untold"] == 1.0
    told = cousin_features("the efficient DeepSphere [CITATION]", SPHERE, SPHERE2)
    assert told["cousin"] == 1.0 and told["tell_top"] >= 1.0 and told["cousin_untold"] == 0.0
    assert cousin_features("x", SPHERE, None)["cousin"] == 0.0


def _cands(top: Paper, runner: Paper) -> list[Candidate]:
    def c(p: Paper, rank: int, score: float) -> Candidate:
        return Candidate(p, (StageScore("bm25", rank, 10.0 / rank), StageScore("dense", rank, 0.6 / rank),
                             StageScore("fused", rank, score)))
    return [c(top, 1, 0.05), c(runner, 2, 0.03)]


def test_the_confidence_drops_when_the_top_two_are_siblings_the_sentence_does_not_tell_apart() -> None:
    cal = default_calibration()
    assert set(COUSIN) & set(cal.adjust["terms"]), "the shipped adjustment reads the cousin features"
    sentence = "We use DeepSphere, a spherical network [CITATION], for the maps."
    ran = ["bm25", "dense"]
    siblings = candidate_features(_cands(SPHERE, SPHERE2), 0, ran, 120, draft_slots=60, text=sentence)
    strangers = candidate_features(_cands(SPHERE, DROPOUT), 0, ran, 120, draft_slots=60, text=sentence)
    assert siblings["cousin_untold"] == 1.0 and strangers["cousin"] == 0.0
    assert {k: v for k, v in siblings.items() if k not in COUSIN} == \
        {k: v for k, v in strangers.items() if k not in COUSIN}  # the same list but for who the runner-up is
    assert cal.adjusts(siblings)
    assert cal.probability(siblings) < cal.probability(strangers)
    assert adjust_terms(0.9, {"runner_up": 0.0, "cousin": 1.0})["cousin"] == 0.0  # no runner-up: no cousin
