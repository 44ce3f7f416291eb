"""What every online source shares: the :class:`~citefinder.sources.base.Source` protocol over a service's
lookups (batches of DOIs and arXiv ids, one title at a time) and search, how its records become papers, and
how it is opened from the settings (the cache, the pace, the secrets kept in headers).

A service module implements three calls — ``by_ids(by, values)``, ``by_title(lookup)`` and ``find(text, k)`` —
and says what it sends; sameness is decided afterwards by :mod:`citefinder.sources.same`, never here.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from html import unescape
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from citefinder.errors import SourceError
from citefinder.library.identity import arxiv_id_from_doi, make_doc_id, normalize_arxiv_id, normalize_doi
from citefinder.sources.base import Lookup, LookupBy, SourceRecord, fold, searched_text
from citefinder.sources.online.cache import AnswerCache, cache_path
from citefinder.sources.online.http import BadAnswer, Call, Counts, Hook, Http, Polite
from citefinder.sources.online.watchdog import need_urllib3
from citefinder.types import Paper

log = logging.getLogger(__name__)
T = TypeVar("T")

INSTALL = "pip install 'citefinder[online]'"
# What a service's reader raises on an answer that is not what the service documents (a field of another type, a
# list where an object was promised): caught in one place, OnlineSource.answered, as one BadAnswer line.
ANSWER_ERRORS: tuple[type[BaseException], ...] = (TypeError, AttributeError, KeyError, ValueError, IndexError)

_TAG = re.compile(r"<[^>]+>")


def need(module: str, service: str) -> ModuleType:
    """The client package ``module`` of ``service``, or one line saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SourceError(f"The {service} source needs the package {module}, which is not installed: "
                          f"{INSTALL}") from None


# What completing an entry may send, in the words of the disclosure: each service names the parts its calls carry
# (``completes_with``), and the disclosure lists exactly those (tests/test_online_disclosure.py compares them with
# what a loopback fake receives).
SENT = {"title": "titles", "doi": "DOIs", "arxiv": "arXiv ids", "arxiv-doi": "arXiv ids (as arXiv DOIs)",
        "surname": "first authors' surnames", "years": "years (as a range of three years either side)"}


