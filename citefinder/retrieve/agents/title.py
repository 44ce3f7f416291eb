"""The "title" agent: BM25 over titles alone.

Most of a real library's entries have no abstract, and where one exists its words swamp the title's
in the main index; a title-only index lets a slot that paraphrases a title find it.
"""

from __future__ import annotations

from citefinder.index.base import derived
from citefinder.index.titles import TITLES
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit


class TitleAgent(TextAgent):
    name = "title"

    def search_text(self, text: str) -> list[Hit]:
        return derived(self.library, TITLES).search(text, self.k)
