"""The static agents: the dense agents' three questions (the slot's sentence, its neighbours, the draft's topic)
asked of the library's static vectors (:mod:`citefinder.index.static`), a literature library's dense first pass
while it has no MiniLM vectors, and a voice of its own beside them after. Each skips, saying how to build them,
where the library has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.index.static import saved_static, static_search
from citefinder.retrieve.agents.dense import dense_text
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

NO_VECTORS = "no static vectors (a literature library gets them with `citefinder library embed --static`)"


class StaticAgent(TextAgent):
    """Nearest papers to the slot's own part of the sentence, then the sentence, by the static embedding."""

    name = "static"

    def __init__(self, settings: "Settings", library: "Library") -> None:
        super().__init__(settings, library)
        self.k = settings.k_dense

    def text(self, query: Query) -> str:
        return dense_text(query)

    def skip_reason(self, query: Query) -> str | None:
        if not self.text(query).strip():
            return self.empty_reason
        return None if saved_static(self.library) is not None else NO_VECTORS

    def search_text(self, text: str) -> list[Hit]:
        return static_search(self.library, text, self.k)


class StaticContextAgent(StaticAgent):
    """The slot's sentence with its two neighbours (see the "context" agent)."""

    name = "static-context"
    empty_reason = "no neighbouring sentences"

    def text(self, query: Query) -> str:
        return query.window if query.window != query.text else ""


class StaticDraftAgent(StaticAgent):
    """The draft's own title, abstract and section heading (see the "draft" agent)."""

    name = "static-draft"
    empty_reason = "no draft context (a single excerpt or question)"

    def text(self, query: Query) -> str:
        return query.draft
