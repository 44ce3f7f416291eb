"""The online sources' transport against the fake scholarly APIs on loopback (tests/online_server.py): cached (a
second run sends nothing), retried on 429 honouring Retry-After and on 500, bounded by a time-out, a malformed
answer never used nor cached, no network one clear line, and nothing but loopback ever contacted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import SourceError
from citefinder.sources.base import Lookup
from citefinder.sources.online.cache import AnswerCache
from citefinder.sources.online.http import SourceUnreachable, retry_after, wait_turn
from citefinder.sources.registry import open_source
from online_server import FakeScholar, closed_port, only_loopback, own_fake, read_records

FIXTURE = Path(__file__).parent / "data" / "online-papers.jsonl"
SERVICES = ("openalex", "s2", "arxiv", "crossref")
ATTENTION = Lookup("arxiv", "1706.03762")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from own_fake(monkeypatch, list(read_records(FIXTURE)))


def settings_for(fake: FakeScholar, tmp_path: Path, **kw: object) -> Settings:
    (tmp_path / "lib").mkdir(exist_ok=True)
    base: dict[str, object] = dict(library=tmp_path / "lib", online_interval_s=0.0, online_backoff_s=0.05,
                                   online_timeout_s=0.5, online_retries=2, **fake.urls())
    return Settings(**{**base, **kw})


@pytest.mark.parametrize("service", SERVICES)
def test_a_second_run_sends_nothing(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    settings = settings_for(fake, tmp_path)
    ask = [ATTENTION, Lookup("title", "Attention Is All You Need", 2017, "vaswani")]
    first = open_source(service, settings)
    answers = first.lookup(ask)
    found = first.search("self-attention transformer for machine translation", 3)
    sent = len(fake.calls(service))
    assert sent >= 2 and first.counts.sent == sent  # type: ignore[attr-defined]
    second = open_source(service, settings)
    assert second.lookup(ask) == answers and second.search("self-attention transformer for machine translation",
                                                           3) == found
    assert len(fake.calls(service)) == sent, "the warm cache answered everything"
    assert second.counts.sent == 0 and second.counts.cached >= 2  # type: ignore[attr-defined]
    assert (tmp_path / "lib" / "sources-cache.sqlite").exists()
    refreshed = open_source(service, settings.with_overrides(sources_refresh=True))
    refreshed.lookup(ask)
    assert len(fake.calls(service)) > sent, "sources_refresh clears the service's cached answers"


@pytest.mark.parametrize("service", SERVICES)
def test_429_waits_what_retry_after_says_then_answers(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    source = open_source(service, settings_for(fake, tmp_path, online_backoff_s=5.0))
    fake.faults[service] = ["429:1"]
    t0 = time.perf_counter()
    [records] = source.lookup([ATTENTION])
    waited = time.perf_counter() - t0
    assert [r.paper.doc_id for r in records] == ["arxiv:1706.03762"] if service != "crossref" else records == []
    if service != "crossref":  # Crossref holds no arXiv ids: no call, no fault consumed
        assert 1.0 <= waited < 4.0, "Retry-After: 1 honoured (not the 5 s back-off)"
        assert len(fake.calls(service)) == 2 and source.counts.retried == 1  # type: ignore[attr-defined]


def test_500_is_retried_with_backoff_and_a_timeout_too(fake: FakeScholar, tmp_path: Path) -> None:
    source = open_source("s2", settings_for(fake, tmp_path))
    fake.faults["s2"] = ["500", "timeout"]
    [records] = source.lookup([ATTENTION])
    assert records and records[0].paper.title == "Attention Is All You Need"
    assert len(fake.calls("s2")) == 3 and source.counts.retried == 2  # type: ignore[attr-defined]


def test_a_source_that_keeps_failing_gives_one_line_and_nothing_is_cached(fake: FakeScholar, tmp_path: Path) -> None:
    settings = settings_for(fake, tmp_path)
    source = open_source("openalex", settings)
    fake.faults["openalex"] = ["500", "500", "500"]
    with pytest.raises(SourceUnreachable) as e:
        source.lookup([ATTENTION])
    assert "\n" not in str(e.value) and "openalex" in str(e.value) and "HTTP 500" in str(e.value)
    assert AnswerCache(tmp_path / "lib" / "sources-cache.sqlite", 1e9).count() == 0
    assert open_source("openalex", settings).lookup([ATTENTION])[0], "the next run asks again and gets it"


def test_a_retry_after_longer_than_allowed_gives_up_at_once(fake: FakeScholar, tmp_path: Path) -> None:
    source = open_source("crossref", settings_for(fake, tmp_path, online_max_wait_s=10))
    fake.faults["crossref"] = ["429-long"]
    t0 = time.perf_counter()
    with pytest.raises(SourceUnreachable, match="asks to wait 3600 s"):
        source.search("a sentence about convolutional networks", 5)
    assert time.perf_counter() - t0 < 2


@pytest.mark.parametrize("service", SERVICES)
def test_a_malformed_answer_is_not_used_nor_cached(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    settings = settings_for(fake, tmp_path)
    fake.faults[service] = ["malformed"]
    with pytest.raises(SourceError, match="malformed"):
        open_source(service, settings).search("transformer attention translation", 3)
    assert AnswerCache(tmp_path / "lib" / "sources-cache.sqlite", 1e9).count(service) == 0
    again = open_source(service, settings).search("transformer attention translation", 3)
    assert any(r.paper.title == "Attention Is All You Need" for r in again)


def test_a_malformed_answer_loses_only_its_own_questions(fake: FakeScholar, tmp_path: Path) -> None:
    source = open_source("openalex", settings_for(fake, tmp_path))
    fake.faults["openalex"] = ["malformed"]  # the arXiv-id batch; the title call after it answers
    ids, title = source.lookup([ATTENTION, Lookup("title", "Impartial coloring games", 2012, "beaulieu")])
    assert ids == [] and [r.paper.arxiv_id for r in title][:1] == ["1202.5762"]


@pytest.mark.parametrize("service", SERVICES)
def test_no_network_is_one_clear_line_fast(tmp_path: Path, service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    only_loopback(monkeypatch)
    port = closed_port()
    urls = {f"{s}_url": f"http://127.0.0.1:{port}/{s}" for s in SERVICES}
    source = open_source(service, Settings(library=tmp_path, online_interval_s=0.0, online_retries=3,
                                           online_backoff_s=5.0, **urls))
    t0 = time.perf_counter()
    with pytest.raises(SourceUnreachable) as e:
        source.search("attention transformer", 3)
    message = str(e.value)
    assert time.perf_counter() - t0 < 2, "a refused connection is not retried for seconds"
    assert "\n" not in message and message.startswith(f"{service}: cannot reach 127.0.0.1:{port}")
    assert "Connection refused" in message and "/works" not in message and "query" not in message


def test_the_guard_refuses_any_other_address(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tried = only_loopback(monkeypatch)
    source = open_source("openalex", Settings(library=tmp_path, online_interval_s=0.0, online_retries=0))
    with pytest.raises(SourceUnreachable, match="openalex: cannot reach api.openalex.org"):
        source.lookup([ATTENTION])
    assert tried == ["api.openalex.org"], "the default address was refused by the test's guard, never reached"


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("7") == 7.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after("soon") is None and retry_after(None) is None


def test_calls_to_one_service_are_spaced() -> None:
    wait_turn("pace-test", 0.2)
    t0 = time.perf_counter()
    wait_turn("pace-test", 0.2)
    wait_turn("pace-test", 0.2)
    assert time.perf_counter() - t0 >= 0.35


def test_one_cache_file_may_serve_several_libraries_and_0_days_caches_nothing(fake: FakeScholar,
                                                                              tmp_path: Path) -> None:
    shared = tmp_path / "answers.sqlite"
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        open_source("s2", settings_for(fake, tmp_path, library=tmp_path / name, sources_cache=shared)).lookup(
            [ATTENTION])
    assert len(fake.calls("s2")) == 1 and shared.exists() and not (tmp_path / "a" / "sources-cache.sqlite").exists()
    for _ in range(2):
        open_source("s2", settings_for(fake, tmp_path, sources_cache_days=0)).lookup([ATTENTION])
    assert len(fake.calls("s2")) == 3 and not (tmp_path / "lib" / "sources-cache.sqlite").exists()


def test_without_a_library_folder_the_cache_goes_to_the_user_cache(fake: FakeScholar, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))  # the one cache root (config.cache_root)
    source = open_source("arxiv", settings_for(fake, tmp_path, library=tmp_path / "no-library-yet"))
    source.lookup([ATTENTION])
    assert not (tmp_path / "no-library-yet").exists(), "asking a source creates no library folder"
    assert (tmp_path / "cache" / "sources-cache.sqlite").exists()


def test_an_unreachable_source_is_not_asked_again_for_every_slot(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    only_loopback(monkeypatch)
    server_port = closed_port()
    source = open_source("s2", Settings(library=tmp_path, online_interval_s=0.0,
                                        s2_url=f"http://127.0.0.1:{server_port}/s2"))
    messages = set()
    for _ in range(5):
        with pytest.raises(SourceUnreachable) as e:
            source.search("a slot's sentence", 5)
        messages.add(str(e.value))
    assert len(messages) == 1 and source.counts.sent == 1 and source.counts.failed == 5  # type: ignore[attr-defined]
