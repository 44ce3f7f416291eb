"""Reading an LLM's answer: candidate number, exact or fuzzy title, "none", and a lenient confidence.

Pure functions (no DSPy): the selector and the optimizer's metric share them.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citefinder.library.identity import normalize_title
from citefinder.types import Candidate

FUZZY_MIN_RATIO = 0.9
_NONE_ANSWERS = frozenset({"none", "no", "null", "nothing", "n a", "not found", "no match", "none found"})
# A number standing alone ("3", "[3]", "#3", "3.", "3: Title"), not the start of a title ("1-bit Adam", "3D ...").
_NUMBER = re.compile(r"^(?:candidate|paper|number|no\.?|#)?\s*\[?\s*(\d+)\s*\]?(?=$|[\s.,;:)\]])", re.IGNORECASE)
# A label some LLMs put before their answer ("Answer: 2", "Selected: [2]", "Final answer - none").
_LABEL = re.compile(
    r"^(?:(?:my|the)\s+)?(?:final\s+)?(?:answer|selected|selection|choice|pick|output|result)(?:\s+is)?"
    r"\s*(?:[:=\-]\s*|\s+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Answer:
    """How an LLM answer maps onto the candidate list."""

    kind: str  # "pick", "none" or "bad"
    index: int = -1  # 0-based, for "pick"
    how: str = ""  # "number", "title", "fuzzy title" for "pick"; the reason for "bad"


def interpret(raw: str, candidates: Sequence[Candidate]) -> Answer:
    """Map an answer to a candidate: exact normalised title, fuzzy title, number, or none.

    Never returns a paper outside ``candidates``: anything unmatched is "bad".
    """
    return interpret_titles(raw, [c.paper.title for c in candidates])


def interpret_titles(raw: str, titles: Sequence[str]) -> Answer:
    """:func:`interpret` against the candidates' titles (numbered from 1 in this order)."""
    text = raw.strip().strip("\"'`*").strip()
    norm = normalize_title(text)
    if not norm:
        return Answer("bad", how="empty answer")
    if norm in _NONE_ANSWERS or norm.startswith("none of"):
        return Answer("none")
    # Titles first: "1-bit Adam: ..." is a title that starts with a digit, not candidate 1.
    normed = [normalize_title(t) for t in titles]
    if norm in normed:
        return Answer("pick", normed.index(norm), "title")
    label = _LABEL.match(text)
    unlabelled = interpret_titles(text[label.end():], titles) if label and text[label.end():].strip() else None
    if unlabelled is not None and unlabelled.kind != "bad":
        return unlabelled  # "Answer: 2" is the answer "2"
    number = _NUMBER.match(text)
    ratios = [difflib.SequenceMatcher(None, norm, t).ratio() for t in normed]
    if ratios and max(ratios) >= FUZZY_MIN_RATIO:
        return Answer("pick", ratios.index(max(ratios)), f"fuzzy title (ratio {max(ratios):.2f})")
    if number and 1 <= int(number.group(1)) <= len(titles):
        return Answer("pick", int(number.group(1)) - 1, "number")
    if number:
        return Answer("bad", how=f"candidate number {number.group(1)} is out of range 1-{len(titles)}")
    if unlabelled is not None:
        return unlabelled
    return Answer("bad", how=f"answer {raw.strip()[:120]!r} matches no candidate number or title")


_FIRST_NUMBER = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*(%?)")
# "8/10", "4 / 5", "9 out of 10": a share of a scale the LLM chose itself
_FRACTION = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*(?:/|out\s+of|of)\s*(\d+(?:\.\d+)?)", re.IGNORECASE)


def parse_confidence(value: Any) -> float:
    """The first number in the answer as a probability: ``0.8``, ``80%``, ``80``, ``8/10``, ``4/5`` and
    ``8 out of 10`` all give 0.8; else 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        x = float(value)
    else:
        text = str(value or "")
        m = _FIRST_NUMBER.search(text)
        if not m:
            return 0.0
        x = float(m.group(1))
        fraction = _FRACTION.match(text, m.start())
        if fraction and 0 < float(fraction.group(2)) and x <= float(fraction.group(2)):
            x /= float(fraction.group(2))
        elif m.group(2) or 1.0 < x <= 100.0:
            x /= 100.0
    return 0.0 if math.isnan(x) else min(1.0, max(0.0, x))
