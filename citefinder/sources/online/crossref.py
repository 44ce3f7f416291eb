"""Crossref's REST API (https://api.crossref.org/swagger-ui/index.html) as a source, through ``habanero``.

``habanero`` writes the filters (``filterhandler.filter_handler``: ``{"doi": [a, b]}`` -> ``doi:a,doi:b``, which
Crossref ORs) and knows the API's address. It does not send the calls here: it calls ``httpx2.get`` directly (no
hook for the cache, retries or a test server's checks), so the documented ``/works`` endpoint is called through
:mod:`citefinder.sources.online.http`, the contact address in the User-Agent (Crossref's polite pool), never in the
URL. Answers are ``{"status": "ok", "message": {"total-results": n, "items": [...]}}``; abstracts are JATS XML.

DOIs are asked 50 at a time; arXiv ids are not Crossref's (arXiv's DOIs are DataCite's): answered with nothing,
no call; a title with ``query.bibliographic`` (+ ``query.author``, the first author's surname) within three years
of the entry's; a slot's sentence with ``query``. Pace: 10 calls a second with a contact address (the polite
pool), 5 without.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from citefinder.library.identity import normalize_title
from citefinder.sources.base import Lookup, LookupBy, SourceRecord
from citefinder.sources.online.http import BadAnswer
from citefinder.sources.online.service import OnlineSource, keyed, need, open_http, record, sends_text, with_contact

NAME = "crossref"
FIELDS = "DOI,title,author,issued,published,container-title,abstract,page,volume,type"
# Crossref work types as BibTeX entry types (a preprint, "posted-content", is none: not a published version)
_TYPES = {"journal-article": "article", "proceedings-article": "inproceedings", "book-chapter": "incollection",
          "posted-content": "misc"}
YEARS = 3


class Crossref(OnlineSource):
    name = NAME
    completes_with = ("title", "doi", "surname", "years")  # what its lookups send (service.SENT)
    id_batch = 50

    def _works(self, params: dict[str, Any], what: str) -> list[SourceRecord]:
        data = self.get("/works?" + urlencode({**params, "select": FIELDS}), what)
        if data is None:
            return []
        items = (data.get("message") or {}).get("items") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise BadAnswer(f"{NAME}: an answer to {what} without message.items, not used")
        return [r for item in items if (r := _record(item)) is not None]

    def by_ids(self, by: LookupBy, values: Sequence[str]) -> Mapping[str, list[SourceRecord]]:
        if by != "doi":
            return {}
        filter_handler = need("habanero.filterhandler", NAME).filter_handler
        found = self._works({"filter": filter_handler({"doi": list(values)}), "rows": len(values)},
                            f"{len(values)} DOIs")
        return keyed(found, by, values)

    def by_title(self, query: Lookup) -> list[SourceRecord]:
        filter_handler = need("habanero.filterhandler", NAME).filter_handler
        params: dict[str, Any] = {"query.bibliographic": normalize_title(query.value), "rows": 10}
        if query.first_author:
            params["query.author"] = query.first_author
        if query.year:
            params["filter"] = filter_handler({"from_pub_date": str(query.year - YEARS),
                                               "until_pub_date": str(query.year + YEARS)})
        return self._works(params, "a title")

    def find(self, text: str, k: int) -> list[SourceRecord]:
        return self._works({"query": text, "rows": max(1, min(k, 100))}, "a search")


def _record(item: Any) -> SourceRecord | None:
    if not isinstance(item, dict) or not item.get("DOI"):
        return None
    title = _first(item.get("title"))
    if not title:
        return None
    authors = []
    for a in item.get("author") or []:
        if isinstance(a, dict):
            authors.append(" ".join(x for x in (a.get("given"), a.get("family")) if x) or a.get("name") or "")
    abstract = _abstract(item.get("abstract") or "")
    return record(NAME, str(item["DOI"]), title=title, authors=authors, year=_year(item),
                  venue=_first(item.get("container-title")) or None, abstract=abstract, doi=str(item["DOI"]),
                  pages=_text(item.get("page")), volume=_text(item.get("volume")),
                  entry_type=_TYPES.get(str(item.get("type") or "")))


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None


def _first(value: Any) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return str(value or "")


def _year(item: dict[str, Any]) -> int | None:
    for key in ("issued", "published", "published-print", "published-online"):
        parts = (item.get(key) or {}).get("date-parts") or [[None]]
        if parts and parts[0] and isinstance(parts[0][0], int):
            return int(parts[0][0])
    return None


def _abstract(jats: str) -> str:
    """Crossref's JATS abstract as text, without its leading "Abstract" heading."""
    from citefinder.sources.online.service import clean

    text = clean(jats)
    return text[len("Abstract"):].lstrip(" :.") if text.lower().startswith("abstract ") else text


def open_crossref(settings: Any) -> Crossref:
    need("habanero", NAME)
    headers = with_contact(settings)
    http = open_http(NAME, settings.crossref_url, settings, interval_s=0.1 if headers else 0.2, headers=headers)
    return Crossref(http, sends_text(http.host, Crossref.completes_with, contact=bool(headers),
                                       context_sentences=settings.context_sentences))
