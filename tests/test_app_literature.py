"""The Cite page's literature (AppTest over a real library, the sample, and a real literature library folder): off
unless one is configured; under a card, the papers not in your library; *Add to my library* stores one under a
key in the user's style, cites it in the slot and puts it in the .bib download, never touching a .bib file or
the literature folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import bibtexparser
import pytest
from literature_support import only_theirs, snapshot
from streamlit.testing.v1 import AppTest

from app_support import DownloadSpy, build_sample_library
from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.ui import state, workspace
from citefinder.ui.cite.literature import ALWAYS, UNSURE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("literature_cache")]

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240


@pytest.fixture
def folder(tmp_path_factory) -> Path:
    built = build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")
    folder = tmp_path_factory.mktemp("lit-app") / "library"
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns("workspace"))
    return folder


def _app(folder: Path, monkeypatch, literature: Path | None) -> AppTest:
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    if literature is not None:
        monkeypatch.setenv("CITEFINDER_LITERATURE", str(literature))
    else:
        monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)
    workspace.clear_draft(folder)
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


def test_the_literature_is_off_unless_a_library_is_configured(folder, monkeypatch):
    at = _app(folder, monkeypatch, None)
    at.run()
    assert not at.exception
    assert any("no literature library is configured" in c.value for c in at.caption)
    assert not [s for s in at.get("button_group") if s.label == "Search the literature"]


def test_add_to_my_library_stores_the_paper_in_your_style_and_cites_it(folder, monkeypatch, literature, records):
    spy = DownloadSpy(monkeypatch)
    before = snapshot(literature)
    target = records[only_theirs(records)]
    at = _app(folder, monkeypatch, literature)
    at.run()
    setting = next(s for s in at.get("button_group") if s.label == "Search the literature")
    assert setting.value == UNSURE
    setting.set_value(ALWAYS)
    at.text_area(key=state.CITE_TEXT).set_value(f"We follow {target['title'].lower()} [CITATION].").run()
    at = next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception
    run = at.session_state[state.CITE_RUN]
    offered = run.results[0].literature
    n = next(i for i, c in enumerate(offered, 1) if c.doc_id == target["doc_id"])  # the priors may reorder
    assert n <= 5 and not offered[n - 1].in_library
    assert any("Not in your library" in m.value for m in at.markdown)
    assert any("ranked by bm25" in c.value and "asked for every slot" in c.value for c in at.caption)  # its trace
    assert run.results[0].selection.paper is None or run.results[0].selection.paper.doc_id != target["doc_id"]

    add = at.button(key=f"{run.pick_key(0)}_lit_{n}")
    assert add.label == "Add to my library"
    add.click().run()
    assert not at.exception
    key = f"{target['authors'][0].split()[-1].lower()}{target['year']}"  # the sample's keys: vaswani2017attention
    library = Library.open(Settings(library=folder))
    stored = library.by_key(next(k for k in [p.key for p in library.iter_papers()] if k and k.startswith(key)))
    assert stored is not None and stored.doc_id == target["doc_id"] and stored.source == f"literature:{literature.name}"
    assert at.session_state[state.CITE_CHOICES][0] == (target["doc_id"],)
    assert at.button(key=f"{run.pick_key(0)}_lit_{n}").label == "In your library"
    bib = spy.data(next(b for b in at.get("download_button") if b.label.startswith("Download .bib"))).decode()
    (entry,) = bibtexparser.parse_string(bib).entries
    assert entry.key == stored.key and entry.fields_dict["eprint"].value == target["arxiv_id"]
    assert snapshot(literature) == before
