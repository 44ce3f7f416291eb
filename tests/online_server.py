"""A fake of the four scholarly APIs on loopback, for the online sources' tests and bench.

One ``http.server`` on 127.0.0.1 answers, under a prefix per service, in each API's documented shapes:

- ``/openalex/works`` (OpenAlex: ``meta`` + ``results``; works with ``abstract_inverted_index``, ``authorships``,
  ``primary_location``, ``locations``; ``filter=doi:a|b``, ``title.search:``, ``publication_year:a-b``,
  ``search=``, ``select=``, ``per-page=``);
- ``/s2/graph/v1/paper/batch`` (POST ``{"ids": [...]}`` -> a list with null for unknown ids) and
  ``/s2/graph/v1/paper/search`` (``total``, ``offset``, ``next``, ``data``; ``fields=`` honoured);
- ``/arxiv/api/query`` (arXiv's Atom feed with its ``opensearch:`` and ``arxiv:`` elements; ``id_list``,
  ``search_query`` with ``ti:"..."`` and ``all:(...)``, ``start``, ``max_results``);
- ``/crossref/works`` (Crossref: ``status``, ``message-type``, ``message`` with ``items``; ``filter=doi:..``,
  ``query.bibliographic``, ``query``, ``rows``, ``select``).

Works come from a :class:`Catalog` (papers-333k's record shape, plus an optional ``doi``; an arXiv paper's DOI is
its arXiv DOI). ``faults[service]`` scripts the next answers: ``"429"``/``"429:N"`` (Retry-After N s),
``"429-long"`` (Retry-After 3600), ``"500"``, ``"timeout"`` (answers after ``slow_s``), ``"malformed"``,
``"empty"``. ``modes[service]`` makes a service misbehave on every call (:data:`MISBEHAVIOURS`: an HTML page, a
feed that promises more than it holds, fields of other types, 429 with a day-long Retry-After, 500, a 300 MB
body, a body sent one byte a second, a status line and headers sent one byte a second, a redirect to a closed
port). Every request is kept in ``seen`` (headers
included, for the tests that check what left).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlsplit
from xml.sax.saxutils import escape

from citefinder.library.identity import normalize_arxiv_id, normalize_doi, normalize_title

SERVICES = ("openalex", "s2", "arxiv", "crossref")
MISBEHAVIOURS = ("html", "overpromise", "wrong-types", "429-day", "500", "huge", "drip", "drip-headers", "redirect")
HUGE = 300 * 2**20


def doi_of(r: dict) -> str | None:
    return normalize_doi(r.get("doi")) or (f"10.48550/arxiv.{r['arxiv_id']}" if r.get("arxiv_id") else None)


def _words(text: str) -> set[str]:
    return {w for w in normalize_title(text).split() if len(w) > 2}


class Catalog:
    """The works the fake knows, looked up in memory (a bench may put a literature library behind the same
    four calls)."""

    def __init__(self, records: list[dict]) -> None:
        self.records = list(records)

    def by_doi(self, dois: list[str]) -> list[dict]:
        want = {normalize_doi(d) for d in dois}
        return [r for r in self.records if doi_of(r) in want]

    def by_arxiv(self, ids: list[str]) -> list[dict]:
        want = {normalize_arxiv_id(i) for i in ids}
        return [r for r in self.records if r.get("arxiv_id") and normalize_arxiv_id(r["arxiv_id"]) in want]

    def by_title(self, title: str, k: int) -> list[dict]:
        t = normalize_title(title)
        return [r for r in self.records if normalize_title(r["title"]) == t][:k]

    def search(self, text: str, k: int) -> list[dict]:
        q = _words(text)
        scored = [(len(q & _words(r["title"] + " " + (r.get("abstract") or ""))), i) for i, r in
                  enumerate(self.records)]
        return [self.records[i] for s, i in sorted(scored, key=lambda x: (-x[0], x[1])) if s > 0][:k]

    def titled(self, text: str, k: int) -> list[dict]:
        """A title search as the services do it: the works of that title first, then the best matches."""
        out = self.by_title(text, k)
        return out + [r for r in self.search(text, k) if r not in out][: k - len(out)]


@dataclass
class Seen:
    service: str
    method: str
    path: str
    query: str
    body: bytes
    headers: dict[str, str]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that closed its connection (a call given up at its deadline) is not an error of the fake."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class FakeScholar:
    catalog: Catalog
    faults: dict[str, list[str]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    slow_s: float = 1.5
    modes: dict[str, str] = field(default_factory=dict)  # service -> a misbehaviour of every call
    drip_s: float = 1.0  # seconds between two bytes of a "drip" answer

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                owner._handle(self, b"")

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                owner._handle(self, self.rfile.read(n))

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def base(self, service: str) -> str:
        return f"http://127.0.0.1:{self.port}/{service}"

    def urls(self) -> dict[str, str]:
        return {"openalex_url": self.base("openalex"), "s2_url": self.base("s2"), "arxiv_url": self.base("arxiv"),
                "crossref_url": self.base("crossref")}

    def calls(self, service: str | None = None) -> list[Seen]:
        return [s for s in self.seen if service is None or s.service == service]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- answering ---
    def _handle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        parts = urlsplit(h.path)
        service, _, rest = parts.path.lstrip("/").partition("/")
        self.seen.append(Seen(service, h.command, "/" + rest, parts.query, body, dict(h.headers.items())))
        fault = self.faults.get(service, []).pop(0) if self.faults.get(service) else self.modes.get(service)
        if fault and fault.startswith("429"):
            wait = {"429-long": "3600", "429-day": "86400"}.get(fault) or (fault.split(":")[1] if ":" in fault else "1")
            return _send(h, 429, b'{"message": "Too Many Requests"}', {"Retry-After": wait})
        if fault == "500":
            return _send(h, 500, b'{"message": "Internal Server Error"}')
        if fault == "html":
            return _send(h, 200, b"<html><head><title>Maintenance</title></head><body><p>Back soon.</p></body></html>",
                         {"Content-Type": "text/html"})
        if fault == "redirect":
            return _send(h, 302, b"", {"Location": f"http://127.0.0.1:{closed_port()}{h.path}"})
        if fault == "huge":
            return _flood(h)
        if fault == "timeout":
            time.sleep(self.slow_s)
        try:
            status, payload, ctype = self._answer(service, "/" + rest, parts.query, body, fault == "empty")
        except KeyError:
            return _send(h, 404, b'{"error": "Not found"}')
        if fault == "malformed":
            payload = payload[: max(1, len(payload) // 2)] + (b"<unclosed" if ctype.endswith("xml") else b"}{")
        if fault == "overpromise":
            payload = _overpromise(service, payload, "start=0" in parts.query or "start" not in parts.query)
        if fault == "wrong-types":
            payload = _wrong_types(service, payload)
        if fault == "drip":
            return _drip(h, payload, ctype, self.drip_s)
        if fault == "drip-headers":
            return _drip_headers(h, payload, ctype, self.drip_s)
        _send(h, status, payload, {"Content-Type": ctype})

    def _answer(self, service: str, path: str, query: str, body: bytes, empty: bool) -> tuple[int, bytes, str]:
        q = dict(parse_qsl(query, keep_blank_values=True))
        if service == "openalex" and path == "/works":
            return 200, _json(openalex_answer(self.catalog, query, q, empty)), "application/json"
        if service == "s2" and path == "/graph/v1/paper/batch":
            ids = [] if empty else json.loads(body or b"{}").get("ids", [])
            return 200, _json(s2_batch(self.catalog, ids, q.get("fields", ""))), "application/json"
        if service == "s2" and path == "/graph/v1/paper/search":
            return 200, _json(s2_search(self.catalog, q, empty)), "application/json"
        if service == "arxiv" and path == "/api/query":
            return 200, arxiv_feed(self.catalog, q, empty).encode("utf-8"), "application/atom+xml; charset=utf-8"
        if service == "crossref" and path == "/works":
            return 200, _json(crossref_answer(self.catalog, q, empty)), "application/json"
        raise KeyError(path)


def _send(h: BaseHTTPRequestHandler, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
    try:
        h.send_response(status)
        for k, v in {"Content-Type": "application/json", **(headers or {})}.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a time-out test)


def _flood(h: BaseHTTPRequestHandler) -> None:
    """A 300 MB body without a length (read until the connection closes), sent until the client stops reading."""
    h.close_connection = True
    try:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Connection", "close")
        h.end_headers()
        block = b"[" + b" " * (2**20 - 1)
        for _ in range(HUGE // len(block)):
            h.wfile.write(block)
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass


def _drip(h: BaseHTTPRequestHandler, payload: bytes, ctype: str, every_s: float) -> None:
    """A right answer, one byte every ``every_s`` seconds (a per-read time-out never fires)."""
    h.close_connection = True
    try:
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.flush()
        for i in range(len(payload)):
            h.wfile.write(payload[i:i + 1])
            h.wfile.flush()
            time.sleep(every_s)
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass


def _drip_headers(h: BaseHTTPRequestHandler, payload: bytes, ctype: str, every_s: float) -> None:
    """A right answer whose status line and headers come one byte every ``every_s`` seconds (no read waits long
    enough for a per-read time-out; the headers are never complete within a deadline of a few seconds)."""
    h.close_connection = True
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(payload)}\r\n"
            "X-Padding: " + "x" * 64 + "\r\nConnection: close\r\n\r\n").encode("latin-1")
    try:
        for i in range(len(head)):
            h.wfile.write(head[i:i + 1])
            h.wfile.flush()
            time.sleep(every_s)
        h.wfile.write(payload)
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass


def _overpromise(service: str, payload: bytes, first: bool) -> bytes:
    """The answer with a total far larger than what it holds: an empty page; arXiv's first page holds its works but
    the next one is empty (the feed promised more)."""
    if service == "arxiv":
        text = payload.decode("utf-8")
        if not first:
            text = re.sub(r"<entry>.*?</entry>", "", text, flags=re.S)
        return re.sub(r"<opensearch:totalResults>\d+", "<opensearch:totalResults>5000", text).encode("utf-8")
    data = json.loads(payload)  # an empty page that says 5000 works match
    if service == "openalex":
        data["meta"]["count"], data["results"] = 5000, []
    elif service == "s2":
        data = [None] * len(data) if isinstance(data, list) else {"total": 5000, "offset": 0, "next": 100, "data": []}
    elif service == "crossref":
        data["message"]["total-results"], data["message"]["items"] = 5000, []
    return _json(data)


def _wrong_types(service: str, payload: bytes) -> bytes:
    """The answer's fields of other types than the service documents: strings for objects, lists for strings."""
    if service == "arxiv":
        text = re.sub(r"<published>[^<]*", "<published>last tuesday", payload.decode("utf-8"))
        return re.sub(r"<opensearch:totalResults>\d+", "<opensearch:totalResults>many", text).encode("utf-8")
    data = json.loads(payload)
    if service == "openalex":
        for w in data["results"]:
            w.update({"title": ["A", "list"], "authorships": "Vaswani", "primary_location": "arxiv",
                      "publication_year": "2017", "abstract_inverted_index": ["not", "an", "index"]})
    elif service == "s2":
        items = data if isinstance(data, list) else data.get("data", [])
        for p in items:
            if isinstance(p, dict):
                p.update({"authors": "Vaswani", "externalIds": "none", "year": "2017", "title": {"t": 1}})
        if not items:
            data = {"data": "none", "total": "0"}
    elif service == "crossref":
        data["message"]["items"] = [{"DOI": "10.1/x", "title": "A title", "author": "Vaswani", "issued": "2017",
                                     "container-title": 3, "abstract": ["x"]} for _ in data["message"]["items"] or [0]]
    return _json(data)


