"""Which record of a source is the user's work: the one decision every source's answers go through.

Asked in order of strength — the DOI, then the arXiv id, then the title — a record is the same work only by
:mod:`citefinder.library.identity`'s rule: the same normalised DOI or arXiv id, or the same normalised title that
neither the year (more than one apart) nor the first author's surname contradicts; and, when no record of the
paper's own years fits, another version of it (:func:`other_version`: the same title by the same first author, at
most three years apart: a preprint and its journal version). A record found by its DOI or arXiv id whose title
contradicts the entry's (:func:`titles_agree`: a .bib entry carrying another paper's id) is no match either,
and the entry is asked again by its title. A wrong match is the worst outcome, so a title match is taken only
when it is sure (:func:`citefinder.library.identity.title_doubt`: the title is not generic and both records
carry the year and first author that agree); otherwise it is *ambiguous* and left alone, even when the source
holds one record of that title (``@misc{deeplearning, title={Deep Learning}}`` is not taken for LeCun's review
because the literature holds no other "Deep Learning"; "Introduction" by Smith 2016 is not an authorless 2016
"Introduction"), and so is a title shared by two works that both pass.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citefinder.library.identity import (
    first_author_surname,
    normalize_arxiv_id,
    normalize_doi,
    normalize_title,
    same_work,
    title_doubt,
)
from citefinder.sources.base import Lookup, LookupBy, Source, SourceRecord
from citefinder.types import Paper

log = logging.getLogger(__name__)

ORDER: tuple[LookupBy, ...] = ("doi", "arxiv", "title")
VERSION_YEARS = 3  # how far apart a work's versions may be (preprint, proceedings, journal) when the author agrees


@dataclass(frozen=True)
class Match:
    """What a source holds of one paper: the same work (``found``, and the key it was found by), or several
    works it could be (``ambiguous``: left alone, ``why``: what is missing to tell), or nothing. ``rejected``:
    records the source answered with that are not this work (a search's near misses), for the trace."""

    paper: Paper
    found: SourceRecord | None = None
    via: LookupBy | None = None
    ambiguous: tuple[SourceRecord, ...] = ()
    rejected: tuple[SourceRecord, ...] = ()
    why: str = ""


def lookup_for(paper: Paper, by: LookupBy) -> Lookup | None:
    """The question to ask a source about ``paper`` by ``by``, or None when the paper has no such key."""
    if by == "doi":
        doi = normalize_doi(paper.doi)
        return Lookup("doi", doi) if doi else None
    if by == "arxiv":
        arxiv = normalize_arxiv_id(paper.arxiv_id)
        return Lookup("arxiv", arxiv) if arxiv else None
    return Lookup("title", paper.title, paper.year, first_author_surname(paper)) if normalize_title(paper.title) \
        else None


def decide(paper: Paper, by: LookupBy, records: Sequence[SourceRecord]) -> Match:
    """The :class:`Match` the records answered for ``paper`` by ``by`` (neither found nor ambiguous: none of
    them is it, ask the next key)."""
    fits: list[SourceRecord] = []
    rejected: list[SourceRecord] = []
    for record in records:
        (fits if _is(paper, by, record.paper) else rejected).append(record)
    if not fits and by == "title":  # no record of its year: a version a few years apart by the same first author
        versions = [r for r in rejected if other_version(paper, r.paper)]
        fits, rejected = versions, [r for r in rejected if r not in versions]
    if not fits:
        return Match(paper, rejected=tuple(rejected))
    if by == "title":
        sure = [r for r in fits if title_doubt(paper, r.paper) is None]
        if not sure:  # the title alone, without the year and author that would confirm it: left alone
            return Match(paper, ambiguous=tuple(w[0] for w in _works(fits)), rejected=tuple(rejected),
                         why=title_doubt(paper, fits[0].paper) or "")
        works = _works(sure)
        if len(works) > 1:
            return Match(paper, ambiguous=tuple(w[0] for w in works), rejected=tuple(rejected),
                         why=f"{len(works)} works share the title, year and first author")
        best = max(works[0], key=lambda r: (bool(r.paper.abstract), len(r.paper.abstract)))
        return Match(paper, found=best, via=by, rejected=tuple(rejected))
    works = _works(fits)
    best = max(works[0], key=lambda r: (bool(r.paper.abstract), len(r.paper.abstract)))
    return Match(paper, found=best, via=by, rejected=tuple(rejected))


def _is(paper: Paper, by: LookupBy, other: Paper) -> bool:
    if by == "doi":
        same = normalize_doi(paper.doi) is not None and normalize_doi(paper.doi) == normalize_doi(other.doi)
        return same and titles_agree(paper.title, other.title)
    if by == "arxiv":
        mine = normalize_arxiv_id(paper.arxiv_id)
        same = mine is not None and mine == normalize_arxiv_id(other.arxiv_id)
        return same and titles_agree(paper.title, other.title)
    title = normalize_title(paper.title)
    return bool(title) and title == normalize_title(other.title) and same_work(f"title:{title}", other, paper)


_SMALL_WORDS = frozenset("a an the of for and or in on to with by from at via is are".split())


def titles_agree(mine: str, theirs: str, *, share: float = 0.5) -> bool:
    """Whether a record found by its DOI or arXiv id has a title that does not contradict the entry's: at least
    ``share`` of the shorter title's words (small words aside) in the other. A .bib entry with the id of another
    paper ("Asynchronous Methods for Deep RL" with arXiv:1605.03835, a decoding paper) is then no match, while a
    retitled version ("Recurrent Parameter Generators" -> "Compact and Optimal Deep Learning with Recurrent
    Parameter Generators") is. Without a title on either side the id decides."""
    a = set(normalize_title(mine).split()) - _SMALL_WORDS
    b = set(normalize_title(theirs).split()) - _SMALL_WORDS
    if not a or not b:
        return True
    return len(a & b) >= share * min(len(a), len(b))


def other_version(paper: Paper, other: Paper, *, years: int = VERSION_YEARS) -> bool:
    """The same normalised title by the same first author (both known) at most ``years`` apart: a preprint and
    its journal version (LDA: NIPS 2001, JMLR 2003; Faster R-CNN: 2015, TPAMI 2017), which the identity rule's
    one year tells apart. Asked only when no record of the paper's own year fits."""
    title = normalize_title(paper.title)
    if not title or title != normalize_title(other.title) or paper.year is None or other.year is None:
        return False
    mine, theirs = first_author_surname(paper), first_author_surname(other)
    return bool(mine) and mine == theirs and abs(paper.year - other.year) <= years


def _works(records: Sequence[SourceRecord]) -> list[list[SourceRecord]]:
    """``records`` grouped into distinct works (records of one work: the same DOI or arXiv id, or the same title
    that their years and first authors do not tell apart)."""
    groups: list[list[SourceRecord]] = []
    for record in records:
        for group in groups:
            if _one_work(group[0].paper, record.paper):
                group.append(record)
                break
        else:
            groups.append([record])
    return groups


def _one_work(a: Paper, b: Paper) -> bool:
    for norm, value in ((normalize_doi, "doi"), (normalize_arxiv_id, "arxiv_id")):
        x, y = norm(getattr(a, value)), norm(getattr(b, value))
        if x and y:
            return x == y
    if a.doc_id == b.doc_id:
        return True
    title = normalize_title(a.title)
    # two records without a year or author between them are not known to be one work
    known = (a.year is not None and b.year is not None) or (bool(a.authors) and bool(b.authors))
    return known and title == normalize_title(b.title) and same_work(f"title:{title}", a, b)


Progress = Callable[[int, int], None]


def find_same(source: Source, papers: Sequence[Paper], *, batch: int = 50,
              progress: Progress | None = None) -> list[Match]:
    """For each paper, what ``source`` holds of it: asked by DOI first, then by arXiv id for those not found,
    then by title; ``batch`` questions a call. ``progress(done, total)`` after each call."""
    matches = [Match(p) for p in papers]
    total = sum(any(lookup_for(p, by) for by in ORDER) for p in papers)
    asked: set[int] = set()
    for by in ORDER:
        asks = [(i, q) for i, p in enumerate(papers) if _open(matches[i]) and (q := lookup_for(p, by)) is not None]
        for start in range(0, len(asks), batch):
            chunk = asks[start:start + batch]
            answers = source.lookup([q for _, q in chunk])
            for (i, _), records in zip(chunk, answers, strict=True):
                m = decide(papers[i], by, records)
                matches[i] = m if not _open(m) else Match(papers[i], rejected=matches[i].rejected + m.rejected)
                asked.add(i)
            if progress is not None:
                progress(len(asked), total)
    return matches


def _open(match: Match) -> bool:
    """Not decided yet: neither found nor ambiguous."""
    return match.found is None and not match.ambiguous
