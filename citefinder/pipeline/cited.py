"""How often the literature cites a paper: the count the literature tier's prior reads (a landmark paper first
among near-equals, :class:`citefinder.pipeline.priors.Priors`).

Two counts, the source's own first:

- the count the dump gave with the paper (:attr:`Paper.cited_by`: OpenAlex ``cited_by_count``, Semantic Scholar
  ``citationcount``), kept on import;
- else how many citing sentences of the literature library's own citation-context memory cite it (the
  ``cocitation`` index's counts, :mod:`citefinder.index.cocitation`): for a library built from a dump without
  counts (papers-333k), the context pack imported into it at build time is the count there is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citefinder.index.cocitation import COCITATIONS
from citefinder.index.memory import memory_index
from citefinder.types import Candidate


def memory_counts(library: Any) -> dict[str, int]:
    """doc_id -> citing sentences in the library's memory that cite it ({} without a memory)."""
    index, _why = memory_index(library, COCITATIONS)
    return dict(index.counts) if index is not None else {}


def cited_counts(library: Any, candidates: Sequence[Candidate]) -> dict[str, int]:
    """How often the literature cites each candidate, where known: its own count, else the memory's."""
    counts = memory_counts(library)
    out: dict[str, int] = {}
    for c in candidates:
        n = c.paper.cited_by if c.paper.cited_by is not None else counts.get(c.doc_id)
        if n is not None:
            out[c.doc_id] = int(n)
    return out
