"""The Evaluate page, driven headless with AppTest over the sample library and ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import build_sample_library
from citefinder.ui import evaluate_view

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def sample_library(tmp_path_factory) -> Path:
    return build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")


def test_evaluate_page_runs_a_small_evaluation_and_plots_curves(sample_library, monkeypatch) -> None:
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(sample_library))
    at = AppTest.from_file(str(ROOT / "pages" / "5_Evaluate.py"), default_timeout=300).run()
    assert not at.exception
    assert "citeme.jsonl" in at.selectbox(key="eval_file").options
    at.selectbox(key="eval_file").set_value("citeme.jsonl")
    at.number_input(key="eval_limit").set_value(3)
    next(b for b in at.button if b.label == "Run evaluation").click().run()
    assert not at.exception and not at.error
    result = at.session_state[evaluate_view.EVAL_RESULT]
    assert result["items"] == 3 and len(result["outcomes"]) == 3
    # one stage per retrieval agent that searched, then fused and reranked
    assert {"bm25", "dense", "fused", "reranked"} <= set(result["stages"])
    assert list(result["stages"])[-2:] == ["fused", "reranked"]
    assert at.get("vega_lite_chart"), "the recall@k plot is missing"
    table = at.dataframe[0].value
    assert list(table.index) == list(result["stages"])  # a row per stage, in pipeline order
    assert "recall@10" in table.columns
