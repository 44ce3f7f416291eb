"""arXiv's API (https://info.arxiv.org/help/api/user-manual.html) as a source, through ``arxiv``.

``arxiv.Client`` builds each query (``Search(id_list=...)``, ``Search(query='ti:"..."')``), pages through the
answer and reads the Atom feed into ``arxiv.Result`` objects. Its address is an attribute (``query_url_format``,
set to the configured ``arxiv_url``), but its calls have no time-out, its retries ignore ``Retry-After`` and
it has no hook for a cache; so its HTTP session is replaced by one that sends through
:mod:`citefinder.sources.online.http` (``arxiv.Client`` offers no public way to pass a session: the swap of its
``_session`` is the one private name used), and its own delay and retries are turned off (the pace and the
retries are :mod:`~citefinder.sources.online.http`'s: one call every 3 seconds, as arXiv's terms ask).

arXiv ids are asked in batches (``id_list=a,b,c``); arXiv's API searches no DOIs, so a DOI lookup is answered
with nothing and costs no call; a title is asked as a phrase in the title field; a slot's sentence as any of its
words (``all:(w1 w2 ...)``), by relevance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from citefinder.library.identity import normalize_arxiv_id, normalize_title
from citefinder.sources.base import Lookup, LookupBy, SourceRecord
from citefinder.sources.online.http import Call, Http
from citefinder.sources.online.service import OnlineSource, keyed, need, open_http, record, sends_text

NAME = "arxiv"
INTERVAL_S = 3.0  # "make no more than one request every three seconds" (arXiv API Terms of Use)
MAX_WORDS = 30
_STOP = frozenset("""a an the of for and or in on to with by from at via is are was were be been this that these
those we our it its as which such can has have had not but also than then there their they using use used based
into over under between both each more most other some only new show shows shown""".split())


class Arxiv(OnlineSource):
    name = NAME
    completes_with = ("title", "arxiv")  # what its lookups send (service.SENT)
    id_batch = 50

    def _results(self, search_kw: dict[str, Any], size: int, what: str) -> list[SourceRecord]:
        arxiv = need("arxiv", NAME)
        client = arxiv.Client(page_size=max(1, size), delay_seconds=0, num_retries=0)
        client.query_url_format = self.http.base_url + "/api/query?{}"
        client._session = _session(self.http, what)
        try:
            results = list(client.results(arxiv.Search(max_results=size, **search_kw)))
        except arxiv.HTTPError:  # 404: nothing (other failures are raised by the session as SourceErrors)
            return []
        return [r for res in results if (r := _record(res)) is not None]

    def client_errors(self) -> tuple[type[BaseException], ...]:
        # a page empty where the feed promised more (UnexpectedEmptyPageError), any other answer it cannot read
        return (need("arxiv", NAME).ArxivError,)

    def by_ids(self, by: LookupBy, values: Sequence[str]) -> Mapping[str, list[SourceRecord]]:
        if by != "arxiv":
            return {}
        return keyed(self._results({"id_list": list(values)}, len(values), f"{len(values)} arXiv ids"), by, values)

    def by_title(self, query: Lookup) -> list[SourceRecord]:
        title = normalize_title(query.value)
        return self._results({"query": f'ti:"{title}"'}, 10, "a title") if title else []

    def find(self, text: str, k: int) -> list[SourceRecord]:
        words = [w for w in re.findall(r"[^\W_]+", text) if len(w) > 2 and w.lower() not in _STOP][:MAX_WORDS]
        if not words:
            return []
        return self._results({"query": f"all:({' '.join(words)})"}, max(1, min(k, 100)), "a search")


def _session(http: Http, what: str) -> Any:
    import requests

    class Session(requests.Session):
        """What ``arxiv.Client`` calls ``get`` on: the call sent (or answered from the cache) by ``http``."""

        def get(self, url: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            path = str(url)[len(http.base_url):]
            answer = http.fetch(Call("GET", path, what=what))
            response = requests.Response()
            response.status_code = answer.status
            response._content = answer.body
            response.url = str(url)
            return response

    return Session()


def _record(result: Any) -> SourceRecord | None:
    """An ``arxiv.Result`` as a record (an error entry of the feed has no arXiv id and is dropped)."""
    arxiv_id = normalize_arxiv_id(result.get_short_id())
    if not arxiv_id or not result.title:
        return None
    year = result.published.year if result.published is not None else None
    return record(NAME, arxiv_id, title=result.title, authors=[a.name for a in result.authors], year=year,
                  venue=result.journal_ref or None, abstract=result.summary or "", doi=result.doi or None,
                  arxiv_id=arxiv_id)


def atom_ok(body: bytes) -> bool:
    """A well-formed Atom feed (arxiv's own reader recovers from broken XML by dropping it silently)."""
    from lxml import etree

    try:
        root = etree.fromstring(body, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError:
        return False
    return root is not None and str(root.tag).endswith("feed")


def open_arxiv(settings: Any) -> Arxiv:
    need("arxiv", NAME)
    http = open_http(NAME, settings.arxiv_url, settings, interval_s=INTERVAL_S, valid=atom_ok)
    return Arxiv(http, sends_text(http.host, Arxiv.completes_with, context_sentences=settings.context_sentences))
