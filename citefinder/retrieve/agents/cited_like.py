"""The "cited-like" agent: the citing sentences in the memory nearest to the slot's (by embedding),
each voting for the paper it cites.

A paper scores the similarity of its nearest citing sentence (more sentences add nothing: a paper cited in
hundreds of similar sentences must not win on numbers alone), and only a close one counts. Both measured
on the drafts-dev training part (``bench/probes/memory_probe.py`` at bc9259c, bench/RESULTS.md): the nearest
sentence alone put the gold paper first for 31% of the slots the memory covers, against 17% when each
further sentence added a tenth of its cosine; a paper whose nearest sentence is below 0.5 (MiniLM
cosines) was left out because, listed, it lifted wrong papers of slots the memory does not cover.
The trace shows, per paper it ranks, that sentence and where it comes from ("cited elsewhere as").
"""

from __future__ import annotations

from dataclasses import replace

from citefinder.index.citations import CITATION_VECTORS, CitationVectors
from citefinder.index.memory import memory_index
from citefinder.index.vectors import query_vector
from citefinder.library.contexts.memory import memory_of
from citefinder.retrieve.agents.dense import dense_text
from citefinder.retrieve.base import LibraryAgent, hits_from_scores
from citefinder.types import Hit, Query, StageTrace

NEAREST = 200  # citing sentences read
MIN_SIMILARITY = 0.5  # a paper whose nearest citing sentence is further than this is not listed
OWN_BONUS = 0.1  # added to the cosine of the user's own sentences (picks, LaTeX): the user's usage counts more
EVIDENCE = 5  # papers whose nearest sentence the trace shows
# Which embedder reads the slot: the memory's sentences were embedded by the library's embedder, and a query
# encoder trained to reach papers is not trained to reach sentences (bench/RESULTS.md, issue 28).
AGAINST = "sentences"


class CitedLikeAgent(LibraryAgent):
    name = "cited-like"
    needs_vectors = True  # a dense list: k_dense hits

    def skip_reason(self, query: Query) -> str | None:
        reason = memory_index(self.library, CITATION_VECTORS)[1]
        return reason or (None if dense_text(query).strip() else "empty query")

    def inputs(self, query: Query) -> dict[str, object]:
        return {"text": dense_text(query)}

    def _nearest(self, text: str) -> list[tuple[int, str, float]]:
        index: CitationVectors | None = memory_index(self.library, CITATION_VECTORS)[0]
        if index is None:
            return []
        return index.nearest(query_vector(self.library, text, against=AGAINST), NEAREST, OWN_BONUS)

    def search(self, query: Query) -> list[Hit]:
        scores: dict[str, float] = {}
        for _record, doc_id, sim in self._nearest(dense_text(query)):
            if sim >= MIN_SIMILARITY:
                scores.setdefault(doc_id, sim)  # nearest first: the paper's best sentence
        return hits_from_scores(scores, self.k)

    def finish_trace(self, trace: StageTrace) -> StageTrace:
        """Add each top paper's nearest citing sentence (recomputed from the trace's own input: agents
        are shared between threads, so nothing is kept between search and trace)."""
        if trace.status != "ok" or not trace.top:
            return trace
        best: dict[str, int] = {}
        for record, doc_id, _sim in self._nearest(str(trace.inputs.get("text", ""))):
            best.setdefault(doc_id, record)
        wanted = [best[h.doc_id] for h in trace.top[:EVIDENCE] if h.doc_id in best]
        found = memory_of(self.library).evidence(wanted)
        evidence = {found[r].doc_id: found[r].to_dict() for r in wanted if r in found}
        return replace(trace, details={**trace.details, "cited_elsewhere_as": evidence})
