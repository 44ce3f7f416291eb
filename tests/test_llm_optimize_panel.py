"""The Settings page's compiled-picker panel, rendered headless with AppTest."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def panel_app(library: str, llm_model: str | None) -> None:
    from citefinder.config import Settings
    from citefinder.ui.optimize_panel import optimize_panel

    optimize_panel(Settings(library=library, llm_model=llm_model))


def markdown_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_panel_without_program_or_llm(tmp_path):
    at = AppTest.from_function(panel_app, args=(str(tmp_path / "library"), None)).run(timeout=60)
    assert not at.exception
    assert "No compiled program yet" in markdown_of(at)
    assert "Set an LLM above" in at.info[0].value
    assert not at.button


def test_panel_names_the_newest_program_and_offers_the_form(tmp_path):
    programs = tmp_path / "library" / "programs"
    programs.mkdir(parents=True)
    for stamp, optimizer in (("20260101-000000-000000", "bootstrap"), ("20260102-000000-000000", "mipro")):
        info = {"optimizer": optimizer, "examples": 5, "demos": 3, "model": "hosted_vllm/x"}
        (programs / f"picker-{stamp}.json").write_text(json.dumps({"predict": {}, "citefinder": info}))
    at = AppTest.from_function(panel_app, args=(str(tmp_path / "library"), "hosted_vllm/x")).run(timeout=60)
    assert not at.exception
    text = markdown_of(at)
    assert "`picker-20260102-000000-000000.json` (optimizer mipro" in text and "`hosted_vllm/x`" in text
    assert [b.label for b in at.button] == ["Optimise"]
    assert [s.label for s in at.selectbox] == ["Split", "Optimizer"]
