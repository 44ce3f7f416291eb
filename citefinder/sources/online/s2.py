"""Semantic Scholar's Graph API (https://api.semanticscholar.org/api-docs/graph) as a source, through
``semanticscholar``.

The client gives the API's address and paths (``AsyncSemanticScholar.DEFAULT_API_URL``, ``BASE_PATH_GRAPH``), the
fields a paper can carry (``Paper.SEARCH_FIELDS``) and reads each answer into its ``Paper`` object. It does not
send the calls here: its requester opens a fresh HTTP client per call (no hook for the cache or a test server's
checks), retries a 429 on its own schedule without reading ``Retry-After`` and logs the request headers, the API
key among them, at debug level; so the documented endpoints are called through
:mod:`citefinder.sources.online.http`, the key in the ``x-api-key`` header only:

- ``POST /graph/v1/paper/batch?fields=...`` with ``{"ids": ["DOI:...", "ARXIV:..."]}`` (up to 500 ids; the
  answer lists a paper or null for each id, in order);
- ``GET /graph/v1/paper/search?query=...&limit=...&fields=...`` (``total``, ``offset``, ``next``, ``data``), for
  a title (within three years of the entry's, ``year=A-B``) and for a slot's sentence.

Pace: one call a second (the rate of an introductory API key; the keyless pool is shared by everyone).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from citefinder.library.identity import normalize_title
from citefinder.sources.base import Lookup, LookupBy, SourceRecord
from citefinder.sources.online.http import BadAnswer, Call
from citefinder.sources.online.service import (
    OnlineSource,
    keyed,
    need,
    open_http,
    parse_json,
    record,
    secret,
    sends_text,
)

NAME = "s2"
INTERVAL_S = 1.0
FIELDS = ("paperId", "externalIds", "title", "abstract", "year", "authors", "venue", "journal", "publicationTypes")
_TYPES = {"JournalArticle": "article", "Conference": "inproceedings"}
YEARS = 3
PREFIX = {"doi": "DOI:", "arxiv": "ARXIV:"}


class SemanticScholar(OnlineSource):
    name = NAME
    completes_with = ("title", "doi", "arxiv", "years")  # what its lookups send (service.SENT)
    id_batch = 500

    def __init__(self, http: Any, sends: str) -> None:
        super().__init__(http, sends)
        client = need("semanticscholar.AsyncSemanticScholar", NAME).AsyncSemanticScholar
        known = need("semanticscholar.Paper", NAME).Paper.SEARCH_FIELDS
        self.fields = ",".join(f for f in FIELDS if f in known)  # the fields the client can read
        self.graph = client.BASE_PATH_GRAPH  # "/graph/v1"

    def by_ids(self, by: LookupBy, values: Sequence[str]) -> Mapping[str, list[SourceRecord]]:
        body = json.dumps({"ids": [PREFIX[by] + v for v in values]}).encode("utf-8")
        path = f"{self.graph}/paper/batch?" + urlencode({"fields": self.fields})
        what = f"{len(values)} {by} ids"
        answer = self.http.fetch(Call("POST", path, body, what=what))
        data = parse_json(answer.body, NAME, what) if answer.status == 200 else []
        if not isinstance(data, list):
            raise BadAnswer(f"{NAME}: an answer to {what} that is not a list, not used")
        return keyed([r for item in data if (r := _record(item)) is not None], by, values)

    def _search(self, params: dict[str, Any], what: str) -> list[SourceRecord]:
        params = {**params, "fields": self.fields}
        data = self.get(f"{self.graph}/paper/search?" + urlencode(params), what)
        if data is None:
            return []
        items = data.get("data") if isinstance(data, dict) else None
        if items is None and isinstance(data, dict) and "total" in data:
            items = []  # no match: {"total": 0, "offset": 0}
        if not isinstance(items, list):
            raise BadAnswer(f"{NAME}: an answer to {what} without data, not used")
        return [r for item in items if (r := _record(item)) is not None]

    def by_title(self, query: Lookup) -> list[SourceRecord]:
        params: dict[str, Any] = {"query": normalize_title(query.value), "limit": 10}
        if query.year:
            params["year"] = f"{query.year - YEARS}-{query.year + YEARS}"
        return self._search(params, "a title")

    def find(self, text: str, k: int) -> list[SourceRecord]:
        # "hyphenated query terms yield no matches" (the API's docs): hyphens become spaces
        return self._search({"query": text.replace("-", " "), "limit": max(1, min(k, 100))}, "a search")


def _record(item: Any) -> SourceRecord | None:
    """A Graph API paper (read by ``semanticscholar.Paper``) as a record; None for a null (not found)."""
    if not isinstance(item, dict):
        return None
    from semanticscholar.Paper import Paper as S2Paper

    try:
        paper = S2Paper(item)
    except (TypeError, ValueError, AttributeError):
        return None
    if not paper.paperId or not paper.title:
        return None
    ext = paper.externalIds or {}
    return record(NAME, paper.paperId, title=paper.title, authors=[a.name or "" for a in paper.authors or []],
                  year=paper.year if isinstance(paper.year, int) else None, venue=paper.venue or None,
                  abstract=paper.abstract or "", doi=ext.get("DOI"), arxiv_id=ext.get("ArXiv"),
                  ids=(("s2", paper.paperId),), pages=_journal(paper, "pages"), volume=_journal(paper, "volume"),
                  entry_type=next((_TYPES[t] for t in paper.publicationTypes or [] if t in _TYPES), None))


def _journal(paper: Any, field: str) -> str | None:
    """The journal's ``pages`` or ``volume`` (S2 writes " 1735-1780" with a space at times)."""
    value = getattr(paper.journal, field, None) if paper.journal is not None else None
    return " ".join(str(value).split()) or None if isinstance(value, (str, int)) else None


def open_s2(settings: Any) -> SemanticScholar:
    need("semanticscholar", NAME)
    key = secret(settings.s2_api_key)
    http = open_http(NAME, settings.s2_url, settings, interval_s=INTERVAL_S,
                     headers={"x-api-key": key} if key else {})
    return SemanticScholar(http, sends_text(http.host, SemanticScholar.completes_with, key=bool(key),
                                              context_sentences=settings.context_sentences))
