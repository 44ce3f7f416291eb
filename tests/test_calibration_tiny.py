"""The confidence in a library far smaller than any it was fit on (issue 21): one paper is always "first"
by every agent, so rank and agreement say little there; the probability says so. Real Chroma, bm25s
and MiniLM for the libraries of one and five papers."""

from __future__ import annotations

import pytest

from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.pipeline.pipeline import Pipeline
from citefinder.rank.calibration import default_calibration
from citefinder.types import Paper

POTATO = "Potatoes [CITATION] grow best in cool, moist soil and need about three months of frost-free weather."
DIGITS = ("Convolutional networks trained with backpropagation recognize handwritten digits such as zip codes "
          "[CITATION].")
ADAM = "We optimize with Adam, a method for stochastic optimization based on adaptive moment estimates [CITATION]."
PAPERS = [
    Paper("t:attention", "Attention Is All You Need", ("Ashish Vaswani",), 2017,
          abstract="We propose a new simple network architecture, the Transformer, based solely on attention "
                   "mechanisms, dispensing with recurrence and convolutions entirely."),
    Paper("t:resnet", "Deep Residual Learning for Image Recognition", ("Kaiming He",), 2016,
          abstract="Deeper neural networks are more difficult to train. We present a residual learning framework to "
                   "ease the training of networks substantially deeper than before, evaluated on ImageNet."),
    Paper("t:bert", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          ("Jacob Devlin",), 2019, abstract="A language representation model designed to pre-train deep "
                                            "bidirectional representations from unlabeled text."),
    Paper("t:adam", "Adam: A Method for Stochastic Optimization", ("Diederik Kingma",), 2015,
          abstract="An algorithm for first-order gradient-based optimization of stochastic objective functions, "
                   "based on adaptive estimates of lower-order moments."),
    Paper("t:dropout", "Dropout: A Simple Way to Prevent Neural Networks from Overfitting", ("Nitish Srivastava",),
          2014, abstract="Deep neural nets with many parameters overfit; dropout randomly drops units during "
                         "training to prevent it."),
]


def test_rank_and_agreement_count_less_below_the_smallest_training_library():
    cal = default_calibration()
    assert cal.min_library >= 30  # drafts-dev's smallest .bib
    assert cal.weight(1) == 0.0 and cal.weight(cal.min_library) == 1.0 and cal.weight(10**6) == 1.0
    assert 0.0 < cal.weight(5) < cal.weight(20) < 1.0
    # the same agreement on a poorly matching paper, in a library of 40 papers and in a one-paper one
    feats = {"firsts": 3.0, "first_share": 1.0, "margin": 1.0, "rr_bm25": 1.0, "rr_dense": 1.0, "ran_bm25": 1.0,
             "ran_dense": 1.0, "fused_rel": 1.0, "dense_cos": 0.05, "raw_dense": 0.05, "runner_up": 1.0}
    forty = cal.probability({**feats, "log_library": 1.6, "library": 40})
    one = cal.probability({**feats, "log_library": 0.0, "library": 1, "runner_up": 0.0})
    assert one < 0.2 and forty > 0.7


@pytest.mark.slow
def test_tiny_libraries_do_not_claim_what_they_cannot_tell(tmp_path):
    def pipeline(papers: list[Paper], name: str) -> Pipeline:
        settings = Settings(library=tmp_path / name)
        library = Library.open(settings)
        library.add_papers(papers)
        return Pipeline(settings, library)

    (potato,) = pipeline(PAPERS[:1], "one").cite_text(POTATO)
    assert potato.selection.status == "not_found" and potato.candidates[0].paper.title == "Attention Is All You Need"
    assert potato.candidates and potato.selection.confidence < 0.3, potato.selection
    five = pipeline(PAPERS, "five")
    (digits,) = five.cite_text(DIGITS)  # the cited LeCun et al. paper is not in the library
    assert digits.selection.status == "not_found", digits.selection
    (adam,) = five.cite_text(ADAM)  # a sentence that names its paper is still found
    assert adam.selection.status == "found" and adam.selection.paper.doc_id == "t:adam"
    basis = adam.traces[-1].details["confidence_basis"]
    assert "a library of 5 papers tells little" in basis["explanation"]
