"""DBLP (https://dblp.org/faq/13501473: "How to use the dblp search API?") as a source: where a computer-science
preprint was published.

No PyPI client fits (the DBLP packages send their own calls, without a time-out, a cache or a test server's
checks), so the documented publication search is called through :mod:`citefinder.sources.online.http`:

- ``GET /search/publ/api?q=...&format=json&h=N`` (``q``: the query, ``h``: at most 1000 hits, ``f``: the first,
  ``c``: completions, 0 here). The answer is ``{"result": {"query", "status": {"@code", "text"}, "hits":
  {"@total", "@sent", "@first", "hit": [{"@score", "@id", "info": {"authors": {"author": [{"@pid", "text"}] or one
  such object}, "title" (ends with a full stop), "venue", "volume", "number", "pages", "year", "type" ("Conference
  and Workshop Papers", "Journal Articles", "Informal and Other Publications"...), "key" ("conf/iclr/KingmaB14"),
  "doi", "ee" (a URL or a list of them), "url"}}]}}}``.

DBLP has no lookup by DOI or arXiv id: those questions are answered with nothing, no call; a title is searched
as its words; a record's arXiv id comes from an arxiv.org ``ee`` or a CoRR key (``journals/corr/abs-1412-6980``).
Names carry DBLP's homonym numbers ("Wei Li 0001"), which are dropped. DBLP publishes no rate limit and asks
for restraint: one call a second.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from citefinder.library.identity import normalize_arxiv_id, normalize_title
from citefinder.sources.base import Lookup, LookupBy, SourceRecord, searched_text
from citefinder.sources.online.http import BadAnswer
from citefinder.sources.online.service import OnlineSource, open_http, record

NAME = "dblp"
INTERVAL_S = 1.0
PATH = "/search/publ/api"
_TYPES = {"Conference and Workshop Papers": "inproceedings", "Journal Articles": "article",
          "Informal and Other Publications": "misc", "Informal Publications": "misc",
          "Parts in Books or Collections": "incollection", "Books and Theses": "book", "Editorship": "proceedings"}
_HOMONYM = re.compile(r"\s+\d{4}$")
_CORR_KEY = re.compile(r"^journals/corr/abs-(\d{4})-(\d{4,5})$")


class Dblp(OnlineSource):
    name = NAME
    id_batch = 50

    def _hits(self, q: str, h: int, what: str) -> list[SourceRecord]:
        data = self.get(PATH + "?" + urlencode({"q": q, "format": "json", "h": max(1, min(h, 1000)), "c": 0}), what)
        if data is None:
            return []
        hits = ((data.get("result") or {}).get("hits") if isinstance(data, dict) else None)
        if not isinstance(hits, dict):
            raise BadAnswer(f"{NAME}: an answer to {what} without result.hits, not used")
        items = hits.get("hit") or []
        items = [items] if isinstance(items, dict) else items
        if not isinstance(items, list):
            raise BadAnswer(f"{NAME}: an answer to {what} whose hits are not a list, not used")
        return [r for item in items if isinstance(item, dict) and (r := _record(item.get("info"))) is not None]

    def by_ids(self, by: LookupBy, values: Sequence[str]) -> Mapping[str, list[SourceRecord]]:
        return {}  # DBLP's search has no DOI or arXiv-id lookup

    def by_title(self, query: Lookup) -> list[SourceRecord]:
        return self._hits(normalize_title(query.value), 10, "a title")

    def find(self, text: str, k: int) -> list[SourceRecord]:
        return self._hits(text, k, "a search")


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""


def _authors(info: dict[str, Any]) -> list[str]:
    listed = (info.get("authors") or {}).get("author") if isinstance(info.get("authors"), dict) else None
    listed = [listed] if isinstance(listed, (dict, str)) else listed or []
    names = [a.get("text") if isinstance(a, dict) else a for a in listed]
    return [_HOMONYM.sub("", n) for n in (_text(x) for x in names) if n]


def _arxiv(info: dict[str, Any]) -> str | None:
    ees = info.get("ee")
    for ee in [ees] if isinstance(ees, str) else ees or []:
        if isinstance(ee, str) and "arxiv.org/abs/" in ee and (aid := normalize_arxiv_id(ee)):
            return aid
    m = _CORR_KEY.match(_text(info.get("key")))
    return normalize_arxiv_id(f"{m.group(1)}.{m.group(2)}") if m else None


def _record(info: Any) -> SourceRecord | None:
    """A hit's ``info`` as a record (its DBLP key the id; an informal CoRR record names CoRR as its venue)."""
    if not isinstance(info, dict):
        return None
    key, title = _text(info.get("key")), _text(info.get("title")).rstrip(".")
    if not key or not title:
        return None
    year = _text(info.get("year"))
    return record(NAME, key, title=title, authors=_authors(info), year=int(year) if year.isdigit() else None,
                  venue=_text(info.get("venue")) or None, doi=_text(info.get("doi")) or None, arxiv_id=_arxiv(info),
                  ids=(("dblp", key),), pages=_text(info.get("pages")) or None,
                  volume=_text(info.get("volume")) or None, entry_type=_TYPES.get(_text(info.get("type"))))


def open_dblp(settings: Any) -> Dblp:
    http = open_http(NAME, settings.dblp_url, settings, interval_s=INTERVAL_S)
    return Dblp(http, f"to {http.host}: the titles of your entries when completing them, "
                      f"{searched_text(settings.context_sentences)} when searching for papers you don't have")
