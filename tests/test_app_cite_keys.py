"""The Cite page's keys and small words (issue 37, items 6, 8 and 10), through AppTest over the sample library:
the first n after a fill moves on from the slot already in review; the key of the candidate a slot cites already
accepts it and goes next (the key legend says so); a two-sentence draft flags no candidate as "newer than all
your draft cites so far"; a file without markers is refused while a draft is in progress; a refused .bib's
message ends with a full stop and goes away with the file."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import TWO_SLOTS, build_sample_library, button, fill
from citefinder.ui import paired_bib, state, workspace
from citefinder.ui.cite import choices

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180
# slots the sample library cannot fill: each one is still to check after the fill
NOTHING = ("The harvest of the orchard was measured by hand [CITATION]. The river flooded the valley twice "
           "[CITATION]. The choir sang in the old chapel [CITATION]. Bread was baked at dawn [CITATION].")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    built = build_sample_library(tmp_path_factory.getbasetemp() / "keys-sample-library")
    folder = tmp_path_factory.mktemp("keys") / "library"
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns("workspace", "paired"))
    return folder


@pytest.fixture
def app(folder, monkeypatch) -> AppTest:
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    workspace.clear_draft(folder)
    for path in workspace.unreadable(folder):
        path.unlink()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


def plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def in_review(at: AppTest) -> int:
    run = at.session_state[state.CITE_RUN]
    return next(int(m.value.split("**Slot ")[1].split("**")[0]) - 1 for m in at.markdown
                if m.value.startswith("**Slot ") and "in review" in m.value and run is not None)


def test_the_first_n_after_a_fill_moves_on_from_the_slot_in_review(app):
    at = fill(app, NOTHING)
    assert not at.exception
    todo = choices.to_check(at.session_state[state.CITE_RUN])
    assert len(todo) >= 2
    assert in_review(at) == todo[0]
    button(at, "Next to check").click().run()
    assert in_review(at) == todo[1]  # not the one already in review
    button(at, "Previous").click().run()
    assert in_review(at) == todo[0]


def test_the_key_of_the_candidate_cited_already_accepts_it_and_goes_next(app):
    at = fill(app, NOTHING)
    todo = choices.to_check(at.session_state[state.CITE_RUN])
    first = todo[0]
    use = next(b for b in at.button if b.label == "Use this" and b.proto.shortcut == "1")
    use.click().run()  # key 1: the slot in review cites its rank 1 (and the review moves to the next to check)
    assert at.session_state[state.CITE_CHOICES][first]
    button(at, "Previous").click().run()  # back to it: its rank 1 is the one cited
    assert in_review(at) == first
    legend = next(c.value for c in at.caption if c.value.startswith("Keys:"))
    assert "*Accept, next*" in legend
    chosen = next(b for b in at.button if b.label == "Chosen" and b.proto.shortcut == "1")
    assert not chosen.disabled  # was disabled: the key did nothing
    chosen.click().run()  # key 1 again: keep it, go on
    assert not at.exception
    assert in_review(at) == todo[1]
    assert at.session_state[state.CITE_CHOICES][first]


def test_a_two_sentence_draft_flags_no_candidate_as_newer_than_it_cites(app):
    at = fill(app, TWO_SLOTS)
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert "2017" in shown or "2019" in shown  # the candidates' years are shown...
    assert "newer than all your draft cites so far" not in shown  # ...without a flag two cites cannot justify


def test_a_file_without_markers_is_refused_while_a_draft_is_in_progress(app):
    at = fill(app, TWO_SLOTS)
    run = at.session_state[state.CITE_RUN]
    at.file_uploader(key=state.CITE_UPLOAD).set_value(("notes.txt", b"No marker here. None at all.", "text/plain"))
    at.run()
    assert not at.exception
    said = " ".join(plain(e.value) for e in at.error)
    assert "notes.txt has no place marked for a citation" in said and "stays" in said
    assert at.text_area(key=state.CITE_TEXT).value == TWO_SLOTS
    assert at.session_state[state.CITE_RUN] is run
    at.run()  # still said on the next run of the page
    assert any("notes.txt has no place" in plain(e.value) for e in at.error)


def test_a_refused_bib_is_said_in_a_sentence_and_goes_with_the_file(app):
    at = app.run()
    at.file_uploader(key=paired_bib.UPLOAD).set_value(("refs.bib", b"", "text/plain"))
    at.run()
    said = [e.value for e in at.error]
    assert any(s.endswith("the file is empty\\. The draft is not paired with it\\.") for s in said), said
    assert any(s.startswith("No records found") for s in said), said
    at.file_uploader(key=paired_bib.UPLOAD).set_value(None)
    at.run()
    assert not at.error  # the error left with the file


def test_an_error_renders_its_italics_and_commands(app):
    at = app.run()
    bib = (Path(__file__).parent / "data" / "latex" / "refs.bib").read_bytes()
    at.file_uploader(key=state.CITE_UPLOAD).set_value(("refs.pdf", bib, "application/pdf"))
    at.run()
    said = " ".join(e.value for e in at.error)
    assert "*Pair with your \\.bib*" in said and "`citefinder library import`" in said, said  # not \* nor \`
    assert "\\*" not in said and "\\`" not in said


def test_the_library_names_the_users_files_in_an_import_that_failed(folder, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    at = AppTest.from_file(str(ROOT / "pages" / "2_Library.py"), default_timeout=TIMEOUT).run()
    at.file_uploader(key=state.LIBRARY_UPLOAD).set_value(("random5mb.pdf", b"\x00\x01 not a pdf at all" * 50,
                                                           "application/pdf"))
    at.run()
    button(at, "Import 1 file").click().run()
    assert not at.exception
    shown = " ".join(str(d.value.to_dict()) for d in at.dataframe) + " ".join(e.value for e in at.error)
    assert "random5mb" in shown and "0-random5mb" not in shown and "citefinder-upload-" not in shown, shown
