"""Adding a paper from the literature to the user's library, one way for both faces: the Cite page's *Add to my
library* and ``fill --add-from-literature`` (issues 42, 44 and 45).

- The new key is the user's: in the style their own keys are written in (:mod:`citefinder.library.keystyle`:
  ``Ke2017LightGBMAH`` beside Semantic Scholar's keys, ``he2016deep`` beside Google Scholar's), and unique
  against every key the run writes (:class:`~citefinder.workflow.keys.Keys`, the one maker of keys): the
  library's keys, the key each keyless paper of the library is exported under, the .bib files the draft
  cites, ``new-references.bib``, and the keys made in this
  run. Two papers never share a key (He 2016 *Deep Residual Learning* and He 2016 *Deep Residual Networks with
  Exponential Linear Unit* are ``he2016deep`` and ``he2016deepa``).
- :func:`add_to_library` stores the paper (the page); the CLI plans ``new-references.bib`` first
  (:func:`new_references`: the entries it held are kept and the new ones appended, so a second addition keeps
  the first) and stores the papers once the files are written.
- :func:`picks_from_results` reads the papers a fill's ``--json`` file marks ``"add": true``; anything else in
  it is one :class:`~citefinder.errors.InputError` line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.library.bibtex import grown_bib, papers_to_bibtex
from citefinder.types import Candidate, Paper
from citefinder.workflow.keys import KeyBook, Keys, key_book

log = logging.getLogger(__name__)

__all__ = ["Added", "KeyBook", "Keys", "MarkedPicks", "add_to_library", "bib_keys", "key_book", "new_references",
           "picks_from_results"]


@dataclass(frozen=True)
class Added:
    """A paper added to the library: as stored (its key), and whether it is new there (False: the library held
    the same work already, and its entry is the one cited)."""

    paper: Paper
    new: bool


def add_to_library(library: Any, candidate: Candidate, *, keys: Keys | None = None) -> Added:
    """*Add to my library*: ``candidate`` stored under a key of ``keys`` (made from the library when None)."""
    held = library.match(candidate.paper)  # the same work (DOI, arXiv id, title with year and first author)
    if held is not None:  # linked to the entry the library holds: never added twice, its key never changed
        stored = library.get([held])
        if stored:
            return Added(stored[0], False)
    keys = keys if keys is not None else Keys(library)
    paper = keys.paper(candidate)
    report = library.add_papers([paper])
    doc_id = paper.doc_id if report.added else (library.match(paper) or paper.doc_id)
    stored = library.get([doc_id])
    return Added(stored[0] if stored else paper, bool(report.added))


def bib_keys(path: Path | None) -> set[str]:
    """The keys the .bib at ``path`` holds (none when it is not there or cannot be read)."""
    if path is None or not path.is_file():
        return set()
    from citefinder.library.readers import read_papers

    try:
        return {p.key for p in read_papers(path) if isinstance(p, Paper) and p.key}
    except Exception as e:  # noqa: BLE001 - a .bib that cannot be read holds no key we may count on
        log.warning("cannot read the keys of %s: %s", path, e)
        return set()


def new_references(papers: Sequence[Paper], held: str = "", held_keys: Iterable[str] = (), *,
                   name: str = "new-references.bib") -> tuple[str, dict[str, str]]:
    """The text of ``new-references.bib``: ``held`` (what it holds now, byte for byte; InputError when it is
    not a .bib BibTeX reads) and an entry for each of ``papers`` whose key it does not hold (``held_keys``) yet;
    and each paper's doc_id -> its key."""
    known = set(held_keys)
    bib, keys = papers_to_bibtex([p for p in papers if p.key not in known])
    keys.update({p.doc_id: p.key for p in papers if p.key in known})
    return grown_bib(held, name, bib), keys


@dataclass(frozen=True)
class MarkedPicks:
    """The literature papers a fill's ``--json`` file marks ``"add": true``: slot index -> papers, and the
    sentence of each slot (the draft's must still be the same)."""

    chosen: Mapping[int, tuple[Candidate, ...]]
    sentences: Mapping[int, str]


def picks_from_results(rows: object, name: str) -> MarkedPicks:
    """The marked papers of ``rows`` (the parsed ``--json`` file called ``name``); an InputError naming what is
    wrong when it is not such a file, nothing marked included."""
    def bad(what: str) -> InputError:
        return InputError(f"{name}: {what}; give the --json file of a fill with --literature, with \"add\": true on "
                          "the papers to add (nothing was written).")

    if not isinstance(rows, list):
        raise bad("not a list of slot results")
    chosen: dict[int, list[Candidate]] = {}
    sentences: dict[int, str] = {}
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise bad(f"item {i} is not a slot's result (an object)")
        offered = row.get("literature") or []
        if not isinstance(offered, list):
            raise bad(f"item {i}'s \"literature\" is not a list")
        marked = [(j, c) for j, c in enumerate(offered, 1) if isinstance(c, dict) and c.get("add") is True]
        if not marked:
            continue
        slot = row.get("slot")
        index = slot.get("index") if isinstance(slot, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise bad(f"item {i} has no slot \"index\" (a whole number)")
        for j, c in marked:
            chosen.setdefault(index, []).append(_candidate(c, f"item {i}, literature paper {j}", bad))
        sentences[index] = str(slot.get("sentence", "")) if isinstance(slot, dict) else ""
    if not chosen:
        raise InputError(f"{name} marks no literature paper to add: set \"add\": true on the ones you want in a "
                         "slot's \"literature\" list (the --json file of a fill with --literature).")
    return MarkedPicks({k: tuple(v) for k, v in chosen.items()}, sentences)


def _candidate(c: dict[str, Any], where: str, bad: Any) -> Candidate:
    paper = c.get("paper")
    if not isinstance(paper, dict) or not isinstance(paper.get("doc_id"), str) or not paper["doc_id"] \
            or not isinstance(paper.get("title"), str):
        raise bad(f"{where} has no \"paper\" with a \"doc_id\" and a \"title\"")
    if not isinstance(paper.get("authors") or [], list) or not all(isinstance(a, str) for a in paper.get("authors")
                                                                   or []):
        raise bad(f"{where}: its \"authors\" are not a list of names")
    if paper.get("year") is not None and (not isinstance(paper["year"], int) or isinstance(paper["year"], bool)):
        raise bad(f"{where}: its \"year\" is not a whole number")
    try:
        return Candidate.from_dict(c)
    except (KeyError, TypeError, ValueError) as e:
        raise bad(f"{where} cannot be read ({type(e).__name__}: {e})") from e
