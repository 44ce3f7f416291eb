"""What each online source says it sends is what it sends: a lookup of an arXiv id, a DOI and a title (with its
year and first author) against the loopback fake, and the parts of the entry the fake received compared with the
parts the disclosure names, both ways (a part sent but not named fails, and a part named but never sent)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote_plus

import pytest

from citefinder.config import Settings
from citefinder.sources.base import Lookup
from citefinder.sources.online.service import SENT
from citefinder.sources.registry import open_source
from online_server import SERVICES, FakeScholar, own_fake, read_records

FIXTURE = Path(__file__).parent / "data" / "online-papers.jsonl"
ASK = [Lookup("arxiv", "1706.03762"), Lookup("doi", "10.18653/v1/n19-1423"),
       Lookup("title", "Attention Is All You Need", 2017, "Vaswani")]
# How each part of the entries above shows in a request, as the fake reads it (path, query and body, decoded)
PARTS = {"title": "attention is all you need", "doi": "10.18653/v1/n19-1423", "arxiv": "1706.03762",
         "surname": "vaswani", "years": "2014"}
NAMED = {"title": "titles", "doi": "DOIs", "arxiv": "arXiv ids", "surname": "surnames", "years": "years"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from own_fake(monkeypatch, list(read_records(FIXTURE)))


def received(fake: FakeScholar) -> str:
    return " ".join(unquote_plus(f"{s.path}?{s.query} {s.body.decode('utf-8')}").lower() for s in fake.seen)


@pytest.mark.parametrize("service", SERVICES)
def test_the_disclosure_names_exactly_what_completing_entries_sends(fake: FakeScholar, tmp_path: Path,
                                                                   service: str) -> None:
    source = open_source(service, Settings(library=tmp_path, online_interval_s=0.0, **fake.urls()))
    completing = source.sends.split(" of your entries when completing")[0]
    source.lookup(ASK)
    sent = received(fake)
    assert sent, "the lookup was sent"
    for part, shows in PARTS.items():
        assert (shows in sent) == (NAMED[part] in completing), (service, part, completing, sent)


def test_the_disclosures_read_as_the_services_send() -> None:
    from citefinder.sources.online.crossref import Crossref
    from citefinder.sources.online.service import sends_text

    said = sends_text("api.crossref.org", Crossref.completes_with)
    assert said.startswith("to api.crossref.org: the titles, DOIs, first authors' surnames and years (as a range of "
                           "three years either side) of your entries when completing them, each slot's sentence")
    assert set(SENT) >= {"title", "doi", "arxiv", "surname", "years"}
