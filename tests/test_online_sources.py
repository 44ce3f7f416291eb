"""OpenAlex, Semantic Scholar, arXiv and Crossref as sources, each through its client against the fake APIs on
loopback (tests/online_server.py, works from papers-333k: tests/data/online-papers.jsonl): what a record holds,
batches, searches, an empty answer, a wrong work the identity rule rejects, the secrets that never leave the
session, and the extra that may be missing."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import SourceError
from citefinder.sources.base import Lookup, Source
from citefinder.sources.online.http import CallEvent
from citefinder.sources.registry import SERVICES, open_source
from citefinder.sources.same import find_same
from citefinder.types import Paper
from online_server import Catalog, FakeScholar, only_loopback, own_fake, read_records

FIXTURE = Path(__file__).parent / "data" / "online-papers.jsonl"
RECORDS = list(read_records(FIXTURE))
ALL = ("openalex", "s2", "arxiv", "crossref")
ARXIV_HOLDERS = ("openalex", "s2", "arxiv")  # Crossref holds no arXiv ids (arXiv's DOIs are DataCite's)
ATTENTION = next(r for r in RECORDS if r["doc_id"] == "arxiv:1706.03762")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    yield from own_fake(monkeypatch, RECORDS)


def settings_for(fake: FakeScholar, tmp_path: Path, **kw: object) -> Settings:
    (tmp_path / "lib").mkdir(exist_ok=True)
    return Settings(**{**dict(library=tmp_path / "lib", online_interval_s=0.0, online_backoff_s=0.05,
                              online_timeout_s=1.0, online_retries=1, **fake.urls()), **kw})


def test_the_four_services_are_registered_and_are_sources(fake: FakeScholar, tmp_path: Path) -> None:
    assert set(ALL) <= set(SERVICES)
    for name in ALL:
        source = open_source(name, settings_for(fake, tmp_path))
        assert isinstance(source, Source) and source.name == name
        assert "of your entries when completing them" in source.sends and "slot's sentence" in source.sends
    assert fake.seen == [], "opening a source sends nothing"


@pytest.mark.parametrize("service", ARXIV_HOLDERS)
def test_a_record_holds_the_work_and_its_ids(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    [[found]] = open_source(service, settings_for(fake, tmp_path)).lookup([Lookup("arxiv", "1706.03762")])
    paper = found.paper
    assert found.source == service and paper.doc_id == "arxiv:1706.03762" and paper.arxiv_id == "1706.03762"
    assert paper.title == ATTENTION["title"] and paper.year == 2017
    assert paper.authors == tuple(ATTENTION["authors"])
    assert paper.abstract == " ".join(ATTENTION["abstract"].split()), "OpenAlex's inverted index decoded"
    if service == "openalex":
        assert found.source_id.startswith("W") and paper.ids == (("openalex", found.source_id),)
        assert paper.venue == "NIPS 2017"
    if service == "s2":
        assert len(found.source_id) == 40 and paper.ids == (("s2", found.source_id),)
    if service == "arxiv":
        assert found.source_id == "1706.03762" and paper.venue == "NIPS 2017"  # arxiv:journal_ref
    assert found.with_provenance(["abstract"]).provenance == (("abstract", service, found.source_id),)


def test_crossref_reads_its_message_items_and_jats_abstracts(fake: FakeScholar, tmp_path: Path) -> None:
    [[found]] = open_source("crossref", settings_for(fake, tmp_path)).lookup(
        [Lookup("doi", "10.48550/arxiv.1706.03762")])
    assert found.source_id == "10.48550/arxiv.1706.03762" and found.paper.doc_id == "arxiv:1706.03762"
    assert found.paper.abstract == " ".join(ATTENTION["abstract"].split()), "JATS tags and 'Abstract' heading out"
    assert found.paper.authors[0] == "Ashish Vaswani" and found.paper.venue == "NIPS 2017"


@pytest.mark.parametrize("service", ALL)
def test_ids_are_asked_in_one_batch(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    arxiv = [r["arxiv_id"] for r in RECORDS if r["arxiv_id"]]
    by = "doi" if service == "crossref" else "arxiv"
    asks = [Lookup(by, f"10.48550/arxiv.{a}" if by == "doi" else a) for a in arxiv] + [Lookup(by, "9999.99999")]
    answers = open_source(service, settings_for(fake, tmp_path)).lookup(asks)
    assert [a[0].paper.arxiv_id for a in answers[:-1]] == arxiv and answers[-1] == []
    assert len(fake.calls(service)) == 1, f"{len(asks)} ids in one call"


def test_a_doi_costs_arxiv_no_call_and_an_arxiv_id_costs_crossref_none(fake: FakeScholar, tmp_path: Path) -> None:
    settings = settings_for(fake, tmp_path)
    assert open_source("arxiv", settings).lookup([Lookup("doi", "10.1145/3065386")]) == [[]]
    assert open_source("crossref", settings).lookup([Lookup("arxiv", "1706.03762")]) == [[]]
    assert fake.seen == []


@pytest.mark.parametrize("service", ALL)
def test_search_sends_the_sentence_and_ranks_the_work(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    sentence = "The Transformer relies on self-attention instead of recurrence for sequence transduction [CITATION]."
    found = open_source(service, settings_for(fake, tmp_path)).search(sentence, 2)
    assert 1 <= len(found) <= 2 and found[0].paper.title == "Attention Is All You Need"
    [call] = fake.calls(service)
    assert "transduction" in call.query


@pytest.mark.parametrize("service", ALL)
def test_an_empty_answer_is_nothing_found(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    fake.faults[service] = ["empty"]
    assert open_source(service, settings_for(fake, tmp_path)).search("self-attention transduction", 5) == []


@pytest.mark.parametrize("service", ALL)
def test_a_wrong_work_of_the_same_title_is_rejected(tmp_path: Path, service: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    only_loopback(monkeypatch)
    impostor = {**ATTENTION, "doc_id": "t:impostor", "arxiv_id": None, "doi": "10.9999/impostor",
                "authors": ["Jane Other"], "year": 2016, "abstract": "Another paper of that name."}
    server = FakeScholar(Catalog([impostor]))
    try:
        mine = Paper(doc_id="t:mine", title="Attention is all you need", authors=("Vaswani, Ashish",), year=2017)
        if service == "arxiv":  # arXiv serves arXiv papers only: the impostor is one there
            server.catalog.records[0] = {**impostor, "arxiv_id": "0901.00001"}
        [match] = find_same(open_source(service, settings_for(server, tmp_path, online_retries=0)), [mine])
        assert match.found is None and not match.ambiguous
        assert [r.paper.title for r in match.rejected] == ["Attention Is All You Need"]
        assert len(server.calls(service)) == 1
    finally:
        server.close()


@pytest.mark.parametrize("service", ALL)
def test_the_same_work_is_found_by_title(fake: FakeScholar, tmp_path: Path, service: str) -> None:
    mine = Paper(doc_id="t:mine", title="Impartial Coloring Games", authors=("G. Beaulieu",), year=2012)
    [match] = find_same(open_source(service, settings_for(fake, tmp_path)), [mine])
    assert match.found is not None and match.via == "title" and match.found.paper.arxiv_id == "1202.5762"


def test_the_per_call_hook_hears_every_call(fake: FakeScholar, tmp_path: Path) -> None:
    settings = settings_for(fake, tmp_path)
    heard: list[CallEvent] = []
    for _ in range(2):
        source = open_source("openalex", settings)
        source.on_call(heard.append)  # type: ignore[attr-defined]
        source.lookup([Lookup("arxiv", "1706.03762"), Lookup("title", "Impartial coloring games", 2012, None)])
    assert [(e.what, e.cached, e.status) for e in heard] == [
        ("1 arxiv ids", False, 200), ("a title", False, 200), ("1 arxiv ids", True, 200), ("a title", True, 200)]


def test_the_contact_address_and_key_stay_in_the_session(fake: FakeScholar, tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from citefinder.ui.user_settings import save_settings

    email, key = "someone.private@example.org", "s2-secret-key-123"
    monkeypatch.setenv("S2_API_KEY", key)
    settings = settings_for(fake, tmp_path, contact_email=email)
    assert settings.s2_api_key is not None and settings.s2_api_key.get_secret_value() == key, "S2_API_KEY read"
    caplog.set_level(logging.DEBUG)
    for service in ALL:
        source = open_source(service, settings)
        source.lookup([Lookup("arxiv", "1706.03762"), Lookup("doi", "10.48550/arxiv.1810.04805")])
        source.search("self-attention transduction", 3)
    by = {s.service: s for s in fake.seen}
    assert by["s2"].headers.get("x-api-key") == key and email not in str(by["s2"].headers)
    for service in ("openalex", "crossref"):
        assert f"mailto:{email}" in by[service].headers["User-Agent"] and key not in str(by[service].headers)
    assert "x-api-key" not in by["arxiv"].headers and email not in str(by["arxiv"].headers)
    for seen in fake.seen:
        assert email not in seen.path + seen.query and key not in seen.path + seen.query
    cache = (tmp_path / "lib" / "sources-cache.sqlite").read_bytes()
    assert email.encode() not in cache and key.encode() not in cache
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "127.0.0.1" in logged and email not in logged and key not in logged
    saved = save_settings(settings.with_overrides(online_timeout_s=9.0), Settings(), tmp_path / "settings.json")
    text = saved.read_text()
    assert "online_timeout_s" in text and email not in text and key not in text
    assert "contact_email" not in text and "s2_api_key" not in text and "****" not in text
    assert email not in repr(settings) and key not in repr(settings)


def test_a_missing_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def without_pyalex(name: str, *args: object) -> object:
        if name == "pyalex":
            raise ImportError("No module named 'pyalex'")
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib, "import_module", without_pyalex)
    with pytest.raises(SourceError) as e:
        open_source("openalex", Settings(library=tmp_path))
    assert str(e.value) == ("The openalex source needs the package pyalex, which is not installed: "
                            "pip install 'citefinder[online]'")