def _json(data: Any) -> bytes:
    return json.dumps(data).encode("utf-8")


def _id(r: dict, n: int = 10) -> str:
    return hashlib.sha1(r["doc_id"].encode("utf-8")).hexdigest()[:n]


def _years(r: dict, low: int | None, high: int | None) -> bool:
    y = r.get("year")
    return y is None or ((low is None or y >= low) and (high is None or y <= high))


# --- OpenAlex ---
def openalex_work(r: dict) -> dict:
    inverted: dict[str, list[int]] = {}
    for i, w in enumerate((r.get("abstract") or "").split()):
        inverted.setdefault(w, []).append(i)
    doi = doi_of(r)
    return {"id": f"https://openalex.org/W{int(_id(r), 16) % 10**10}", "doi": f"https://doi.org/{doi}" if doi else None,
            "title": r["title"], "display_name": r["title"], "publication_year": r.get("year"),
            "authorships": [{"author_position": "first" if i == 0 else "middle",
                             "author": {"id": f"https://openalex.org/A{i}", "display_name": a}}
                            for i, a in enumerate(r.get("authors") or [])],
            "abstract_inverted_index": inverted or None,
            "primary_location": {"source": {"display_name": r["venue"]}} if r.get("venue") else None,
            "locations": [{"landing_page_url": f"https://arxiv.org/abs/{r['arxiv_id']}"}] if r.get("arxiv_id") else []}


