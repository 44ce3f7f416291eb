"""Preprints that were published: which .bib entries cite a preprint, which records are a published version, and
when a published record is the same work as a cited preprint.

An entry is *cited as a preprint* (:func:`preprint_form`) when a field names a preprint server (``journal =
{arXiv preprint arXiv:1412.6980}``, ``{CoRR}``, ``bioRxiv``, ``howpublished = {arXiv:...}``, ``note``, ``publisher
= {arXiv}``), when it is DBLP's CoRR record (key ``DBLP:journals/corr/...``, ``volume = {abs/...}``), or when it
carries an ``eprint`` / arXiv id / arXiv DOI and no venue of its own. An entry with a proceedings or journal venue
and an ``eprint`` field (DBLP writes one on published papers) is not a preprint.

A record is a *published version* (:func:`published_of`) when it names a venue that is not a preprint server. It
is the *same work* as the preprint (:func:`same_published_work`) by :mod:`citefinder.library.identity`'s rule, as
:mod:`citefinder.sources.same` extends it to a work's versions: the same arXiv id (or arXiv DOI) with titles that
agree, or the same normalised title by the same first author (both known) at most three years apart, the title
not generic. A sequel ("... II"), another author's same title, or years further apart are not matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from citefinder.library.identity import (
    arxiv_id_from_doi,
    first_author_surname,
    generic_title,
    normalize_arxiv_id,
    normalize_doi,
    normalize_title,
    title_words,
)
from citefinder.types import Paper

VERSION_YEARS = 3  # a preprint and its proceedings / journal version: at most this many years apart
SERVERS = re.compile(r"\b(arxiv|corr|biorxiv|medrxiv|chemrxiv|ssrn|psyarxiv|preprints?|e-?print)\b", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_DBLP_CORR = re.compile(r"journals/corr/", re.IGNORECASE)
_ABS_VOLUME = re.compile(r"^\s*abs/", re.IGNORECASE)
_PROCEEDINGS = re.compile(r"\b(proc\.?|proceedings|conference|conf\.?|workshop|symposium|meeting|congress|"
                          r"neurips|nips|icml|iclr|cvpr|iccv|eccv|acl|emnlp|naacl|eacl|coling|aaai|ijcai|kdd|"
                          r"sigir|www|icra|iros|interspeech|icassp|uai|aistats|colt|miccai|osdi|sosp|nsdi|"
                          r"usenix|findings)\b", re.IGNORECASE)
# the .bib fields that may name where a work appeared, in the order they are read
VENUE_FIELDS = ("journal", "booktitle", "howpublished", "publisher", "note", "institution", "school")


@dataclass(frozen=True)
class Published:
    """Where a work was published, as a .bib entry writes it: ``entry_type`` ("inproceedings" or "article"), the
    venue (a booktitle or a journal), the year, pages, volume, number, DOI; and the record it came from
    (``source``, ``source_id``: "dblp", "conf/iclr/KingmaB14")."""

    entry_type: str
    venue: str
    year: int | None = None
    pages: str | None = None
    volume: str | None = None
    number: str | None = None
    doi: str | None = None
    source: str = ""
    source_id: str = ""

    @property
    def venue_field(self) -> str:
        return "journal" if self.entry_type == "article" else "booktitle"

    def line(self) -> str:
        """"ICLR 2015, pages 1-15, doi:10.x/y" (what is known)."""
        parts = [self.venue + (f" {self.year}" if self.year else "")]
        if self.volume:
            parts.append(f"vol. {self.volume}")
        if self.pages:
            parts.append(f"pages {self.pages}")
        if self.doi:
            parts.append(f"doi:{self.doi}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


def names_server(text: str | None) -> bool:
    """Whether ``text`` (a venue, a note) names a preprint server: arXiv, CoRR, bioRxiv, "preprint"..."""
    return bool(text and SERVERS.search(text))


def entry_fields(paper: Paper) -> dict[str, str]:
    """The fields of ``paper``'s own .bib text (lower-cased names, values without their outer braces or quotes);
    {} for a paper without one."""
    if not paper.bibtex:
        return {}
    from citefinder.library.bibfields import parse_entry  # noqa: PLC0415

    entry = parse_entry(paper.bibtex, paper.key)
    return {f.name.lower(): f.plain for f in entry.fields} if entry is not None else {}


def preprint_form(paper: Paper) -> str | None:
    """How ``paper`` (a .bib entry) is cited as a preprint, or None when it is not: "journal = arXiv preprint",
    "DBLP CoRR", "eprint without a venue"..."""
    fields = entry_fields(paper)
    if _DBLP_CORR.search(paper.key or "") or _DBLP_CORR.search(fields.get("biburl", "")) \
            or _ABS_VOLUME.match(fields.get("volume", "")):
        return "DBLP CoRR"
    for name in VENUE_FIELDS[:5]:
        if names_server(fields.get(name)):
            return f"{name} = {fields[name]}"
    if not fields and names_server(paper.venue):
        return f"venue {paper.venue}"
    real_venue = any(fields.get(n) for n in ("journal", "booktitle")) or (not fields and paper.venue)
    if real_venue:
        return None
    if fields.get("eprint") and (fields.get("archiveprefix") or fields.get("eprinttype") or "arxiv").lower() in (
            "arxiv", "biorxiv", "medrxiv"):
        return "eprint without a venue"
    if arxiv_id_from_doi(paper.doi):
        return "an arXiv DOI without a venue"
    if paper.arxiv_id and (paper.entry_type or "misc") in ("misc", "unpublished", "article", "online", "techreport"):
        return "an arXiv id without a venue"
    return None


def entry_type_of(venue: str, given: str | None = None) -> str:
    """"inproceedings" or "article": the record's own type when it is one of them, else by the venue's words."""
    if given in ("inproceedings", "article"):
        return given
    if given in ("conference", "proceedings-article"):
        return "inproceedings"
    return "inproceedings" if _PROCEEDINGS.search(venue) else "article"


def published_of(record: Paper, *, source: str = "", source_id: str = "") -> Published | None:
    """``record`` as a published version (None when it names no venue, or only a preprint server); its pages and
    volume from its fields, else from its own .bib text."""
    fields = entry_fields(record)
    venue = (fields.get("booktitle") or fields.get("journal") or record.venue or "").strip()
    if not venue or names_server(venue) or _ABS_VOLUME.match(fields.get("volume", "")):
        return None
    if record.entry_type in ("misc", "unpublished", "techreport", "phdthesis", "mastersthesis"):
        return None
    doi = normalize_doi(record.doi)
    if doi and arxiv_id_from_doi(doi):
        doi = None  # the preprint's own DOI is not the published version's
    kind = entry_type_of(venue, "inproceedings" if fields.get("booktitle") else
                         "article" if fields.get("journal") else record.entry_type)
    year = record.year
    if record.arxiv_id and (m := _YEAR.findall(venue)) and year and 0 <= int(m[-1]) - year <= VERSION_YEARS:
        year = int(m[-1])  # an arXiv record's year is the preprint's; its journal-ref names the publication's
    return Published(kind, " ".join(venue.split()), year, record.pages or fields.get("pages") or None,
                     record.volume or fields.get("volume") or None, fields.get("number") or None, doi,
                     source or record.source or "", source_id or record.doc_id)


def _titles_agree(a: str, b: str) -> bool:
    wa, wb = set(title_words(a)), set(title_words(b))
    return not wa or not wb or len(wa & wb) >= 0.5 * min(len(wa), len(wb))


def same_published_work(entry: Paper, record: Paper) -> bool:
    """Whether ``record`` is a version of the work ``entry`` cites (module rule): the same arXiv id or DOI with
    agreeing titles, or the same title by the same first author at most :data:`VERSION_YEARS` apart."""
    mine_ax, theirs_ax = _arxiv(entry), _arxiv(record)
    if mine_ax and theirs_ax:
        return mine_ax == theirs_ax and _titles_agree(entry.title, record.title)
    mine_doi, theirs_doi = normalize_doi(entry.doi), normalize_doi(record.doi)
    if mine_doi and theirs_doi and mine_doi == theirs_doi:
        return _titles_agree(entry.title, record.title)
    title = normalize_title(entry.title)
    if not title or title != normalize_title(record.title) or generic_title(entry.title):
        return False
    a, b = first_author_surname(entry), first_author_surname(record)
    if not a or a != b or entry.year is None or record.year is None:
        return False
    return abs(entry.year - record.year) <= VERSION_YEARS


def _arxiv(paper: Paper) -> str | None:
    return normalize_arxiv_id(paper.arxiv_id) or arxiv_id_from_doi(paper.doi)
