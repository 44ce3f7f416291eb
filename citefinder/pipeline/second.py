"""A second paper for a slot, when the candidates say the slot cites two (``\\cite{a,b}``: about a fifth of the
cite commands in real drafts hold several keys).

The rule (off by default, setting ``second_paper``; measured on the drafts-dev training part, see
bench/RESULTS.md): after the selector found a paper, the best other candidate is added when its probability
of being cited, read as the page shows it (never above the pick's, :func:`shown_probabilities`), is at least
``min_probability``, and - with ``need_list`` - the sentence names several things or authors next to the
marker ("Belkin, von Luxburg and Chung [CITATION]"), the sign of a list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from citefinder.rank.calibration import shown_probabilities
from citefinder.types import Candidate, Query, Selection

MIN_PROBABILITY = 0.5
NEED_LIST = True


def lists_several(query: Query) -> bool:
    """The words next to the marker name two or more works or authors."""
    return len(query.names) >= 2 or len(query.authors) >= 2


def second_paper(query: Query, candidates: Sequence[Candidate], confidences: Mapping[str, float],
                 selection: Selection, *, min_probability: float = MIN_PROBABILITY,
                 need_list: bool = NEED_LIST) -> Selection:
    """``selection`` with a second paper (:attr:`Selection.also`) when the rule above says so, else as it was."""
    if selection.status != "found" or selection.paper is None or (need_list and not lists_several(query)):
        return selection
    shown = dict(zip((c.doc_id for c in candidates),
                     shown_probabilities([confidences.get(c.doc_id, 0.0) for c in candidates]), strict=True))
    other = next((c for c in candidates if c.doc_id != selection.paper.doc_id), None)
    if other is None or shown.get(other.doc_id, 0.0) < min_probability:
        return selection
    return replace(selection, also=(other.paper,))
