"""At the 0.85 threshold the word follows the number shown (citefinder/ui/words.py): a probability just under a
cut-off is never shown as the cut-off itself (0.8497 is "unsure (0.84)", not "unsure (0.85)" beside "No confident
match"), and the word read from the number shown is the word given, for every probability."""

from __future__ import annotations

import re

from citefinder.rank.calibration import word_cutoffs
from citefinder.select.fallback import ThresholdSelector
from citefinder.ui.words import LIKELY, UNSURE, confidence_label, confidence_words, shown


def test_just_under_the_threshold_is_shown_under_it() -> None:
    likely, _ = word_cutoffs()
    assert likely == 0.85
    assert confidence_label(0.8497) == "unsure (0.84)"
    assert confidence_label(0.85) == "likely right (0.85)"
    assert confidence_label(0.8551) == "likely right (0.85)"


def test_the_word_follows_the_number_shown_everywhere() -> None:
    likely, unsure = word_cutoffs()
    for i in range(0, 100001):
        p = i / 100000
        label = confidence_label(p)
        number = float(re.search(r"\((\d\.\d\d)\)$", label).group(1))  # type: ignore[union-attr]
        assert label.startswith(confidence_words(number)), (p, label)
        assert (number >= likely) == (p >= likely) and (number >= unsure) == (p >= unsure), (p, label)
    assert confidence_words(0.8499999) == UNSURE and confidence_words(0.85) == LIKELY


def test_the_number_shown_agrees_with_the_fill_at_the_threshold() -> None:
    selector = ThresholdSelector(0.85)
    for p in (0.8449, 0.8497, 0.84999, 0.85, 0.8501):
        filled = p >= selector.threshold  # the selector's own rule (select/fallback.py)
        assert (shown(p) >= 0.85) == filled, p
