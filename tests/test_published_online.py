"""The published version of a preprint from each online source (Crossref, OpenAlex, Semantic Scholar, DBLP), each
answering on loopback in its documented JSON shape with the preprint and its published version: the published one
is found with its venue, year, pages and DOI; DBLP is asked by title through ``/search/publ/api?format=json``."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from citefinder.config import Settings
from citefinder.sources.published import find_published
from citefinder.sources.registry import open_source
from citefinder.types import Paper
from online_server import only_loopback

TITLE = "Adam: A Method for Stochastic Optimization"
PREPRINT = Paper(doc_id="arxiv:1412.6980", title=TITLE, authors=("Diederik P. Kingma", "Jimmy Ba"), year=2014,
                 venue="arXiv preprint arXiv:1412.6980", arxiv_id="1412.6980", key="kingma2014adam",
                 entry_type="article")
AUTHORS = ["Diederik P. Kingma", "Jimmy Ba"]

ANSWERS: dict[str, Any] = {
    "crossref": {"status": "ok", "message-type": "work-list", "message": {"total-results": 2, "items": [
        {"DOI": "10.48550/arxiv.1412.6980", "title": [TITLE], "type": "posted-content",
         "author": [{"given": "Diederik P.", "family": "Kingma"}], "issued": {"date-parts": [[2014]]}},
        {"DOI": "10.5555/ICLR.2015.1", "title": [TITLE], "type": "proceedings-article",
         "container-title": ["3rd International Conference on Learning Representations"], "page": "1-15",
         "author": [{"given": "Diederik P.", "family": "Kingma"}, {"given": "Jimmy", "family": "Ba"}],
         "issued": {"date-parts": [[2015, 5]]}}]}},
    "openalex": {"meta": {"count": 1}, "results": [
        {"id": "https://openalex.org/W1", "doi": "https://doi.org/10.5555/iclr.2015.1", "title": TITLE,
         "publication_year": 2015, "type": "article",
         "authorships": [{"author": {"display_name": a}} for a in AUTHORS],
         "primary_location": {"source": {"display_name": "arXiv (Cornell University)", "type": "repository"}},
         "locations": [{"landing_page_url": "https://arxiv.org/abs/1412.6980",
                        "source": {"display_name": "arXiv (Cornell University)", "type": "repository"}},
                       {"source": {"display_name": "International Conference on Learning Representations",
                                   "type": "conference"}}],
         "biblio": {"volume": None, "issue": None, "first_page": "1", "last_page": "15"}}]},
    "s2": [{"paperId": "abc", "title": TITLE, "year": 2015, "venue": "International Conference on Learning "
            "Representations", "externalIds": {"ArXiv": "1412.6980", "DOI": "10.5555/iclr.2015.1"},
            "authors": [{"authorId": "1", "name": a} for a in AUTHORS], "publicationTypes": ["Conference"],
            "journal": {"name": "CoRR", "pages": "1-15", "volume": "abs/1412.6980"}}],
    "dblp": {"result": {"query": "adam*", "status": {"@code": "200", "text": "OK"}, "hits": {
        "@total": "2", "@computed": "2", "@sent": "2", "@first": "0", "hit": [
            {"@score": "9", "@id": "1", "info": {
                "authors": {"author": [{"@pid": "1", "text": "Diederik P. Kingma"},
                                       {"@pid": "2", "text": "Jimmy Ba"}]},
                "title": TITLE + ".", "venue": "CoRR", "volume": "abs/1412.6980", "year": "2014",
                "type": "Informal and Other Publications", "key": "journals/corr/KingmaB14",
                "ee": "http://arxiv.org/abs/1412.6980", "url": "https://dblp.org/rec/journals/corr/KingmaB14"}},
            {"@score": "8", "@id": "2", "info": {
                "authors": {"author": [{"@pid": "1", "text": "Diederik P. Kingma"},
                                       {"@pid": "2", "text": "Jimmy Ba 0001"}]},
                "title": TITLE + ".", "venue": "ICLR (Poster)", "pages": "1-15", "year": "2015",
                "type": "Conference and Workshop Papers", "key": "conf/iclr/KingmaB14",
                "ee": ["http://arxiv.org/abs/1412.6980", "https://doi.org/10.5555/iclr.2015.1"],
                "doi": "10.5555/iclr.2015.1", "url": "https://dblp.org/rec/conf/iclr/KingmaB14"}}]}}},
}
VENUES = {"crossref": "3rd International Conference on Learning Representations",
          "openalex": "International Conference on Learning Representations",
          "s2": "International Conference on Learning Representations", "dblp": "ICLR (Poster)"}


class Fake:
    """Each service's canned answer on loopback under /<service>/..., every request kept."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                if self.command == "POST":
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                service = urlsplit(self.path).path.lstrip("/").split("/")[0]
                owner.seen.append((service, self.path))
                answer = ANSWERS[service]
                if service == "s2" and "/search" in self.path:
                    answer = {"total": 1, "offset": 0, "data": answer}
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{service}"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    tried = only_loopback(monkeypatch)
    server = Fake()
    yield server
    server.server.shutdown()
    server.server.server_close()
    assert tried == []


@pytest.mark.parametrize("service", ["crossref", "openalex", "s2", "dblp"])
def test_each_online_source_gives_the_published_version(fake: Fake, tmp_path: Path, service: str) -> None:
    settings = Settings(library=tmp_path, online_interval_s=0.0, online_retries=0, sources_cache_days=0,
                        **{f"{service}_url": fake.url(service)})
    [found] = find_published(open_source(service, settings), [PREPRINT])
    p = found.published
    assert found.key == "kingma2014adam" and p.venue == VENUES[service] and p.year == 2015
    assert p.entry_type == "inproceedings" and p.pages in ("1-15", "1--15")
    if service != "openalex" or p.doi:
        assert p.doi == "10.5555/iclr.2015.1"
    assert p.source == service


def test_dblp_is_asked_by_title_in_its_documented_query(fake: Fake, tmp_path: Path) -> None:
    settings = Settings(library=tmp_path, online_interval_s=0.0, online_retries=0, sources_cache_days=0,
                        dblp_url=fake.url("dblp"))
    source = open_source("dblp", settings)
    assert "titles of your entries" in source.sends and "dblp" not in [s for s, _ in fake.seen]
    [found] = find_published(source, [PREPRINT])
    [(service, path)] = fake.seen  # the arXiv id is not asked (DBLP has no id lookup): one title search
    query = parse_qs(urlsplit(path).query)
    assert urlsplit(path).path == "/dblp/search/publ/api" and query["format"] == ["json"]
    assert query["q"] == ["adam a method for stochastic optimization"]
    assert found.published.source_id == "conf/iclr/KingmaB14"


def test_dblp_says_nothing_when_the_hit_is_another_author(fake: Fake, tmp_path: Path) -> None:
    settings = Settings(library=tmp_path, online_interval_s=0.0, online_retries=0, sources_cache_days=0,
                        dblp_url=fake.url("dblp"))
    other = Paper(doc_id="t:1", title=TITLE, authors=("Someone Else",), year=2014, venue="CoRR", key="other")
    assert find_published(open_source("dblp", settings), [other]) == []
