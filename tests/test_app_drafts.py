"""A draft is a draft (issue 27 item 6, issue 29 item 3), on the Cite page through AppTest over the sample library:
each draft is its own workspace file (two tabs keep their own), a new draft carries none of the last one's
results or picks, the library's other drafts are listed to reopen with their own picks, and a record that
cannot be read is moved aside, said on the page and never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import ROOT, TWO_SLOTS, build_sample_library, button
from citefinder.ui import state, workspace

pytestmark = pytest.mark.slow

TIMEOUT = 180


@pytest.fixture(scope="module")
def sample_library(tmp_path_factory) -> Path:
    return build_sample_library(tmp_path_factory.getbasetemp() / "drafts-sample-library")


@pytest.fixture
def new_tab(sample_library, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(sample_library))
    workspace.clear_draft(sample_library)
    for path in workspace.unreadable(sample_library):
        path.unlink()
    return lambda: AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


def test_two_tabs_keep_their_own_drafts_and_picks_stay_with_theirs(new_tab, sample_library):
    one = new_tab()
    one.run()
    one.text_area(key=state.CITE_TEXT).set_value(TWO_SLOTS).run()
    button(one, "Find citations").click().run()
    run = one.session_state[state.CITE_RUN]
    assert len(run.results) == 2
    second = run.results[0].candidates[1].paper.doc_id  # the user prefers another paper for slot 1
    next(b for b in one.button if b.key == f"{run.pick_key(0)}_2").click().run()
    assert one.session_state[state.CITE_CHOICES][0] == (second,)
    first_id = one.session_state[state.CITE_DRAFT_ID]

    two = new_tab()  # a second tab on the same library: it reopens the draft saved last, then starts another
    two.run()
    assert two.session_state[state.CITE_DRAFT_ID] == first_id
    button(two, "Try an example").click().run()
    assert two.session_state[state.CITE_DRAFT_ID] != first_id
    assert state.CITE_RUN not in two.session_state and not two.session_state[state.CITE_CHOICES]
    assert not [m for m in two.markdown if "Your pick then" in m.value]  # no pick of draft 1 shown on draft 2
    two.text_area(key=state.CITE_TEXT).set_value(workspace.load_draft(sample_library, two.session_state[
        state.CITE_DRAFT_ID]).text + " More text.").run()

    # tab one picks again: its own file is written, tab two's draft is untouched
    next(b for b in one.button if b.key == f"{run.pick_key(1)}_2").click().run()
    mine = workspace.load_draft(sample_library, first_id)
    theirs = workspace.load_draft(sample_library, two.session_state[state.CITE_DRAFT_ID])
    assert mine.choices[0] == (second,) and 1 in mine.choices and mine.text == TWO_SLOTS
    assert theirs.text.endswith("More text.") and not theirs.choices and not theirs.results

    # tab two lists the library's other draft and reopens it with its own results and picks
    two.run()
    opening = next(b for b in two.button if b.key == f"cite_open_{first_id}")
    opening.click().run()
    assert two.session_state[state.CITE_DRAFT_ID] == first_id
    assert two.session_state[state.CITE_CHOICES][0] == (second,)
    assert len(two.session_state[state.CITE_RUN].results) == 2


def test_undo_forgets_the_pick_it_takes_back_and_only_that(new_tab, sample_library, monkeypatch):
    from citefinder.config import Settings
    from citefinder.library.contexts import api
    from citefinder.library.contexts.memory import memory_of
    from citefinder.library.store import Library

    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "true")
    library = Library.open(Settings(library=sample_library))
    api.forget(library, ["user"])
    at = new_tab()
    at.run()
    at.text_area(key=state.CITE_TEXT).set_value(TWO_SLOTS).run()
    button(at, "Find citations").click().run()
    run = at.session_state[state.CITE_RUN]
    first = run.results[0].candidates[1].paper.doc_id
    second = run.results[1].candidates[1].paper.doc_id
    next(b for b in at.button if b.key == f"{run.pick_key(0)}_2").click().run()
    next(b for b in at.button if b.key == f"{run.pick_key(1)}_2").click().run()

    def learned() -> set[str]:
        return {r.doc_id for r in memory_of(Library.open(Settings(library=sample_library))).matched_rows()
                if r.origin == "user"}

    assert {first, second} <= learned()
    button(at, "Undo").click().run()  # takes back the second pick only
    assert not at.exception and 1 not in at.session_state[state.CITE_CHOICES]
    assert first in learned() and second not in learned()
    api.forget(library, ["user"])


def test_an_unreadable_record_is_said_on_the_page_and_kept(new_tab, sample_library):
    bad = workspace.draft_path(sample_library, "broken")
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text('{"text": "my thesis [CITATION]", "results": [', encoding="utf-8")
    at = new_tab()
    at.run()
    assert not at.exception
    said = [w.value.replace("\\", "") for w in at.warning if "could not be read" in w.value]
    assert said and "broken.json.unreadable" in said[0]
    kept = bad.with_name("broken.json.unreadable")
    assert kept.read_text(encoding="utf-8") == '{"text": "my thesis [CITATION]", "results": ['
    at.text_area(key=state.CITE_TEXT).set_value("A new text [CITATION].").run()  # the first keystroke
    assert kept.read_text(encoding="utf-8") == '{"text": "my thesis [CITATION]", "results": ['
