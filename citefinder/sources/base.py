"""The protocol every source of the literature implements, and the records it answers with.

A source answers two questions: *which of your works is this?* (:meth:`Source.lookup`: candidate records for a
DOI, an arXiv id or a title, in batches) and *which works fit this text?* (:meth:`Source.search`). It never
decides sameness itself: :mod:`citefinder.sources.same` does, through :mod:`citefinder.library.identity`, so a
local dump and an online service agree on what counts as the same work. Modelled on PaperQA2's metadata
providers (one client per service behind one interface) and on ``rerankers`` (one small protocol, many
backends, no hard dependency at import).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol, runtime_checkable

from citefinder.types import Paper, Query

LookupBy = Literal["doi", "arxiv", "title"]
SEARCH_CHARS = 400  # a slot's text is cut to this many characters before it is sent
MARKER = "[CITATION]"


def search_text(query: Query) -> str:
    """What a source's :meth:`Source.search` is sent for a slot, and nothing more: the slot's text as the engine
    reads it (its sentence, with ``context_sentences`` neighbours on each side when the settings ask for them),
    without the citation marker, whitespace folded, cut to :data:`SEARCH_CHARS` characters.
    :func:`searched_text` says it in words; the disclosures quote that."""
    return fold(query.text.replace(MARKER, " "))


def fold(text: str) -> str:
    """``text`` with its whitespace folded and cut to :data:`SEARCH_CHARS` characters (every search sends this)."""
    return " ".join(text.split())[:SEARCH_CHARS].strip()


def searched_text(context_sentences: int = 0) -> str:
    """What :func:`search_text` sends, in the words of a disclosure."""
    around = (f" and the {context_sentences} sentence{'s' if context_sentences > 1 else ''} on each side of it"
              if context_sentences else "")
    return f"each slot's sentence{around} (at most {SEARCH_CHARS} characters)"


@dataclass(frozen=True)
class Lookup:
    """One question for :meth:`Source.lookup`: the work with this DOI / arXiv id (normalised), or with this
    title (as written; a source searches it its own way). ``year`` and ``first_author`` (a folded surname) are
    hints a title search may send; sameness is decided afterwards, never by the source."""

    by: LookupBy
    value: str
    year: int | None = None
    first_author: str | None = None


@dataclass(frozen=True)
class SourceRecord:
    """A work as a source describes it: the paper (``doc_id`` made by the identity rule, ``ids`` holding the
    source's own id), the source's name and the id the source knows it by."""

    paper: Paper
    source: str
    source_id: str

    def with_provenance(self, fields: Sequence[str]) -> Paper:
        """The record's paper with ``fields`` marked as found in this source."""
        return replace(self.paper, provenance=tuple((f, self.source, self.source_id) for f in fields))


@runtime_checkable
class Source(Protocol):
    """A source of the literature.

    ``name``: how traces, provenance and messages name it ("papers-333k", "openalex").
    ``sends``: what a call sends off this machine, said before the first call ("" for a local source)."""

    name: str
    sends: str

    def lookup(self, queries: Sequence[Lookup]) -> list[list[SourceRecord]]:
        """Candidate records for each query, in order (an empty list: nothing found). A source with a batch
        endpoint answers many queries in one call; errors that lose one query's answer leave it empty and are
        logged, errors that lose every answer raise a :class:`~citefinder.errors.SourceError`."""
        ...

    def search(self, text: str, k: int) -> list[SourceRecord]:
        """The source's best ``k`` works for ``text`` (a slot's sentence, a question), best first."""
        ...
