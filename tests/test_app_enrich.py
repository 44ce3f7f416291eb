"""The Cite page with a literature library configured (AppTest over real libraries): a paired .bib is completed
from it before the fill, one line says how many entries gained an abstract, and a candidate's card says where
its abstract came from; the .bib's saved copy is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from citefinder.ui import paired_bib, state
from tests.app_support import open_app, plain, sample_with_literature
from tests.test_sources_local import DATA

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240
TEXT = ("Self-attention alone, without recurrence, is all you need for sequence transduction [CITATION]. "
        "The bench was quiet that morning. "
        "A residual learning framework eases the training of much deeper networks [CITATION].")


@pytest.fixture
def app(tmp_path_factory, tmp_path, monkeypatch) -> AppTest:
    return open_app(sample_with_literature(tmp_path_factory, tmp_path, monkeypatch), monkeypatch, TIMEOUT)


def test_a_paired_bib_is_completed_before_the_fill_with_one_line(app):
    at = app.run()
    data = (DATA / "refs.bib").read_bytes()
    at.file_uploader(key=paired_bib.UPLOAD).upload("refs.bib", data, "application/x-bibtex").run()
    assert not at.error
    assert any(b.label == "Complete from papers-lit" for b in at.button)  # the button beside the pairing
    at.text_area(key=state.CITE_TEXT).set_value(TEXT).run()
    next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception and not at.error
    captions = [plain(c.value) for c in at.caption]
    assert any(c.startswith("5 of your 8 entries gained an abstract from papers-lit; 3 an identifier; 1 ambiguous "
                            "title left alone; 1 not found. Your .bib is unchanged.") for c in captions), \
        "\n".join(captions)
    run = at.session_state[state.CITE_RUN]
    first = run.results[0].candidates[0].paper
    assert first.key == "vaswani2017" and first.source_of("abstract") == ("papers-lit", "arxiv:1706.03762")
    cards = [plain(m.value) for m in at.markdown]
    assert any("abstract from papers-lit, arxiv:1706.03762" in m for m in cards)
    saved = next(Path(at.session_state[state.CITE_PAIRED].folder).glob("refs.*"))
    assert saved.read_bytes() == data
