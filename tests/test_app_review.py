"""The Cite page as a researcher's working copy (AppTest over a real library: the sample plus the user's own .bib).

Several papers per slot and undo; a re-run keeps the picks of unchanged sentences (asking first when one is set
aside); a bad paired .bib is refused with the Library page's message; a good one survives a reload and the page
says what the results come from; the sidebar counts the user's papers apart from the sample's and one switch
brings the sample back; a Search result goes into a slot; the editor changes a field inside the user's entry.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import SAMPLE_SIZE, DownloadSpy, build_sample_library, button, fill, open_app, plain
from citefinder.config import Settings
from citefinder.library import sample
from citefinder.library.bibcount import count_file
from citefinder.library.store import Library
from citefinder.ui import paired_bib, state, workspace

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LATEX = Path(__file__).parent / "data" / "latex"
TIMEOUT = 240
TEXT = ("Self-attention alone, without recurrence, is all you need for sequence transduction [CITATION]. "
        "The bench was quiet that morning. "
        "Bidirectional pre-training of transformers improves language understanding [CITATION].")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The sample library plus the user's own .bib (tests/data/latex/refs.bib)."""
    built = build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")
    folder = tmp_path_factory.mktemp("review") / "library"
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns("workspace"))
    Library.open(Settings(library=folder)).import_files([LATEX / "refs.bib"])
    return folder


@pytest.fixture
def app(folder, monkeypatch) -> AppTest:
    return open_app(folder, monkeypatch, TIMEOUT)


def test_several_papers_per_slot_with_undo_and_a_rerun_that_keeps_the_picks(app, monkeypatch):
    spy = DownloadSpy(monkeypatch)
    at = fill(app, TEXT)
    assert not at.exception and not at.error
    run = at.session_state[state.CITE_RUN]
    sources = {c.paper.source for r in run.results for c in r.candidates}
    assert sources == {"refs.bib"}  # the user's papers exist: the sample is left out
    engine = run.results[0].selection.paper.doc_id
    second = next(c.doc_id for c in run.results[0].candidates if c.doc_id != engine)
    n = next(i for i, c in enumerate(run.results[0].candidates[:5], 1) if c.doc_id == second)
    at.button(key=f"{run.pick_key(0)}_{n}_add").click().run()
    assert at.session_state[state.CITE_CHOICES] == {0: (engine, second)}
    draft = next(b for b in at.get("download_button") if b.label.startswith("Download draft"))
    keys = [p.key for p in (run.results[0].selection.paper,
                            next(c.paper for c in run.results[0].candidates if c.doc_id == second))]
    assert f"\\cite{{{keys[0]},{keys[1]}}}" in spy.data(draft).decode()
    at.button(key=f"{run.pick_key(0)}_cited_1_up").click().run()  # reorder: the second first
    assert at.session_state[state.CITE_CHOICES] == {0: (second, engine)}
    button(at, "Undo").click().run()
    assert at.session_state[state.CITE_CHOICES] == {0: (engine, second)}

    # the same text again: every pick kept, nothing asked
    button(at, "Find citations").click().run()
    assert not at.exception
    assert at.session_state[state.CITE_RUN].run_id != run.run_id
    assert at.session_state[state.CITE_CHOICES] == {0: (engine, second)}
    assert any("Kept 1 pick" in plain(i.value) for i in at.info)

    # the first sentence edited: it asks, then sets that pick aside beside its slot
    at.text_area(key=state.CITE_TEXT).set_value(TEXT.replace("Self-attention alone", "Attention alone")).run()
    button(at, "Find citations").click().run()
    assert any("1 slot changed" in plain(w.value) for w in at.warning)
    button(at, "Yes, find them again").click().run()
    assert not at.exception
    assert at.session_state[state.CITE_CHOICES] == {}
    assert at.session_state[state.CITE_CHANGED][0].ids == (engine, second)
    button(at, "Use it again").click().run()
    assert at.session_state[state.CITE_CHOICES] == {0: (engine, second)}


def test_a_bad_paired_bib_is_refused_and_a_good_one_survives_a_reload(app, folder):
    at = app.run()
    at.file_uploader(key=paired_bib.UPLOAD).upload("refs.bib", b"PK\x03\x04" + b"\x00" * 64, "application/zip").run()
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert any(e.startswith("refs.bib is a ZIP archive") and "not paired" in e for e in errors), errors
    assert not any(str(folder) in e for e in errors)
    assert at.session_state[state.CITE_PAIRED] is None if state.CITE_PAIRED in at.session_state else True
    at.file_uploader(key=paired_bib.UPLOAD).upload("empty.bib", b"", "application/x-bibtex").run()
    assert any("empty" in plain(e.value) for e in at.error)

    at.file_uploader(key=paired_bib.UPLOAD).upload("refs.bib", (LATEX / "refs.bib").read_bytes(),
                                                   "application/x-bibtex").run()
    assert not at.error
    entries = count_file(LATEX / "refs.bib").words()  # the count every page says (library/bibcount.py)
    assert entries == "24 papers"
    assert any(f"Paired with **refs.bib** ({entries})" in plain(c.value) for c in at.caption)
    at.text_area(key=state.CITE_TEXT).set_value(TEXT).run()
    button(at, "Find citations").click().run()
    assert any(f"only ({entries})" in plain(c.value) for c in at.caption)

    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()  # a reload
    assert not again.exception
    paired = again.session_state[state.CITE_PAIRED]
    assert paired is not None and paired.name == "refs.bib"
    assert again.session_state[state.CITE_RUN].paired == paired
    assert any("Suggestions come from your **refs.bib** only" in plain(c.value) for c in again.caption)