def openalex_answer(catalog: Catalog, raw: str, q: dict[str, str], empty: bool) -> dict:
    per_page = int(q.get("per-page", 25))
    filters: dict[str, list[str]] = {}
    for part in raw.split("&"):  # commas in a value are %2C: split the raw filter first, as OpenAlex does
        if part.startswith("filter="):
            for f in part[len("filter="):].split(","):
                key, _, value = unquote_plus(f).partition(":")  # requests sends pyalex's "|" as %7C
                filters[key] = value.split("|")
    if "doi" in filters:
        found = catalog.by_doi(filters["doi"])
    elif "title.search" in filters:
        found = catalog.titled(filters["title.search"][0], per_page)
    else:
        found = catalog.search(q.get("search", ""), per_page)
    if "publication_year" in filters:
        low, _, high = filters["publication_year"][0].partition("-")
        found = [r for r in found if _years(r, int(low), int(high or low))]
    works = [] if empty else [openalex_work(r) for r in found[:per_page]]
    if q.get("select"):
        keep = q["select"].split(",")
        works = [{k: w[k] for k in keep if k in w} for w in works]
    return {"meta": {"count": len(works), "db_response_time_ms": 3, "page": 1, "per_page": per_page,
                     "groups_count": None}, "results": works, "group_by": []}


