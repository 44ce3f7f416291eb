"""How LLMs write their answers: fractions as confidences and labelled picks (issue 21)."""

from __future__ import annotations

import pytest

from citefinder.select.answer import interpret_titles, parse_confidence

TITLES = ["Attention Is All You Need", "BERT: Pre-training of Deep Bidirectional Transformers", "Pick and Place"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("8/10", 0.8), ("9 out of 10", 0.9), ("4/5", 0.8), ("4 / 5", 0.8), ("7 of 10", 0.7), ("0.8", 0.8), ("80%", 0.8),
     ("80", 0.8), ("confidence: 0.9", 0.9), (0.65, 0.65), ("none", 0.0)],
)
def test_confidence_forms(value, expected):
    assert parse_confidence(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("raw", "index"),
    [("Answer: 2", 1), ("Selected: [2]", 1), ("Selected:2", 1), ("The answer is 3", 2), ("Final answer - 1", 0),
     ("answer: attention is all you need", 0), ("Pick and Place", 2)],
)
def test_labelled_answers_pick_their_candidate(raw, index):
    answer = interpret_titles(raw, TITLES)
    assert (answer.kind, answer.index) == ("pick", index)


def test_labelled_none_and_out_of_range():
    assert interpret_titles("Answer: none", TITLES).kind == "none"
    bad = interpret_titles("Answer: 9", TITLES)
    assert bad.kind == "bad" and "out of range 1-3" in bad.how
