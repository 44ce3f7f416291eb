"""The Cite page keeps the draft in progress and undoes only what this session did (issue 37, items 6 and 7), in a
real browser (`streamlit run app.py`, Debian's Chromium):

- undo (key u) after a reload (a new browser session) does not take back the pick made before it: nothing to
  undo yet; a pick made now is undone by u, its slot brought into view from the top of the page, and the card
  says what was undone;
- a file with no marker uploaded over the draft in progress is refused with the reason: the text, the results
  and the picks stay.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app_support import browser_library, chromium, paste_draft, settle, streamlit_server, wait_progressing
from citefinder.ui.cite.draft import EXAMPLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DRAFT = EXAMPLE + (
    "\n\nGenerative adversarial nets estimate generative models via an adversarial process [CITATION]. "
    "Sequence to sequence learning with neural networks maps an input sequence to an output one [CITATION]."
)
SLOTS = 7


def card(page, n: int):
    return page.locator("[class*='st-key-slot_']").nth(n)


def status(page, n: int) -> str:
    return card(page, n).inner_text()


def in_view(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] < page.viewport_size["height"]


def to_top(page) -> None:
    page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0); window.scrollTo(0, 0)")
    page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page


def test_undo_is_this_sessions_and_a_file_without_markers_keeps_the_draft(tmp_path_factory):
    root, library = browser_library(tmp_path_factory, "browser-cite-session")
    with streamlit_server(library, root / "server.log") as url, chromium((1400, 900)) as page:
        page.goto(url)
        wait_progressing(page.get_by_role("button", name="Find citations"))
        paste_draft(page, DRAFT)
        wait_progressing(page.get_by_text(f"{SLOTS} citation slots found"))
        settle(page)
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(card(page, SLOTS - 1))
        settle(page)
        # an earlier session's pick, on slot 6
        card(page, 5).get_by_role("button", name="Use this").first.click()
        wait_progressing(card(page, 5).get_by_text("your pick").first)
        settle(page)

        # a new browser session: the pick is restored, and there is nothing of this session's to undo
        page.reload()
        wait_progressing(card(page, SLOTS - 1))
        settle(page)
        assert "your pick" in status(page, 5)
        expect(page.get_by_role("button", name="Undo")).to_be_disabled()
        to_top(page)
        page.keyboard.press("u")
        page.wait_for_timeout(1_500)
        settle(page)
        assert "your pick" in status(page, 5)  # not undone by surprise
        assert page.get_by_text("Undone:").count() == 0

        # this session's pick on slot 7 is undone by u from the top of the page: brought into view, said
        card(page, 6).get_by_role("button", name="Use this").first.click()
        wait_progressing(card(page, 6).get_by_text("your pick").first)
        settle(page)
        to_top(page)
        page.wait_for_timeout(500)
        assert not in_view(page, card(page, 6))
        page.keyboard.press("u")
        note = card(page, 6).get_by_text("Undone: slot 7")
        wait_progressing(note)
        settle(page)
        page.wait_for_timeout(1_500)  # the scroll script runs after the page is drawn
        assert "the engine's pick" in note.inner_text() and "instead of" in note.inner_text()
        assert in_view(page, card(page, 6)), "the slot the undo changed is brought into view"
        assert "in review" in status(page, 6)
        assert "your pick" not in status(page, 6)
        assert "your pick" in status(page, 5)  # the earlier session's pick stays

        # a file with no marker, uploaded over the draft in progress: refused, the draft stays
        page.locator('input[type="file"]').first.set_input_files(files=[{
            "name": "notes.txt", "mimeType": "text/plain",
            "buffer": b"Some notes with no citation marker at all. Another sentence."}])
        wait_progressing(page.get_by_text("notes.txt has no place marked for a citation"))
        settle(page)
        expect(page.get_by_label("...or paste your text")).to_have_value(DRAFT)
        expect(page.locator("[class*='st-key-slot_']")).to_have_count(SLOTS)
        assert "your pick" in status(page, 5)
        assert page.get_by_text("Your other drafts in this library").count() == 0  # nothing was put aside