# --- Semantic Scholar ---
def s2_paper(r: dict, fields: str) -> dict:
    ext: dict[str, Any] = {"CorpusId": int(_id(r, 8), 16)}
    if r.get("arxiv_id"):
        ext["ArXiv"] = r["arxiv_id"]
    if doi := doi_of(r):
        ext["DOI"] = doi
    full = {"paperId": _id(r, 40), "externalIds": ext, "title": r["title"], "abstract": r.get("abstract") or None,
            "year": r.get("year"), "venue": r.get("venue") or "",
            "authors": [{"authorId": str(1000 + i), "name": a} for i, a in enumerate(r.get("authors") or [])]}
    keep = {"paperId", *fields.split(",")} if fields else {"paperId", "title"}
    return {k: v for k, v in full.items() if k in keep}


def s2_batch(catalog: Catalog, ids: list[str], fields: str) -> list[dict | None]:
    out: list[dict | None] = []
    for i in ids:
        kind, _, value = i.partition(":")
        found = catalog.by_doi([value]) if kind == "DOI" else catalog.by_arxiv([value]) if kind == "ARXIV" else []
        out.append(s2_paper(found[0], fields) if found else None)
    return out


def s2_search(catalog: Catalog, q: dict[str, str], empty: bool) -> dict:
    limit, offset = int(q.get("limit", 100)), int(q.get("offset", 0))
    found = [] if empty else catalog.titled(q.get("query", ""), offset + limit)
    if q.get("year"):
        low, _, high = q["year"].partition("-")
        found = [r for r in found if _years(r, int(low) if low else None, int(high) if high else None)]
    if not found:
        return {"total": 0, "offset": offset}
    page = found[offset: offset + limit]
    answer: dict[str, Any] = {"total": len(found), "offset": offset,
                              "data": [s2_paper(r, q.get("fields", "")) for r in page]}
    if offset + limit < len(found):
        answer["next"] = offset + limit
    return answer