def test_the_sidebar_counts_the_sample_apart_and_one_switch_brings_it_back(app):
    at = app.run()
    caption = next(c.value for c in at.sidebar.caption if c.value.startswith("**Library**"))
    counts = sample.counts(Library.open(Settings(library=Path(at.session_state[state.SETTINGS].library))))
    assert caption == (f"**Library** · {counts.own} papers of yours + {counts.sample} sample papers "
                       "(not suggested)")
    assert counts.own >= 20 and 0 < counts.sample <= SAMPLE_SIZE  # the .bib's papers the sample also had are theirs
    toggle = next(t for t in at.sidebar.toggle if t.label.startswith("Suggest the"))
    toggle.set_value(True).run()
    assert at.session_state[state.SETTINGS].suggest_sample
    at.text_area(key=state.CITE_TEXT).set_value(TEXT).run()
    button(at, "Find citations").click().run()
    sources = {c.paper.source for r in at.session_state[state.CITE_RUN].results for c in r.candidates}
    assert "sample-library.bib" in sources


def test_a_search_result_goes_into_a_slot(app):
    at = fill(app, TEXT)
    run = at.session_state[state.CITE_RUN]
    at.switch_page("pages/4_Search.py").run()
    at.text_input(key=state.SEARCH_QUESTION).set_value("masked language model pre-training")
    at.button(key="FormSubmitter:search-Search").click().run()
    assert not at.exception
    assert any(c.value.startswith("key ") for c in at.caption)  # each result shows its key
    at.selectbox(key=state.SEARCH_SLOT).set_value(1).run()
    at.button(key="search_add_1").click().run()
    top = at.session_state[state.SEARCH_RUN].result.candidates[0].doc_id
    assert top in at.session_state[state.CITE_CHOICES][1]
    saved = workspace.load_draft(Path(at.session_state[state.SETTINGS].library))
    assert saved is not None and top in saved.choices[1] and saved.results[0].slot == run.results[0].slot


def test_a_long_draft_draws_one_page_of_slots_that_follows_the_slot_in_review(app, monkeypatch):
    """A long draft's page draws PAGE cards, not every slot's (each key redrew every card: seconds on a 300-slot
    draft, bench/review_nav.py at bc9259c); choosing a page puts its first slot in review, n / p move the page with it,
    and the results file still holds every slot, made once while only the slot in review moves."""
    from citefinder.ui.cite import results as results_view

    monkeypatch.setattr(results_view, "PAGE", 4)
    topics = ["attention", "residual networks", "dropout", "batch normalisation", "word vectors", "beam search",
              "adam", "convolution", "recurrence", "pre-training"]
    at = fill(app, " ".join(f"We build on {t} [CITATION]." for t in topics))
    assert not at.exception and not at.error
    run = at.session_state[state.CITE_RUN]
    cards = lambda: [int(m) for m in re.findall(r"\*\*Slot (\d+)\*\*", " ".join(  # noqa: E731
        x.value for x in at.markdown))]
    pager = next(s for s in at.selectbox if s.label == "10 slots, 4 a page")
    assert pager.options == ["Slots 1–4", "Slots 5–8", "Slots 9–10"]
    in_review = lambda: [int(m) for m in re.findall(r"\*\*Slot (\d+)\*\* :blue\[· in review\]", " ".join(  # noqa: E731
        x.value for x in at.markdown))]
    assert len(cards()) == 4 and len(in_review()) == 1 and in_review()[0] in cards()  # the page of the slot in review
    other = "Slots 1–4" if in_review()[0] > 4 else "Slots 5–8"
    pager.set_value(other).run()
    first = 1 if other == "Slots 1–4" else 5
    assert cards() == [first, first + 1, first + 2, first + 3]
    assert at.session_state[state.CITE_FOCUS] == first - 1 and in_review() == [first]
    made = at.session_state[results_view._JSON]
    for _ in range(3):
        button(at, "Next to check").click().run()
    focused = at.session_state[state.CITE_FOCUS]
    assert focused != first - 1 and in_review() == [focused + 1] and focused + 1 in cards()  # the page moved with it
    page = next(s for s in at.selectbox if s.label == "10 slots, 4 a page").value
    assert page == ["Slots 1–4", "Slots 5–8", "Slots 9–10"][focused // 4]
    assert at.session_state[results_view._JSON] is made  # nothing it holds changed: not made again
    assert len(json.loads(made[2])) == 10 and run.run_id == at.session_state[state.CITE_RUN].run_id
