"""How many papers a .bib holds: the one count every page says (issue 48).

A .bib can hold more entries than works: the same work under two keys (the same DOI, arXiv id, or title by the
same first author within a year), or one key given to two entries (BibTeX reads the first). Imported, such entries
are one paper (:meth:`citefinder.library.store.Library.add_papers` and :func:`citefinder.library.link.sync_file`
dedupe by :func:`~citefinder.library.identity.dedupe_keys` and :func:`~citefinder.library.identity.same_work`), so
the Library, *Complete* and Check pages count papers. The Cite page counts the file it is given before any import:
:func:`count_read` applies the same rule to the entries read, so both say the same number, and
:meth:`BibCount.words` says how many entries repeat a work when some do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citefinder.library.identity import Identity, dedupe_keys, identity, same_work
from citefinder.types import ImportFailure, Paper

if TYPE_CHECKING:
    from citefinder.library.store import Library


@dataclass(frozen=True)
class BibCount:
    """``papers``: the works a .bib holds (what a fill suggests from, what the library stores); ``entries``: the
    entries read (one per key, as BibTeX reads them); ``unread``: entries that could not be read."""

    papers: int
    entries: int
    unread: int = 0

    @property
    def repeats(self) -> int:
        """Entries that are another entry's work (same DOI, arXiv id or title and author)."""
        return max(0, self.entries - self.papers)

    def words(self) -> str:
        """"61 papers", or "61 papers (70 entries: 9 repeat another entry's work)"."""
        out = _plural(self.papers, "paper")
        if self.repeats:
            verb = "repeats" if self.repeats == 1 else "repeat"
            out += f" ({_plural(self.entries, 'entry')}: {self.repeats} {verb} another entry's work)"
        return out


def _plural(n: int, noun: str) -> str:
    if n == 1:
        return f"1 {noun}"
    return f"{n:,} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def count_read(items: Iterable[Paper | ImportFailure]) -> BibCount:
    """Count what :func:`citefinder.library.readers.read_papers` read from one file, as an import stores it."""
    keys: dict[str, Identity] = {}
    cite_keys: set[str] = set()
    papers = entries = unread = 0
    for item in items:
        if isinstance(item, ImportFailure):
            unread += 1
            continue
        if item.key:
            if item.key in cite_keys:  # a key given twice: BibTeX (and the link) read the first
                continue
            cite_keys.add(item.key)
        entries += 1
        who = identity(item)
        mine = dedupe_keys(item) + (f"id:{item.doc_id}",)
        if any(same_work(k, keys.get(k), who) for k in mine):
            continue
        papers += 1
        for k in mine:
            keys.setdefault(k, who)
    return BibCount(papers, entries, unread)


def count_file(path: Path | str) -> BibCount:
    """:func:`count_read` of the file at ``path``."""
    from citefinder.library.readers import read_papers

    return count_read(read_papers(Path(path)))


def count_library(library: Library) -> BibCount:
    """The count of a library that follows linked files (a paired .bib's library): its papers, and the entries
    of its files that name them."""
    from citefinder.library.link import linked_entries

    papers = library.count()
    return BibCount(papers, max(papers, linked_entries(library)))