# --- arXiv ---
def arxiv_entry(r: dict) -> str:
    aid, year = r["arxiv_id"], r.get("year") or 2000
    authors = "".join(f"<author><name>{escape(a)}</name></author>" for a in r.get("authors") or [])
    journal = f"<arxiv:journal_ref>{escape(r['venue'])}</arxiv:journal_ref>" if r.get("venue") else ""
    return (f"<entry><id>http://arxiv.org/abs/{aid}v1</id><updated>{year}-06-01T00:00:00Z</updated>"
            f"<published>{year}-01-15T00:00:00Z</published><title>{escape(r['title'])}</title>"
            f"<summary>  {escape(r.get('abstract') or '')}\n</summary>{authors}{journal}"
            f'<link href="http://arxiv.org/abs/{aid}v1" rel="alternate" type="text/html"/>'
            f'<link title="pdf" href="http://arxiv.org/pdf/{aid}v1" rel="related" type="application/pdf"/>'
            f'<arxiv:primary_category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>'
            f'<category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/></entry>')


def arxiv_feed(catalog: Catalog, q: dict[str, str], empty: bool) -> str:
    start, size = int(q.get("start", 0)), int(q.get("max_results", 10))
    search = q.get("search_query", "")
    if q.get("id_list"):
        found = catalog.by_arxiv(q["id_list"].split(","))
    elif m := re.match(r'^ti:"(.*)"$', search):  # a phrase of the title
        found = [r for r in catalog.titled(m.group(1), start + size) if m.group(1) in normalize_title(r["title"])]
    elif m := re.match(r"^all:\((.*)\)$", search):
        found = catalog.search(m.group(1), start + size)
    else:
        found = []
    found = [] if empty else [r for r in found if r.get("arxiv_id")]
    page = found[start: start + size]
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">'
            f'<id>https://arxiv.org/api/fake</id><title>arXiv Query: {escape(search)}</title>'
            f'<updated>2026-11-27T00:00:00Z</updated><opensearch:totalResults>{len(found)}</opensearch:totalResults>'
            f'<opensearch:startIndex>{start}</opensearch:startIndex>'
            f'<opensearch:itemsPerPage>{size}</opensearch:itemsPerPage>'
            + "".join(arxiv_entry(r) for r in page) + "</feed>")


# --- Crossref ---
def crossref_item(r: dict) -> dict:
    authors = []
    for i, a in enumerate(r.get("authors") or []):
        given, _, family = a.rpartition(" ")
        authors.append({"given": given, "family": family, "sequence": "first" if i == 0 else "additional"})
    item = {"DOI": doi_of(r), "type": "journal-article", "title": [r["title"]], "author": authors,
            "issued": {"date-parts": [[r.get("year")]]}, "container-title": [r["venue"]] if r.get("venue") else []}
    if r.get("abstract"):
        item["abstract"] = f"<jats:title>Abstract</jats:title><jats:p>{escape(r['abstract'])}</jats:p>"
    return item


