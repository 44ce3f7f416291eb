"""The "keys" agent: the user's own citation keys, read for the names they add.

A researcher who writes ``\\cite{lama}`` or ``devlin2019bert`` by hand names the paper in its key,
often by the very word the draft writes next to the marker ("the LAMA probe [CITATION]"). At import
time each paper's key is cut into parts (letter runs, CamelCase split: "haHyperNetworks2016" ->
ha, hyper, networks) and only the parts the rest of the record does not already say are kept: not an
author's surname, not a word of the title nor part of one, not a generic word. Generated keys
("vaswaniAttentionAllYou2017", "he2016deep", "Muchnick97") therefore add nothing, and hand-made ones
("lama", "lecun1998mnist", "METIS98") add their name. The agent matches those parts against the words next to the
marker (:attr:`Query.near`).
"""

from __future__ import annotations

from citefinder.index.base import derived
from citefinder.index.keys import KEY_RUN, KEYS, MAX_POSTINGS, KeysIndex
from citefinder.library.identity import fold
from citefinder.retrieve.base import LibraryAgent, hits_from_scores
from citefinder.types import Hit, Query


class KeysAgent(LibraryAgent):
    """Papers whose citation key names a word written next to the marker; rarer parts count more."""

    name = "keys"

    def _named(self, query: Query) -> dict[str, tuple[str, ...]]:
        """The words next to the marker that name a few papers' keys -> those papers."""
        index: KeysIndex = derived(self.library, KEYS)
        named = {}
        for word in {fold(w) for w in KEY_RUN.findall(query.near)}:
            postings = index.postings.get(word, ())
            if 0 < len(postings) <= MAX_POSTINGS:
                named[word] = postings
        return named

    def skip_reason(self, query: Query) -> str | None:
        if not query.near:
            return "no words next to the marker"
        return None if self._named(query) else "no word next to the marker is in a citation key"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"near": query.near}

    def search(self, query: Query) -> list[Hit]:
        scores: dict[str, float] = {}
        for postings in self._named(query).values():
            for doc_id in postings:
                scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / len(postings) ** 0.5
        return hits_from_scores(scores, self.k)