def listed(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def sends_text(host: str, completes_with: Sequence[str], *, contact: bool = False, key: bool = False,
               context_sentences: int = 0) -> str:
    """What a service's calls send, said before the first one: the parts of an entry its lookups carry
    (``completes_with``, keys of :data:`SENT`), and the search's part (:func:`citefinder.sources.base.searched_text`,
    the words of what :func:`~citefinder.sources.base.search_text` sends)."""
    extra = (" and your contact address" if contact else "") + (" and your API key" if key else "")
    return (f"to {host}: the {listed([SENT[part] for part in completes_with])} of your entries when completing "
            f"them, {searched_text(context_sentences)} when searching for papers you don't have{extra}")


def clean(text: str | None) -> str:
    """Markup out (Crossref's JATS, OpenAlex's <i>), entities decoded, whitespace folded."""
    if not text:
        return ""
    return " ".join(unescape(_TAG.sub(" ", text)).split())


def record(service: str, source_id: str, *, title: str, authors: Sequence[str] = (), year: int | None = None,
           venue: str | None = None, abstract: str = "", doi: str | None = None, arxiv_id: str | None = None,
           ids: Sequence[tuple[str, str]] = (), pages: str | None = None, volume: str | None = None,
           entry_type: str | None = None) -> SourceRecord:
    """A service's work as a :class:`SourceRecord`, its paper named by the identity rule (``pages``, ``volume``,
    ``entry_type``: where it was published, for a preprint's published version)."""
    paper = Paper(doc_id="", title=clean(title), authors=tuple(a for a in (clean(x) for x in authors) if a),
                  year=year, venue=clean(venue) or None, abstract=clean(abstract), doi=normalize_doi(doi),
                  arxiv_id=normalize_arxiv_id(arxiv_id) or arxiv_id_from_doi(doi), ids=tuple(ids),
                  pages=clean(pages) or None, volume=clean(volume) or None, entry_type=entry_type or None)
    return SourceRecord(replace(paper, doc_id=make_doc_id(paper)), service, source_id)


class OnlineSource:
    """A :class:`~citefinder.sources.base.Source` over one online service. Subclasses set ``name``,
    ``id_batch`` (questions one batch call may carry) and implement :meth:`by_ids`, :meth:`by_title`,
    :meth:`find`."""

    name = "online"
    id_batch = 50
    completes_with: tuple[str, ...] = ()  # the parts of an entry its lookups send (keys of SENT)

    def __init__(self, http: Http, sends: str) -> None:
        self.http = http
        self.sends = sends

    @property
    def counts(self) -> Counts:
        return self.http.counts

    def on_call(self, hook: Hook | None) -> None:
        """Hear every call (cached or sent): for a progress bar of a long enrichment."""
        self.http.on_call = hook

    # --- the Source protocol ---
    def lookup(self, queries: Sequence[Lookup]) -> list[list[SourceRecord]]:
        out: list[list[SourceRecord]] = [[] for _ in queries]
        calls = 0
        failed: list[BadAnswer] = []
        for by in ("doi", "arxiv"):
            asked = [i for i, q in enumerate(queries) if q.by == by]
            for start in range(0, len(asked), self.id_batch):
                chunk = asked[start:start + self.id_batch]
                calls += 1
                values = [queries[i].value for i in chunk]
                try:
                    found = self.answered(f"{len(values)} {by} ids", partial(self.by_ids, by, values))
                except BadAnswer as e:
                    failed.append(e)
                    continue
                for i in chunk:
                    out[i] = found.get(queries[i].value, [])
        for i, q in enumerate(queries):
            if q.by == "title":
                calls += 1
                try:
                    out[i] = self.answered("a title", partial(self.by_title, q))
                except BadAnswer as e:
                    failed.append(e)
        if failed and len(failed) == calls:
            raise failed[-1]
        if failed:  # said once for the batch, not once per call
            more = f" (and {len(failed) - 1} more of {calls} calls)" if len(failed) > 1 else ""
            log.warning("%s%s; the other answers are used", failed[0], more)
        return out

    def search(self, text: str, k: int) -> list[SourceRecord]:
        text = fold(text)
        return self.answered("a search", lambda: self.find(text, k))[:k] if text else []

    def answered(self, what: str, ask: Callable[[], T]) -> T:
        """``ask()``, the one place a service's answer is checked: whatever its reader raises on an answer that is
        not what the service documents (:data:`ANSWER_ERRORS`, the client's own :attr:`client_errors`) becomes one
        :class:`BadAnswer` line naming the source, and the answers it read are dropped from the cache."""
        with self.http.recording():
            try:
                return ask()
            except BadAnswer:
                self.http.forget_recorded()
                raise
            except SourceError:
                raise
            except ANSWER_ERRORS + self.client_errors() as e:
                log.debug("%s: the answer to %s could not be read", self.name, what, exc_info=True)
                self.http.forget_recorded()
                raise BadAnswer(f"{self.name}: an answer to {what} that is not what the service documents "
                                f"({type(e).__name__}), not used") from None

    def client_errors(self) -> tuple[type[BaseException], ...]:
        """The errors the service's client raises on an answer it cannot read (none by default)."""
        return ()

    # --- what a service implements ---
    def by_ids(self, by: LookupBy, values: Sequence[str]) -> Mapping[str, list[SourceRecord]]:
        """Records for each normalised DOI or arXiv id in ``values`` (missing: not found)."""
        raise NotImplementedError

    def by_title(self, query: Lookup) -> list[SourceRecord]:
        """Records whose title may be ``query.value``'s (the service's own title search)."""
        raise NotImplementedError

    def find(self, text: str, k: int) -> list[SourceRecord]:
        """The service's best ``k`` works for ``text``."""
        raise NotImplementedError

    def get(self, path: str, what: str) -> Any:
        """The JSON the service answers to ``GET path`` (None: it has no such work)."""
        answer = self.http.fetch(Call("GET", path, what=what))
        return parse_json(answer.body, self.name, what) if answer.status == 200 else None


def keyed(records: Sequence[SourceRecord], by: LookupBy, values: Sequence[str]) -> dict[str, list[SourceRecord]]:
    """``records`` under the asked ``values`` they carry (normalised DOI or arXiv id)."""
    wanted = set(values)
    out: dict[str, list[SourceRecord]] = {}
    for r in records:
        value = r.paper.doi if by == "doi" else r.paper.arxiv_id
        if value in wanted:
            out.setdefault(value, []).append(r)
    return out


def parse_json(body: bytes, service: str, what: str) -> Any:
    import json

    try:
        return json.loads(body)
    except ValueError:
        raise BadAnswer(f"{service}: a malformed answer to {what} ({len(body)} bytes), not used") from None


def json_ok(body: bytes) -> bool:
    import json

    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def open_http(service: str, base_url: str, settings: Any, *, interval_s: float,
              headers: Mapping[str, str] | None = None, valid: Any = json_ok) -> Http:
    """The :class:`Http` of ``service`` as the settings configure it: its cache under the library (cleared first
    when ``sources_refresh`` is on), its pace (``online_interval_s`` or the service's documented one)."""
    need_urllib3()  # the streamed read needs urllib3 2.6 or later: said here, before anything is sent
    cache = None
    if settings.sources_cache_days > 0:
        path = settings.sources_cache or cache_path(Path(settings.library).expanduser())
        cache = AnswerCache(Path(path).expanduser(), settings.sources_cache_days * 86400)
        if settings.sources_refresh:
            cache.clear(service)
    polite = Polite(timeout_s=settings.online_timeout_s, retries=settings.online_retries,
                    backoff_s=settings.online_backoff_s, max_wait_s=settings.online_max_wait_s,
                    deadline_s=settings.online_deadline_s, max_bytes=settings.online_max_bytes,
                    interval_s=interval_s if settings.online_interval_s is None else settings.online_interval_s)
    return Http(service, base_url, polite, cache=cache, headers=dict(headers or {}), valid=valid)


def with_contact(settings: Any) -> dict[str, str]:
    """The User-Agent that carries the contact address (OpenAlex's and Crossref's polite pools), if one is set."""
    from citefinder.sources.online.http import USER_AGENT

    email = secret(settings.contact_email)
    return {"User-Agent": f"{USER_AGENT[:-1]}; mailto:{email})"} if email else {}


def secret(value: Any) -> str | None:
    """The text of a SecretStr setting (None when unset): read only where a header is built."""
    return value.get_secret_value() if value is not None and value.get_secret_value().strip() else None
