"""A newcomer's agent is one module and one registration (issue 23): with nothing else changed it runs by
default, moves the fused order (an untuned fusion weight, with a warning naming it), leaves the confidence
alone (it does not read the agent), and its trace shows in ``find --json``, the evaluation and the app."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import DownloadSpy, build_sample_library
from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.rank.calibration import candidate_features
from citefinder.retrieve import registry
from citefinder.types import Hit, Query
from citefinder.ui import state, workspace

pytestmark = pytest.mark.slow  # builds the sample library and loads MiniLM

ROOT = Path(__file__).resolve().parent.parent
TEXT = "Attention is all you need for sequence transduction [CITATION]."


class ToyAgent:
    """The whole module of a toy agent: it always ranks the papers whose title is longest first."""

    name = "toy"
    uses_variants = False

    def __init__(self, settings: Settings, library: Library) -> None:
        self.library, self.k = library, 5

    def skip_reason(self, query: Query) -> str | None:
        return None

    def search(self, query: Query) -> list[Hit]:
        longest = sorted(self.library.iter_papers(), key=lambda p: (-len(p.title), p.doc_id))[: self.k]
        return [Hit(p.doc_id, r, float(len(p.title))) for r, p in enumerate(longest, start=1)]


@pytest.fixture(scope="module")
def sample_path(tmp_path_factory) -> Path:
    return build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")


@pytest.fixture
def toy(monkeypatch):
    """The one registration line."""
    monkeypatch.setitem(registry.AGENTS, "toy", registry.AgentSpec(ToyAgent, "the longest titles"))


@pytest.fixture
def library(sample_path) -> Library:
    return Library.open(Settings(library=sample_path))


def test_it_runs_by_default_and_moves_the_fused_order(toy, library, caplog):
    from citefinder.pipeline.pipeline import Pipeline

    assert "toy" in registry.default_agents()
    with caplog.at_level(logging.WARNING, logger="citefinder.rank.fuse"):
        pipeline = Pipeline(library.settings, library)
    assert any("toy" in r.getMessage() and "tuned" in r.getMessage() for r in caplog.records)
    result = pipeline.cite_text(TEXT)[0]
    trace = result.trace("toy")
    assert trace is not None and trace.kind == "retriever" and trace.status == "ok" and trace.top
    assert "toy" in result.trace("fuse").inputs["lists"]

    without = Pipeline(library.settings.with_overrides(agents=registry.default_agents()[:-1]), library)
    assert [a.name for a in without.agents] == [n for n in registry.default_agents() if n != "toy"]
    before = [c.doc_id for c in without.cite_text(TEXT)[0].candidates]
    after = [c.doc_id for c in result.candidates]
    assert after != before
    favourite = trace.top[0].doc_id  # the toy's first paper climbs in the fused order
    assert after.index(favourite) < (before.index(favourite) if favourite in before else len(before))


def test_the_confidence_does_not_read_it(toy, library):
    from citefinder.pipeline.pipeline import Pipeline

    result = Pipeline(library.settings, library).cite_text(TEXT)[0]
    ran = [t.agent for t in result.traces if t.kind == "retriever" and t.status == "ok" and t.top]
    assert "toy" in ran and "toy" not in registry.feature_agents()
    others = [a for a in ran if a != "toy"]
    n = library.count()
    assert candidate_features(result.candidates, 0, ran, n) == candidate_features(result.candidates, 0, others, n)


def test_its_trace_shows_in_find_json_and_the_evaluation(toy, library, capsys):
    from citefinder.cli.main import main
    from citefinder.evaluate import evaluate
    from citefinder.evaluate.dataset import EvalItem
    from citefinder.pipeline.pipeline import Pipeline

    assert main(["find", TEXT, "--json", "--library", str(library.path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    rows = rows if isinstance(rows, list) else [rows]
    assert "toy" in [t["agent"] for t in rows[0]["traces"]]

    pipeline = Pipeline(library.settings, library)
    gold = pipeline.cite_text(TEXT)[0].trace("toy").top[0].doc_id
    scored = evaluate(pipeline, [EvalItem("q1", TEXT, (gold,))])
    assert scored["stages"]["toy"]["recall@5"] == 1.0


def test_its_trace_shows_in_the_app(toy, sample_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(sample_path))
    workspace.clear_draft(sample_path)
    spy = DownloadSpy(monkeypatch)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.text_area(key=state.CITE_TEXT).set_value(TEXT).run()
    at = next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception
    run = at.session_state[state.CITE_RUN]
    assert "toy" in [t.agent for t in run.results[0].traces]
    buttons = {b.label: b for b in at.get("download_button")}
    rows = json.loads(spy.data(buttons["Download results (JSON)"]))
    assert "toy" in [t["agent"] for t in rows[0]["traces"]]
