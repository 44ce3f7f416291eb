"""OpenAlex (https://docs.openalex.org) as a source, through ``pyalex``.

``pyalex`` builds each query (``Works().filter_or(doi=[...])``, ``search_filter(title=...)``, ``search(...)``,
``select(...)``) and decodes the abstracts (``invert_abstract`` of ``abstract_inverted_index``). It does not send
them here: its URLs are fixed to https://api.openalex.org, its calls have no time-out, and its contact address
is a module-wide setting shared by every user of the process; so the query it built is sent by
:mod:`citefinder.sources.online.http` to the configured base URL (``openalex_url``), the contact address in the
User-Agent (the polite pool), never in the URL.

DOIs are asked 50 at a time (``filter=doi:a|b|c``; OpenAlex takes up to 100 values in one OR filter), arXiv ids
as their arXiv DOIs (``10.48550/arXiv.<id>``: OpenAlex has no arXiv-id filter; a work it merged under its
publisher's DOI is then found by its title), titles with ``title.search`` within three years of the entry's.
The documented limit is 10 requests a second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from citefinder.library.identity import arxiv_id_from_doi, normalize_arxiv_id, normalize_title
from citefinder.sources.base import Lookup, LookupBy, SourceRecord
from citefinder.sources.online.service import (
    OnlineSource,
    keyed,
    need,
    open_http,
    record,
    sends_text,
    with_contact,
)

NAME = "openalex"
INTERVAL_S = 0.1  # "max 10 requests per second" (docs.openalex.org, rate limits)
FIELDS = ["id", "doi", "title", "display_name", "publication_year", "authorships", "abstract_inverted_index",
          "primary_location", "locations", "biblio", "type"]
_TYPES = {"article": "article", "proceedings-article": "inproceedings", "book-chapter": "incollection",
          "preprint": "misc"}
YEARS = 3  # a title is asked within this many years of the entry's (a preprint and its journal version)


class OpenAlex(OnlineSource):
    name = NAME
    completes_with = ("title", "doi", "arxiv-doi", "years")  # what its lookups send (service.SENT)
    id_batch = 50

    def _path(self, query: Any, per_page: int) -> str:
        """The path and query ``pyalex`` built, with the page size (``per-page``, at most 200)."""
        url = urlsplit(query.select(FIELDS).url)
        return f"{url.path}?{url.query}&per-page={max(1, min(per_page, 200))}"

    def _works(self, query: Any, per_page: int, what: str) -> list[SourceRecord]:
        data = self.get(self._path(query, per_page), what)
        if data is None:
            return []
        return [r for w in _results(data, what) if (r := _record(w)) is not None]

    def by_ids(self, by: LookupBy, values: Sequence[str]) -> Mapping[str, list[SourceRecord]]:
        pyalex = need("pyalex", NAME)
        dois = list(values) if by == "doi" else [f"10.48550/arxiv.{v}" for v in values]
        found = self._works(pyalex.Works().filter_or(doi=dois), len(dois), f"{len(dois)} {by} ids")
        return keyed(found, by, values)

    def by_title(self, query: Lookup) -> list[SourceRecord]:
        pyalex = need("pyalex", NAME)
        works = pyalex.Works().search_filter(title=normalize_title(query.value))
        if query.year:
            works = works.filter(publication_year=f"{query.year - YEARS}-{query.year + YEARS}")
        return self._works(works, 10, "a title")

    def find(self, text: str, k: int) -> list[SourceRecord]:
        pyalex = need("pyalex", NAME)
        return self._works(pyalex.Works().search(text), k, "a search")


def _results(data: Any, what: str) -> list[dict[str, Any]]:
    from citefinder.sources.online.http import BadAnswer

    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise BadAnswer(f"{NAME}: an answer to {what} without results, not used")
    return [w for w in results if isinstance(w, dict)]


def _record(work: dict[str, Any]) -> SourceRecord | None:
    """An OpenAlex work as a record: the W id, the DOI (an arXiv DOI gives the arXiv id), the authorships' names,
    the primary location's source as the venue, the abstract decoded from its inverted index."""
    from pyalex import invert_abstract

    wid = str(work.get("id") or "").rsplit("/", 1)[-1]
    title = work.get("title") or work.get("display_name") or ""
    if not wid or not title:
        return None
    doi = work.get("doi")
    arxiv = arxiv_id_from_doi(doi) or _arxiv_location(work)
    authors = [((a.get("author") or {}).get("display_name") or "") for a in work.get("authorships") or []
               if isinstance(a, dict)]
    venue, kind = _venue(work)
    year = work.get("publication_year")
    biblio: dict[str, Any] = work["biblio"] if isinstance(work.get("biblio"), dict) else {}
    first, last = (str(biblio.get(k) or "") for k in ("first_page", "last_page"))
    pages = (f"{first}--{last}" if last and last != first else first) or None
    return record(NAME, wid, title=title, authors=authors, year=year if isinstance(year, int) else None,
                  venue=venue, abstract=invert_abstract(work.get("abstract_inverted_index")) or "", doi=doi,
                  arxiv_id=arxiv, ids=(("openalex", wid),), pages=pages, volume=biblio.get("volume") or None,
                  entry_type="inproceedings" if kind == "conference" else _TYPES.get(str(work.get("type") or "")))


def _venue(work: dict[str, Any]) -> tuple[str | None, str | None]:
    """The primary location's source (its name and type), unless it is a repository (arXiv) and another location
    is a journal or a conference: then that one, where the work was published."""
    primary = (work.get("primary_location") or {}).get("source") or {}
    if primary.get("type") == "repository":
        for location in work.get("locations") or []:
            source = (location or {}).get("source") or {}
            if source.get("type") in ("journal", "conference") and source.get("display_name"):
                return str(source["display_name"]), str(source["type"])
    return primary.get("display_name"), primary.get("type")


def _arxiv_location(work: dict[str, Any]) -> str | None:
    """The arXiv id of a location on arxiv.org (``landing_page_url`` https://arxiv.org/abs/<id>)."""
    for location in work.get("locations") or []:
        url = (location or {}).get("landing_page_url") or ""
        if "arxiv.org/abs/" in url and (arxiv := normalize_arxiv_id(url)):
            return arxiv
    return None


def open_openalex(settings: Any) -> OpenAlex:
    need("pyalex", NAME)
    headers = with_contact(settings)
    http = open_http(NAME, settings.openalex_url, settings, interval_s=INTERVAL_S, headers=headers)
    return OpenAlex(http, sends_text(http.host, OpenAlex.completes_with, contact=bool(headers),
                                       context_sentences=settings.context_sentences))
