"""A source is accepted only after a reachability check (citefinder/sources/reach.py): one search for a fixed word
against the loopback fake, past the cache and without retries: reachable, not reachable (a closed port, headers
that never finish), and the wrong shape (something answers, not as the service does)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import SourceError
from citefinder.sources.reach import PROBE, check_reachable
from online_server import (
    SERVICES,
    FakeScholar,
    closed_port,
    module_fake,
    read_records,
)

FIXTURE = Path(__file__).parent / "data" / "online-papers.jsonl"


server, fake = module_fake(list(read_records(FIXTURE)))  # the fixtures


def settings_for(fake: FakeScholar, tmp_path: Path, **kw: object) -> Settings:
    return Settings(**{**dict(library=tmp_path, online_interval_s=0.0, online_deadline_s=3.0, online_retries=3,
                              **fake.urls()), **kw})


@pytest.mark.parametrize("service", SERVICES)
def test_a_service_that_answers_is_reachable(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    reach = check_reachable(service, settings_for(fake, tmp_path))
    assert reach.ok and reach.kind == "reachable" and f"{service} answered at 127.0.0.1:{fake.port}" in reach.message
    [call] = fake.calls(service)
    assert PROBE in call.query, "one search for the fixed word, nothing else"
    again = check_reachable(service, settings_for(fake, tmp_path))
    assert again.ok and len(fake.calls(service)) == 2, "asked again: a cached answer says nothing of now"


@pytest.mark.parametrize("service", SERVICES)
def test_a_service_that_cannot_be_reached_is_said_so(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    closed = {f"{service}_url": f"http://127.0.0.1:{closed_port()}/{service}"}
    reach = check_reachable(service, settings_for(fake, tmp_path, **closed))
    assert not reach.ok and reach.kind == "unreachable" and "cannot reach" in reach.message
    fake.modes[service] = "500"
    reach = check_reachable(service, settings_for(fake, tmp_path))
    assert reach.kind == "unreachable" and len(fake.calls(service)) == 1, "no retries"


def test_headers_that_never_finish_are_unreachable_within_the_deadline(fake: FakeScholar, tmp_path: Path) -> None:
    fake.modes["crossref"] = "drip-headers"
    start = time.monotonic()
    reach = check_reachable("crossref", settings_for(fake, tmp_path, online_deadline_s=1.5, online_timeout_s=30.0))
    assert reach.kind == "unreachable" and "within 1.5 s" in reach.message
    assert time.monotonic() - start < 1.5 + 1.0


@pytest.mark.parametrize("mode", ["html", "wrong-types"])
@pytest.mark.parametrize("service", SERVICES)
def test_an_answer_of_the_wrong_shape_is_not_accepted(fake: FakeScholar, tmp_path: Path, service: str,
                                                      mode: str) -> None:
    fake.modes[service] = mode
    reach = check_reachable(service, settings_for(fake, tmp_path))
    assert not reach.ok and reach.kind == "wrong-shape", reach
    assert f"answered, but not as {service} does" in reach.message and f"{service}_url" in reach.message


def test_a_folder_is_not_reached(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not an online source"):
        check_reachable("./some-folder", Settings(library=tmp_path))
