"""The one key of every paper a run writes, for both faces (issue 48): :meth:`Keys.key_of`.

Every key a run writes comes from one :class:`Keys`: the Cite page's cards and its .bib download, ``fill``'s
listing of the literature, its ``--bib-out``, ``new-references.bib`` and its filled draft. So the card shows the
key the downloaded .bib holds, and two papers never share a key.

- A paper with its own key (from the user's .bib, Zotero, a paper added earlier) keeps it, unless another paper
  of the run holds it already.
- A keyless paper of the library keeps the key a .bib export has always given it (Google Scholar's
  ``vaswani2017attention``, ``a``, ``b``... for the same key twice, in the library's order): :class:`KeyBook`.
- A new paper (the literature's, a paper without a key in the paired .bib) gets a key in the user's style
  (:func:`citefinder.library.keystyle.key_in_style`), or the key it was shown under when still free.

Keys are compared as BibTeX compares them, ignoring case: ``Muller2020Ranking`` in the .bib means a new paper
never gets ``muller2020ranking``. Reserved: every key of the library (its keyless papers' export keys too), the
keys of the paired .bib files and ``new-references.bib`` (:meth:`Keys.reserve`) and every key given in the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from citefinder.library.keystyle import DEFAULT, KeyStyle, key_in_style, read_style
from citefinder.types import Candidate, Paper

__all__ = ["KeyBook", "Keys", "fold", "key_book"]


def fold(key: str) -> str:
    """A key as BibTeX compares it: ``Muller2020Ranking`` and ``muller2020ranking`` are one key."""
    return key.casefold()


@dataclass(frozen=True)
class KeyBook:
    """What a library says about keys: the user's style, every key its papers are written under (their own keys,
    and for a keyless paper the key a .bib export gives it), and those export keys by doc_id."""

    style: KeyStyle
    keys: frozenset[str]
    given: Mapping[str, str] = field(default_factory=dict)  # keyless paper's doc_id -> its export key
    owners: Mapping[str, str] = field(default_factory=dict)  # folded key -> the doc_id written under it


def key_book(papers: Iterable[Paper]) -> KeyBook:
    """The :class:`KeyBook` of a library's papers (in the library's order: the first keyless paper of a base key
    keeps it, the next get ``a``, ``b``...)."""
    papers = list(papers)
    owners = {fold(p.key): p.doc_id for p in papers if p.key}
    given: dict[str, str] = {}
    for p in papers:
        if not p.key and p.doc_id not in given:
            given[p.doc_id] = key = key_in_style(p, DEFAULT, lambda k: fold(k) in owners)
            owners[fold(key)] = p.doc_id
    keys = {p.key for p in papers if p.key} | set(given.values())
    return KeyBook(read_style(papers).style, frozenset(keys), given, owners)


class Keys:
    """The keys of one run (a fill, a page's run): :meth:`key_of` is the only maker. ``taken``: keys the run writes
    besides the library's (the paired .bib files', ``new-references.bib``'s); ``book``: the library's (read from
    it the first time a key is needed when None)."""

    def __init__(self, library: Any, taken: Iterable[str] = (), *, book: KeyBook | None = None) -> None:
        self.library = library
        self._book = book
        self.reserved: dict[str, str | None] = {}  # folded key -> the doc_id given it (None: not known)
        self.given: dict[str, str] = {}  # doc_id -> its key in this run
        self.reserve(taken)

    @property
    def book(self) -> KeyBook:
        if self._book is None:
            self._book = key_book(self.library.iter_papers()) if self.library is not None else key_book(())
        return self._book

    @property
    def style(self) -> KeyStyle:
        return self.book.style

    def reserve(self, keys: Iterable[str]) -> None:
        """Keys the run writes besides the library's (a .bib's, an export's): never given to a new paper."""
        for k in keys:
            if k:
                self.reserved.setdefault(fold(k), None)

    def _owner(self, key: str) -> str | None:
        k = fold(key)
        if k in self.reserved:
            return self.reserved[k] or self.book.owners.get(k) or ""
        return self.book.owners.get(k)

    def taken(self, key: str) -> bool:
        """Whether ``key`` (in any case) is written for some paper of the run already."""
        if self._owner(key) is not None:
            return True
        return self.library is not None and self.library.by_key(key) is not None

    def key_of(self, paper: Paper, *, shown: str | None = None) -> str:
        """THE key of ``paper`` in this run: the one given it already; its own key (or its export key when
        keyless) unless another paper holds it; else ``shown`` when free; else a new key in the user's style."""
        if paper.doc_id in self.given:
            return self.given[paper.doc_id]
        key = paper.key or self.book.given.get(paper.doc_id)
        if key is None or self._owner(key) not in (None, paper.doc_id):
            key = shown if shown and not self.taken(shown) else key_in_style(paper, self.style, self.taken)
        self.given[paper.doc_id] = key
        self.reserved[fold(key)] = paper.doc_id
        return key

    def key(self, candidate: Candidate, *, shown: str | None = None) -> str:
        """A literature ``candidate``'s key if added (its literature key is not the user's: a new key)."""
        return self.key_of(replace(candidate.paper, doc_id=candidate.doc_id, key=None), shown=shown)

    def paper(self, candidate: Candidate, *, shown: str | None = None) -> Paper:
        """``candidate`` as a paper of the user's library, under its :meth:`key`."""
        from citefinder.pipeline.literature import own_paper

        return own_paper(candidate, self.key(candidate, shown=shown))
