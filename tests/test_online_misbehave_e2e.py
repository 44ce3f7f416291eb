"""`library enrich --from <service>` and `fill --literature <service>` against each service misbehaving on every call
(tests/online_server.py's modes), over a real library beside a real .bib: every run ends within its deadline and a few
seconds (a header drip included: a watchdog closes the connection) with a clear last line (the summary, or one `error:
<service>: ...`), no traceback, no `unexpected ...Error`, a failed literature search said once, and the .bib and the
library's papers as they were. Also the one rule for a name that is a folder here and a service: refused by both
commands before anything is sent."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.link import library_beside
from citefinder.library.store import Library
from online_server import (
    MISBEHAVIOURS,
    SERVICES,
    FakeScholar,
    closed_port,
    pointed_fake,
    read_records,
)

pytestmark = pytest.mark.slow  # a real library (MiniLM)

DATA = Path(__file__).parent / "data"
DEADLINE_S = 1.5  # online_deadline_s of every run
SLACK_S = 6.0  # the run's own work (opening the library, the models) on a loaded machine
DRAFT = ("\\documentclass{article}\n\\begin{document}\n"
         "The Transformer relies on self-attention instead of recurrence for sequence transduction \\citep{?}.\n"
         "Deep convolutional neural networks classify ImageNet \\cite{?}.\n\\bibliography{refs}\n\\end{document}\n")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    server, tried = pointed_fake(monkeypatch, list(read_records(DATA / "online-papers.jsonl")))
    for name, value in {"ONLINE_INTERVAL_S": "0", "ONLINE_TIMEOUT_S": "1", "ONLINE_RETRIES": "2",
                        "ONLINE_BACKOFF_S": "0.05", "ONLINE_DEADLINE_S": str(DEADLINE_S), "LEARN_FROM_PICKS": "false",
                        "SOURCES_REFRESH": "true",  # each run asks: an answer cached by an earlier mode hides none
                        "CACHE": str(tmp_path / "cache"), "LIBRARY": str(tmp_path / "no-default-library")}.items():
        monkeypatch.setenv(f"CITEFINDER_{name}", value)
    monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)
    monkeypatch.chdir(tmp_path)
    yield server
    server.close()
    assert tried == [], "nothing but loopback was contacted"


def papers(folder: Path) -> list[tuple]:
    return sorted((p.key, p.abstract, p.ids, p.provenance)
                  for p in Library.open(Settings(library=folder)).iter_papers())


@pytest.fixture
def bib(fake: FakeScholar, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Path:
    """refs.bib with its library made and synced (an enrichment from a closed port adds nothing)."""
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "online-refs.bib", bib)
    with monkeypatch.context() as m:
        m.setenv("CITEFINDER_CROSSREF_URL", f"http://127.0.0.1:{closed_port()}/crossref")
        assert main(["library", "enrich", "--from", "crossref", "--bib", str(bib)]) != 0
    capsys.readouterr()
    return bib


def clear_end(code: int, out: str, err: str, service: str) -> str:
    """The run's last line, checked: the summary (0), or one error line naming the source."""
    assert "Traceback" not in err and "unexpected " not in err, err[-2000:]
    if code == 0:
        return [x for x in out.splitlines() if x.strip()][-1]
    [line] = [x for x in err.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: {service}: "), line
    return line


def misbehaving(fake: FakeScholar, service: str) -> Iterator[str]:
    """Each misbehaviour in turn, ``service`` made to show it on every call."""
    for mode in MISBEHAVIOURS:
        fake.modes[service] = mode
        yield mode


def timed_run(argv: list[str], capsys: pytest.CaptureFixture, service: str) -> tuple[int, str, str, float]:
    """The CLI run on ``argv``: its exit code, standard error, last line (checked by :func:`clear_end`) and
    seconds."""
    start = time.monotonic()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, err, clear_end(code, out, err, service), time.monotonic() - start


@pytest.mark.parametrize("service", SERVICES)
def test_enrich_from_a_misbehaving_service_ends_cleanly_and_changes_nothing(
        fake: FakeScholar, bib: Path, capsys: pytest.CaptureFixture, service: str) -> None:
    before, held = bib.read_bytes(), papers(library_beside(bib))
    for mode in misbehaving(fake, service):
        code, err, last, seconds = timed_run(["library", "enrich", "--from", service, "--bib", str(bib)], capsys,
                                             service)
        assert seconds < DEADLINE_S + SLACK_S, (mode, seconds, last)
        assert bib.read_bytes() == before, mode
        if service == "arxiv" and mode == "overpromise":  # its first page is right (an id asked alone needs no
            held = papers(library_beside(bib))            # second page): what it holds may be used
            continue
        assert papers(library_beside(bib)) == held, (mode, last)


@pytest.mark.parametrize("service", SERVICES)
def test_fill_with_a_misbehaving_literature_goes_on_and_says_so_once(
        fake: FakeScholar, bib: Path, tmp_path: Path, capsys: pytest.CaptureFixture, service: str) -> None:
    before, held = bib.read_bytes(), papers(library_beside(bib))
    for mode in misbehaving(fake, service):
        tex = tmp_path / f"paper-{mode}.tex"
        tex.write_text(DRAFT, encoding="utf-8")
        code, err, _, seconds = timed_run(["fill", str(tex), "--literature", service, "--literature-when", "always"],
                                          capsys, service)
        assert code == 0, (mode, err[-1000:])
        assert f"asking {service}: to 127.0.0.1:{fake.port}: " in err, "said before the first call"
        assert err.count("could not be searched") <= 1, (mode, err)
        assert seconds < DEADLINE_S + 2 * SLACK_S, (mode, seconds)  # the fill loads its models too
        assert (tmp_path / f"paper-{mode}.cited.tex").exists(), "the fill went on"
        assert bib.read_bytes() == before and papers(library_beside(bib)) == held, mode


@pytest.mark.parametrize("command", ["enrich", "fill"])
def test_a_name_that_is_a_folder_here_and_a_service_is_refused_before_anything_is_sent(
        fake: FakeScholar, tmp_path: Path, capsys: pytest.CaptureFixture, command: str) -> None:
    (tmp_path / "arxiv").mkdir()
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "online-refs.bib", bib)
    tex = tmp_path / "paper.tex"
    tex.write_text(DRAFT, encoding="utf-8")
    args = (["library", "enrich", "--from", "arxiv", "--bib", str(bib)] if command == "enrich" else
            ["fill", str(tex), "--literature", "arxiv"])
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "write ./arxiv for the folder, or arxiv: for the service. Nothing was sent." in err
    assert fake.seen == []
