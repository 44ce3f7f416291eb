"""The online sources end to end: ``citefinder library enrich --from openalex`` (and ``s2``, ``crossref``) against
the fake scholarly APIs on loopback (tests/online_server.py), over a real library beside a real .bib: what it
says it sends before the first call, the abstracts stored with the service's provenance, the .bib byte for byte,
a second run sending nothing, and no network as one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.link import library_beside
from citefinder.library.store import Library
from online_server import FakeScholar, closed_port, pointed_fake, read_records

pytestmark = pytest.mark.slow  # a real library (MiniLM)
pytest.importorskip("citefinder.sources.enrich", reason="`library enrich` (branch lit-enrich) is not merged yet")

DATA = Path(__file__).parent / "data"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    server, tried = pointed_fake(monkeypatch, list(read_records(DATA / "online-papers.jsonl")))
    monkeypatch.setenv("CITEFINDER_ONLINE_INTERVAL_S", "0")
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # where answers go while no library folder exists
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "no-default-library"))  # not ./library of the cwd
    yield server
    server.close()
    assert tried == [], "nothing but loopback was contacted"


def by_key(folder: Path) -> dict:
    return {p.key: p for p in Library.open(Settings(library=folder)).iter_papers()}


@pytest.mark.parametrize("service", ["openalex", "s2"])
def test_library_enrich_from_a_service(fake: FakeScholar, tmp_path: Path, capsys: pytest.CaptureFixture,
                                       service: str) -> None:
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "online-refs.bib", bib)
    before = bib.read_bytes()
    assert main(["library", "enrich", "--from", service, "--bib", str(bib)]) == 0
    out, err = capsys.readouterr()
    assert f"asking {service}: to 127.0.0.1:{fake.port}: the titles, DOIs, arXiv ids" in err
    assert "and years (as a range of three years either side) of your entries when completing them" in err
    assert "vaswani2017: gained abstract" in out and "nobody2021: not found" in out
    papers = by_key(library_beside(bib))
    vaswani, bert, alex = papers["vaswani2017"], papers["devlin2018bert"], papers["krizhevsky2012imagenet"]
    assert vaswani.abstract.startswith("The dominant sequence transduction models")
    [(field, source, source_id)] = [p for p in vaswani.provenance if p[0] == "abstract"]
    assert source == service and (service, source_id) in vaswani.ids
    assert bert.abstract.startswith("We introduce a new language representation model called BERT")
    assert alex.abstract.startswith("We trained a large, deep convolutional neural network")
    assert papers["nobody2021"].abstract == "" and papers["nobody2021"].provenance == ()
    assert bib.read_bytes() == before, "the .bib is never written"
    calls = len(fake.calls(service))
    assert calls >= 3

    assert main(["library", "enrich", "--from", service, "--bib", str(bib), "--quiet"]) == 0
    assert "0 gained an abstract" in capsys.readouterr().out
    assert len(fake.calls(service)) == calls, "the second run was answered by the cache"
    # the source is opened before the library beside the .bib is chosen: the answers go to the user's cache
    assert any(p.exists() for p in (library_beside(bib) / "sources-cache.sqlite",
                                    tmp_path / "cache" / "sources-cache.sqlite"))


def test_library_enrich_with_no_network_is_one_line(fake: FakeScholar, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    monkeypatch.setenv("CITEFINDER_CROSSREF_URL", f"http://127.0.0.1:{port}/crossref")
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "online-refs.bib", bib)
    assert main(["library", "enrich", "--from", "crossref", "--bib", str(bib)]) != 0
    err = capsys.readouterr().err
    [line] = [x for x in err.splitlines() if x.startswith("error:")]
    assert f"crossref: cannot reach 127.0.0.1:{port}" in line and "Traceback" not in err
    assert all(p.abstract == "" for p in by_key(library_beside(bib)).values())


def test_the_library_page_completes_entries_from_openalex(fake: FakeScholar, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    from citefinder.ui import state

    folder = tmp_path / "lib"
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    monkeypatch.setenv("CITEFINDER_LITERATURE", "openalex")
    at = AppTest.from_file(str(Path(__file__).parent.parent / "pages" / "2_Library.py"), default_timeout=240).run()
    bib = (DATA / "online-refs.bib").read_bytes()
    at.file_uploader(key=state.LIBRARY_UPLOAD).upload("refs.bib", bib, "application/x-bibtex").run()
    next(b for b in at.button if b.label == "Import 1 file").click().run()
    assert not at.exception and fake.seen == [], "importing sends nothing"
    next(b for b in at.button if b.label == "Complete from openalex").click().run()
    assert not at.exception and not at.error
    said = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "3 of your 4 entries gained an abstract from openalex" in said.replace("\\", "")
    papers = {p.key: p for p in Library.open(Settings(library=folder)).iter_papers()}
    assert papers["vaswani2017"].source_of("abstract")[0] == "openalex"
    assert len(fake.calls("openalex")) >= 3 and fake.calls() == fake.calls("openalex")
