"""Which slots ask the literature: a slot whose pick from the user's library is doubtful.

In ``unsure`` mode (:mod:`citefinder.pipeline.literature`) the literature is searched for a slot when nothing of
the user's is sure: the selector filled nothing, or its pick is below the confidence threshold, or the pick's
confidence is not in the *likely right* band (:func:`citefinder.rank.calibration.confidence_words`, the words the
pages show). A pick a researcher would read as *unsure* is a pick whose paper may be missing from the library, so
the literature is asked for it too. Other checks of a pick (an open-world check that the right paper may be
absent) call :func:`needs_literature` with the slot's result to ask the same question.
"""

from __future__ import annotations

from citefinder.rank.calibration import LIKELY, confidence_words
from citefinder.types import SlotResult


def pick_confidence(result: SlotResult) -> float:
    """The calibrated confidence of the slot's best paper of the user's: the selector's trace's first, else the
    selection's own (0 when nothing was found)."""
    select = result.trace("select")
    if select is not None and select.top:
        return float(select.top[0].score)
    return float(result.selection.confidence) if result.selection.status == "found" else 0.0


def doubt(result: SlotResult, *, top_confidence: float | None = None, threshold: float = 0.0, band: bool = True) -> str:
    """Why the slot's pick is doubtful ("" when it is not): nothing filled, a confidence under ``threshold``, or
    (``band``) one outside the *likely right* band. ``top_confidence``: the user's best paper's calibrated
    confidence, when the caller has it (else read from the result, :func:`pick_confidence`)."""
    top = pick_confidence(result) if top_confidence is None else float(top_confidence)
    if top < threshold:
        return f"your best paper's confidence {top:.2f} is below {threshold:.2f}"
    if result.selection.status != "found":
        return f"nothing of yours was filled in (your best paper's confidence {top:.2f})"
    if band and confidence_words(top) != LIKELY:
        return f"your best paper's confidence {top:.2f} is {confidence_words(top)}, not {LIKELY}"
    return ""


def needs_literature(result: SlotResult, *, top_confidence: float | None = None, threshold: float = 0.0) -> bool:
    """Should the literature be searched for this slot in ``unsure`` mode? True when its pick is doubtful
    (:func:`doubt`): the hook any check of a pick (e.g. an open-world check) can ask."""
    return bool(doubt(result, top_confidence=top_confidence, threshold=threshold))
