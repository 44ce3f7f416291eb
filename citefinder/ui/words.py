"""A confidence in words a researcher can act on ("likely right", "unsure", "unlikely").

Pure (no streamlit). The words come from :func:`citefinder.rank.calibration.confidence_words`, the same
cut-offs the traces and the CLI use.
"""

from __future__ import annotations

import math

from citefinder.rank.calibration import LIKELY, UNLIKELY, UNSURE
from citefinder.rank.calibration import confidence_words as _words

__all__ = ["LIKELY", "UNLIKELY", "UNSURE", "confidence_label", "confidence_words"]


def shown(probability: float | None) -> float:
    """The probability as shown, to two decimals, rounded down: 0.8497 is shown 0.84, never 0.85, so the number
    shown is on the same side of every two-decimal cut-off (the words', the fill threshold's) as the probability."""
    return math.floor(float(probability or 0.0) * 100 + 1e-9) / 100


def confidence_words(probability: float | None) -> str:
    """Likely right, unsure or unlikely by the shipped cut-offs (:func:`~citefinder.rank.calibration.word_cutoffs`:
    likely right where top candidates were right >= 85% of the time, unlikely where < 15%, in libraries of every
    size; None: unlikely), compared as the number is shown (:func:`shown`)."""
    return _words(shown(probability))


def confidence_label(probability: float | None) -> str:
    """Words first, the number after: ``likely right (0.82)``; the word follows the number shown."""
    return f"{confidence_words(probability)} ({shown(probability):.2f})"
