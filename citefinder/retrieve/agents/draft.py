"""The "draft" agent: the draft's own topic as a weak signal for every slot.

When a whole draft is cited, its title and abstract (and the slot's section heading) say what the
paper is about; papers close to that are likelier citations of any slot. Dense search over that text.
Skipped for a single excerpt or question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.index.vectors import dense_search
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library


class DraftAgent(TextAgent):
    name = "draft"
    needs_vectors = True
    empty_reason = "no draft context (a single excerpt or question)"

    def __init__(self, settings: "Settings", library: "Library") -> None:
        super().__init__(settings, library)
        self._last: tuple[str, list[Hit]] | None = None  # every slot of a draft asks the same question

    def text(self, query: Query) -> str:
        return query.draft

    def search_text(self, text: str) -> list[Hit]:
        last = self._last
        if last is not None and last[0] == text:
            return last[1]
        hits = dense_search(self.library, text, self.k)
        self._last = (text, hits)
        return hits


DRAFT_HEAD_WORDS = 150
MIN_DRAFT_WORDS = 300  # a paragraph or two is an excerpt, not a draft: its start says nothing more than its slots


def draft_context(text: str) -> str:
    """The start of a draft (its title and abstract, typically), cleaned, markers removed; "" for a short text.
    A LaTeX draft is read from its title and body: never its preamble, comments or verbatim parts."""
    from citefinder.retrieve.query.reformulate import clean_context
    from citefinder.text.latex import prose
    from citefinder.text.slots import MARKER_RE, looks_like_latex

    if len(text.split()) < MIN_DRAFT_WORDS:
        return ""
    if looks_like_latex(text):
        text = prose(text)
    head = MARKER_RE.sub(" ", text[:4000])
    words = clean_context(head).split()
    return " ".join(words[:DRAFT_HEAD_WORDS])