def crossref_answer(catalog: Catalog, q: dict[str, str], empty: bool) -> dict:
    rows = int(q.get("rows", 20))
    filters: dict[str, list[str]] = {}
    for f in q.get("filter", "").split(","):
        if f:
            key, _, value = f.partition(":")
            filters.setdefault(key, []).append(value)
    if "doi" in filters:
        found = catalog.by_doi(filters["doi"])
    elif "query.bibliographic" in q:
        found = catalog.titled(q["query.bibliographic"], rows)
    else:
        found = catalog.search(q.get("query", ""), rows)
    low, high = filters.get("from-pub-date", [None])[0], filters.get("until-pub-date", [None])[0]
    low_year, high_year = (int(low[:4]) if low else None), (int(high[:4]) if high else None)
    found = [r for r in found if doi_of(r) and _years(r, low_year, high_year)]
    items = [] if empty else [crossref_item(r) for r in found[:rows]]
    return {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
            "message": {"facets": {}, "total-results": len(items), "items": items, "items-per-page": rows,
                        "query": {"start-index": 0, "search-terms": q.get("query")}}}


# --- what the tests use ---
def closed_port() -> int:
    """A loopback port nothing listens on (a connection is refused: no network)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def only_loopback(monkeypatch: Any) -> list[Any]:
    """Refuse, and record, any connection or name lookup that is not loopback, for the rest of the test."""
    tried: list[Any] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if isinstance(address, tuple) and host not in ("127.0.0.1", "::1", "localhost"):
            tried.append(address)
            raise OSError(f"test guard: no connection to {address} (loopback only)")
        return connect(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", "::1", "localhost", None):
            tried.append(host)
            raise socket.gaierror(f"test guard: no name lookup of {host} (loopback only)")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return tried


def served(records: list[dict]) -> Iterator[FakeScholar]:
    """A :class:`FakeScholar` over ``records``, closed after use: the body of a (module-scoped) fixture."""
    server = FakeScholar(Catalog(records))
    yield server
    server.close()


def loopback_fake(server: FakeScholar, monkeypatch: Any, *, fresh: bool = True) -> Iterator[FakeScholar]:
    """The body of a per-test fixture: only loopback allowed (:func:`only_loopback`) while ``server`` is used;
    ``fresh`` clears its modes and calls before and its modes after (a server shared by a module); afterwards
    asserts nothing but loopback was contacted."""
    tried = only_loopback(monkeypatch)
    if fresh:
        server.modes, server.seen = {}, []
    yield server
    if fresh:
        server.modes = {}
    assert tried == [], f"a test contacted something other than loopback: {tried}"


def module_fake(records: list[dict]) -> tuple[Any, Any]:
    """The fixtures ``server`` (one :func:`served` server over ``records`` for the module) and ``fake`` (that server,
    fresh for each test, only loopback allowed: :func:`loopback_fake`); a module takes them with
    ``server, fake = module_fake(...)``."""
    import pytest

    @pytest.fixture(scope="module", name="server")
    def server_fixture() -> Iterator[FakeScholar]:
        yield from served(records)

    @pytest.fixture(name="fake")
    def fake_fixture(server: FakeScholar, monkeypatch: Any) -> Iterator[FakeScholar]:
        yield from loopback_fake(server, monkeypatch)

    return server_fixture, fake_fixture


def own_fake(monkeypatch: Any, records: list[dict]) -> Iterator[FakeScholar]:
    """The body of a per-test fixture with its own server: only loopback allowed, a :class:`FakeScholar` over
    ``records`` started, closed after the test, and nothing but loopback contacted."""
    tried = only_loopback(monkeypatch)
    server = FakeScholar(Catalog(records))
    yield server
    server.close()
    assert tried == [], f"a test contacted something other than loopback: {tried}"


def pointed_fake(monkeypatch: Any, records: list[dict]) -> tuple[FakeScholar, list[Any]]:
    """Only loopback allowed (:func:`only_loopback`), a :class:`FakeScholar` over ``records`` started and every
    service's ``CITEFINDER_<NAME>`` address pointed at it; the server and the list of refused contacts."""
    tried = only_loopback(monkeypatch)
    server = FakeScholar(Catalog(records))
    for name, url in server.urls().items():
        monkeypatch.setenv(f"CITEFINDER_{name.upper()}", url)
    return server, tried


def read_records(path: Any) -> Iterator[dict]:
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
