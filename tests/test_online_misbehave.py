"""A misbehaving service never hangs nor stops the work: each of the four services, made to misbehave on every call by
the loopback fake (tests/online_server.py: an HTML page, a feed promising more than it holds, fields of other types, 429
with a day-long Retry-After, 500, a 300 MB body, a body sent one byte a second, a status line and headers sent one byte
a second, a redirect to a closed port), answers a lookup and a search within the total deadline, or fails with one
SourceError line naming the source; never another exception. Also: the one rule for a name that is a folder and a
service, the cache's expired rows deleted, an unusable answer not kept in the cache, and what a search sends."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from citefinder.config import Settings, cache_root
from citefinder.errors import SourceError
from citefinder.sources.base import Lookup, search_text, searched_text
from citefinder.sources.online.cache import AnswerCache, cache_path
from citefinder.sources.online.http import BadAnswer, SourceUnreachable
from citefinder.sources.registry import open_source, resolve
from citefinder.types import Query
from online_server import (
    MISBEHAVIOURS,
    SERVICES,
    FakeScholar,
    module_fake,
    read_records,
)

FIXTURE = Path(__file__).parent / "data" / "online-papers.jsonl"
DEADLINE_S = 1.5
ASK = [Lookup("arxiv", "1706.03762"), Lookup("doi", "10.18653/v1/n19-1423"),
       Lookup("title", "Attention Is All You Need", 2017, "vaswani")]


server, fake = module_fake(list(read_records(FIXTURE)))  # the fixtures


def settings_for(fake: FakeScholar, tmp_path: Path, **kw: object) -> Settings:
    (tmp_path / "lib").mkdir(exist_ok=True)
    base: dict[str, object] = dict(library=tmp_path / "lib", online_interval_s=0.0, online_backoff_s=0.05,
                                   online_timeout_s=1.0, online_retries=2, online_deadline_s=DEADLINE_S,
                                   **fake.urls())
    return Settings(**{**base, **kw})


@pytest.mark.parametrize("mode", MISBEHAVIOURS)
@pytest.mark.parametrize("service", SERVICES)
def test_a_misbehaving_service_ends_quickly_with_one_line(fake: FakeScholar, tmp_path: Path, service: str,
                                                          mode: str) -> None:
    fake.modes[service] = mode
    source = open_source(service, settings_for(fake, tmp_path))
    for ask in (lambda: source.lookup(ASK), lambda: source.search("self-attention for machine translation", 5)):
        start = time.monotonic()
        try:
            ask()
        except SourceError as e:  # one line naming the source, nothing else
            assert str(e).startswith(f"{service}: ") and "\n" not in str(e)
            assert "Error" not in str(e).replace("UnexpectedEmptyPageError", "").replace("TypeError", "") \
                .replace("AttributeError", "").replace("ValueError", "").replace("KeyError", "")
        assert time.monotonic() - start < DEADLINE_S + 3, "within the total deadline"
    if mode in ("html", "wrong-types", "huge"):
        with pytest.raises(BadAnswer):
            source.search("self-attention for machine translation", 5)
    if mode in ("429-day", "500", "drip", "drip-headers", "redirect"):
        with pytest.raises(SourceUnreachable):
            source.search("attention", 5)


def test_a_slow_drip_ends_at_the_deadline_not_per_read(fake: FakeScholar, tmp_path: Path) -> None:
    fake.modes["s2"] = "drip"
    deadline = 2.0  # long enough for the headers to arrive on a loaded machine; the body drips for minutes
    source = open_source("s2", settings_for(fake, tmp_path, online_timeout_s=30.0, online_deadline_s=deadline))
    start = time.monotonic()
    # "too slow": the deadline ended the dripping body; "no answer within": on a very loaded machine it ended the
    # wait for the headers. Either way the total deadline held, not the 30 s per-read time-out.
    with pytest.raises(SourceUnreachable, match=r"too slow|no answer within"):
        source.search("attention", 5)
    assert time.monotonic() - start < deadline + 2.0


@pytest.mark.parametrize("service", SERVICES)
def test_headers_sent_one_byte_a_second_end_at_the_deadline(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    """The status line and headers dripped: the per-read time-out (30 s) never fires; the watchdog closes the
    connection when the total deadline passes, and the call says so."""
    fake.modes[service] = "drip-headers"
    deadline = 2.0
    source = open_source(service, settings_for(fake, tmp_path, online_timeout_s=30.0, online_deadline_s=deadline))
    start = time.monotonic()
    with pytest.raises(SourceUnreachable, match=r"did not finish answering .* within 2 s \(online_deadline_s\)"):
        source.search("attention", 5)
    assert time.monotonic() - start < deadline + 1.0, "the deadline held while the headers dripped"


def test_an_old_urllib3_is_said_as_what_to_install_not_as_the_services_fault(
        fake: FakeScholar, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib3
    import urllib3.response

    with monkeypatch.context() as m:
        m.setattr(urllib3, "__version__", "1.26.20")
        with pytest.raises(SourceError, match=r"need urllib3 2\.6 or later \(installed: 1\.26\.20\)") as e:
            open_source("openalex", settings_for(fake, tmp_path))
        assert not isinstance(e.value, SourceUnreachable) and fake.seen == [], "refused before anything is sent"
    source = open_source("openalex", settings_for(fake, tmp_path))
    monkeypatch.delattr(urllib3.response.HTTPResponse, "read1")  # as urllib3 1.26's response
    monkeypatch.delattr(urllib3.response.BaseHTTPResponse, "read1")
    monkeypatch.setattr(urllib3, "__version__", "1.26.20")
    with pytest.raises(SourceError, match=r"urllib3 2\.6 or later") as e:
        source.search("attention", 5)
    assert not isinstance(e.value, (SourceUnreachable, BadAnswer)), "not the service's fault"


def test_a_redirect_is_not_followed_and_says_where(fake: FakeScholar, tmp_path: Path) -> None:
    fake.modes["openalex"] = "redirect"
    with pytest.raises(SourceUnreachable, match="redirect .*not followed") as e:
        open_source("openalex", settings_for(fake, tmp_path)).search("attention", 5)
    assert "search=" not in str(e.value), "the query is not repeated in the line"
    assert len(fake.calls("openalex")) == 1


def test_an_unusable_answer_is_not_kept_in_the_cache(fake: FakeScholar, tmp_path: Path) -> None:
    settings = settings_for(fake, tmp_path)
    fake.modes["crossref"] = "wrong-types"  # valid JSON, so the transport stores it; the reader refuses it
    with pytest.raises(BadAnswer, match="not what the service documents"):
        open_source("crossref", settings).search("attention transformer", 5)
    fake.modes = {}
    found = open_source("crossref", settings).search("attention transformer", 5)
    assert found and len(fake.calls("crossref")) == 2, "asked again: the unusable answer was dropped"


def test_a_large_answer_under_a_small_cap_is_not_read(fake: FakeScholar, tmp_path: Path) -> None:
    source = open_source("openalex", settings_for(fake, tmp_path, online_max_bytes=200))
    with pytest.raises(BadAnswer, match="online_max_bytes"):
        source.search("attention transformer", 5)


def test_expired_answers_are_deleted(tmp_path: Path) -> None:
    path = tmp_path / "answers.sqlite"
    cache = AnswerCache(path, 1e9)
    cache.put("s2", "GET old", 200, b"{}")
    cache.put("s2", "GET new", 200, b"{}")
    cache.close()
    con = sqlite3.connect(path)
    con.execute("UPDATE answers SET stored = stored - 10000 WHERE request = 'GET old'")
    con.commit()
    con.close()
    fresh = AnswerCache(path, 5000)
    assert fresh.get("s2", "GET new") is not None and fresh.count() == 1, "the expired row is gone from the file"
    fresh.close()


def test_the_online_cache_honours_citefinder_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    assert cache_path(tmp_path / "no-library") == tmp_path / "c" / "sources-cache.sqlite"
    assert cache_path(tmp_path) == tmp_path / "sources-cache.sqlite"  # a library folder keeps its own


def test_a_name_that_is_a_folder_here_and_a_service_is_refused(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve("arxiv").kind == "service"
    (tmp_path / "arxiv").mkdir()
    with pytest.raises(SourceError, match=r"write \./arxiv for the folder, or arxiv: for the service"):
        resolve("arxiv")
    with pytest.raises(SourceError, match="Nothing was sent"):
        open_source("arxiv", Settings(library=tmp_path / "lib"))
    assert resolve("arxiv:") == resolve("ARXIV:") and resolve("arxiv:").service == "arxiv"
    assert resolve("./arxiv").kind == "folder" and resolve("./arxiv").folder == Path("arxiv")
    assert resolve(Path("arxiv")).kind == "folder"
    assert resolve("papers-333k").kind == "folder"
    with pytest.raises(SourceError, match="not an online source"):
        resolve("nonesuch:")


def test_the_literature_tier_resolves_by_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citefinder.pipeline.literature import open_literature

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s2").mkdir()
    with pytest.raises(SourceError, match="could be the folder ./s2 here or the online service s2"):
        open_literature("s2", Settings(library=tmp_path / "lib"))


def test_a_search_sends_what_its_disclosure_says() -> None:
    query = Query(text="The Transformer [CITATION] relies on attention.",
                  window="Before it. The Transformer [CITATION] relies on attention. After it.")
    assert search_text(query) == "The Transformer relies on attention."
    assert searched_text(0) == "each slot's sentence (at most 400 characters)"
    assert "the 1 sentence on each side" in searched_text(1)
    assert len(search_text(Query(text="word " * 200))) <= 400
