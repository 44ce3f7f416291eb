"""The Library page's "Keep this library in sync with a .bib / CSL-JSON file" control (AppTest, real library).

A fresh library is linked to a copy of tests/data/latex/refs.bib through the page: the file is listed,
its papers are imported, an edit is applied on *Sync now*, a bad path is a message (no traceback),
and *Unlink* keeps the papers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import button, plain
from citefinder.ui import library_view, state

pytestmark = pytest.mark.slow  # MiniLM embeds the linked papers

ROOT = Path(__file__).resolve().parent.parent
LATEX = Path(__file__).parent / "data" / "latex"
TIMEOUT = 180
N_REFS = 24  # entries in tests/data/latex/refs.bib

ELECTRA = """
@inproceedings{Clark.Luong.ea.2020,
  title     = {{ELECTRA}: Pre-training Text Encoders as Discriminators Rather Than Generators},
  author    = {Clark, Kevin and Luong, Minh-Thang and Le, Quoc V. and Manning, Christopher D.},
  year      = {2020},
  abstract  = {Replaced token detection trains a discriminator to tell which input tokens a small generator replaced.}
}
"""


def titles(at: AppTest) -> list[str]:
    return sorted(next(d.value for d in at.dataframe if "title" in d.value.columns)["title"])


def listed(at: AppTest, path: Path) -> bool:
    return any(f"`{path}`" in m.value for m in at.markdown)


def test_library_page_links_a_bib_lists_it_syncs_it_and_unlinks_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    bib = tmp_path / "zotero" / "refs.bib"
    bib.parent.mkdir()
    shutil.copy(LATEX / "refs.bib", bib)
    at = AppTest.from_file(str(ROOT / "pages" / "2_Library.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert at.metric[0].value == "0"
    assert button(at, "Link and import").disabled  # no path typed yet

    # a path that is not a file: a message, no traceback, nothing linked
    at.text_input(key=library_view.LINK_PATH).set_value(str(tmp_path / "nowhere.bib")).run()
    button(at, "Link and import").click().run()
    assert not at.exception
    assert any("no such file" in plain(e.value) for e in at.error)
    assert not any(b.label == "Unlink" for b in at.button)

    at.text_input(key=library_view.LINK_PATH).set_value(str(bib)).run()
    button(at, "Link and import").click().run()
    assert not at.exception and not at.error
    assert any(plain(s.value).startswith(f"Linked {bib}: {N_REFS} added") for s in at.success)
    assert listed(at, bib)
    assert at.metric[0].value == str(N_REFS)
    shown = titles(at)
    assert "Attention Is All You Need" in shown
    assert "Dense Passage Retrieval for Open-Domain Question Answering" in shown
    assert at.text_input(key=library_view.LINK_PATH).value == ""  # cleared after linking

    # an entry added to the file is imported on "Sync now"
    bib.write_text(bib.read_text(encoding="utf-8") + ELECTRA, encoding="utf-8")
    button(at, "Sync now").click().run()
    assert not at.exception and not at.error
    assert any("1 added" in plain(s.value) for s in at.success)
    assert at.metric[0].value == str(N_REFS + 1)

    # unlink: the file is no longer listed, its papers stay
    button(at, "Unlink").click().run()
    assert not at.exception
    assert any(plain(s.value).startswith("Unlinked") for s in at.success)
    assert not listed(at, bib)
    assert at.metric[0].value == str(N_REFS + 1)
    assert state.LIBRARY_MESSAGE not in at.session_state
