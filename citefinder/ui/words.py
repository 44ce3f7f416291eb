"""A confidence in words a researcher can act on ("likely right", "unsure", "unlikely").

Pure (no streamlit). The words come from :func:`citefinder.rank.calibration.confidence_words`, the same
cut-offs the traces and the CLI use.
"""

from __future__ import annotations

from citefinder.rank.calibration import LIKELY, UNLIKELY, UNSURE
from citefinder.rank.calibration import confidence_words as _words

__all__ = ["LIKELY", "UNLIKELY", "UNSURE", "confidence_label", "confidence_words"]


def confidence_words(probability: float | None) -> str:
    """Likely right, unsure or unlikely by the shipped cut-offs (:func:`~citefinder.rank.calibration.word_cutoffs`:
    likely right where top candidates were right >= 85% of the time, unlikely where < 15%, in libraries of every
    size; None: unlikely)."""
    return _words(float(probability or 0.0))


def confidence_label(probability: float | None) -> str:
    """Words first, the number after: ``likely right (0.82)``."""
    return f"{confidence_words(probability)} ({float(probability or 0.0):.2f})"
