"""A confidence in words a researcher can act on ("likely right", "unsure", "unlikely").

Pure (no streamlit). The cut-offs are placeholders until :mod:`citefinder.calibration` offers its
own helpers; everything on the page goes through :func:`confidence_words`, so re-pointing it is
one change here.
"""

from __future__ import annotations

LIKELY = "likely right"
UNSURE = "unsure"
UNLIKELY = "unlikely"
LIKELY_AT = 0.7
UNSURE_AT = 0.4


def confidence_words(probability: float | None) -> str:
    """``>= 0.7`` likely right, ``>= 0.4`` unsure, else unlikely (None: unlikely)."""
    p = float(probability or 0.0)
    if p >= LIKELY_AT:
        return LIKELY
    if p >= UNSURE_AT:
        return UNSURE
    return UNLIKELY


def confidence_label(probability: float | None) -> str:
    """Words first, the number after: ``likely right (0.82)``."""
    return f"{confidence_words(probability)} ({float(probability or 0.0):.2f})"
