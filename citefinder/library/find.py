"""Looking a paper up by hand ("LeCun 1998", "Vaswani attention"): BM25 over the words, then the papers whose
year and authors match what was typed first. A year is not a word BM25 can match, and a surname is one word
among a title's many, so both are read apart from the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citefinder.library.identity import fold, surname
from citefinder.types import Paper

if TYPE_CHECKING:
    from citefinder.library.store import Library

_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*", re.UNICODE)
POOL = 200  # BM25 hits looked at per lookup


@dataclass(frozen=True)
class Lookup:
    """What was typed, read: the words, a year (if any), lower-cased words that may be surnames."""

    words: str
    year: int | None
    names: tuple[str, ...]


def read_query(text: str) -> Lookup:
    years = [int(y) for y in _YEAR.findall(text)]
    words = _YEAR.sub(" ", text)
    names = tuple(f for w in _WORD.findall(words) if (f := fold(w)))
    return Lookup(" ".join(words.split()), years[0] if years else None, names)


def _score(paper: Paper, q: Lookup, rank: int) -> tuple[int, int, int]:
    surnames = {surname(a) for a in paper.authors}
    author_hits = sum(1 for n in q.names if n in surnames)
    year_hit = int(q.year is not None and paper.year == q.year)
    return (-(author_hits + year_hit), -author_hits, rank)


def find_papers(library: "Library", text: str, k: int = 8) -> list[Paper]:
    """Papers for a typed lookup: BM25 order, with a paper of the typed year and authors ranked above the
    rest (both count; then the authors; then BM25). A year alone lists that year's best BM25 matches."""
    q = read_query(text)
    if not q.words and q.year is None:
        return []
    hits = library.bm25_search(q.words or str(q.year), POOL)
    papers = library.get([h.doc_id for h in hits])
    if q.year is not None and not q.words:
        papers = [p for p in papers if p.year == q.year]
    ranked = sorted(enumerate(papers), key=lambda t: _score(t[1], q, t[0]))
    return [p for _, p in ranked[:k]]
