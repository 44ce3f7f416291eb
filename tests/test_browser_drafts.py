"""A draft is a draft (issue 29 item 3, issue 27 item 6), in a real browser (`streamlit run app.py`, Debian's
Chromium, 1400x900 as the user had it): a pick made on one draft is never shown on another (a new upload is
another draft), and *Find citations* on a draft whose picks would not all carry over asks in a dialog over the
page, in view where the user clicked, naming the draft it is about."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app_support import browser_library, chromium, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIRST = (
    "Sequence transduction no longer needs recurrence, since attention is all you need [CITATION]. "
    "The bench was quiet that morning. "
    "Reciprocal rank fusion merges several rankings and outperforms Condorcet fusion [CITATION]."
)
OTHER = ("Dense passage retrieval embeds questions and passages for open-domain question answering [CITATION]. "
         "The probabilistic relevance framework behind BM25 remains a strong lexical baseline [CITATION].")


def idle(page) -> None:
    page.wait_for_timeout(400)
    wait_progressing(page.get_by_test_id("stStatusWidgetRunningIcon"), state="hidden")


def slot(page, n: int):
    return page.locator("[class*='st-key-slot_']").nth(n)


def test_picks_stay_with_their_draft_and_the_rerun_question_opens_where_clicked(tmp_path_factory):
    root, library = browser_library(tmp_path_factory, "browser-drafts")
    with streamlit_server(library, root / "server.log") as url, chromium((1400, 900)) as page:
        page.goto(url)
        wait_progressing(page.get_by_role("button", name="Find citations"))
        uploads = page.locator('input[type="file"]')
        uploads.first.set_input_files(files=[{"name": "first.txt", "mimeType": "text/plain",
                                              "buffer": FIRST.encode("utf-8")}])
        wait_progressing(page.get_by_text("Text from"))
        idle(page)
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(slot(page, 1))
        idle(page)
        slot(page, 0).get_by_role("button", name="Use this").first.click()  # the user's own pick on draft 1
        idle(page)
        wait_progressing(slot(page, 0).get_by_text("your pick").first)

        # another paper is uploaded: another draft, none of draft 1's results or picks on it
        uploads.first.set_input_files(files=[{"name": "other.txt", "mimeType": "text/plain",
                                              "buffer": OTHER.encode("utf-8")}])
        expect(page.get_by_label("...or paste your text")).to_have_value(OTHER, timeout=30_000)
        expect(page.locator("[class*='st-key-slot_']")).to_have_count(0, timeout=30_000)  # no result of draft 1
        idle(page)
        assert page.get_by_text("This sentence changed since you picked").count() == 0
        assert page.get_by_text("Your pick then").count() == 0
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(slot(page, 1))
        idle(page)
        assert page.get_by_text("This sentence changed since you picked").count() == 0
        slot(page, 0).get_by_role("button", name="Use this").first.click()
        idle(page)

        # the sentence of the pick is edited; Find citations asks first, in a dialog in view, naming the draft
        area = page.get_by_label("...or paste your text")
        area.fill(OTHER.replace("Dense passage retrieval", "Notably, dense passage retrieval"))
        area.press("Control+Enter")
        idle(page)
        page.get_by_role("button", name="Find citations").click()
        dialog = page.get_by_role("dialog")
        wait_progressing(dialog)
        assert "other.txt" in dialog.inner_text() and "1 slot changed" in dialog.inner_text()
        box = dialog.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + min(box["height"], 200) <= 900  # in view
        dialog.get_by_role("button", name="Cancel").click()
        wait_progressing(dialog, state="hidden")

        # draft 1 is still the library's, with its pick, and reopens from the list of drafts
        page.get_by_text("Your other drafts in this library").click()
        page.get_by_role("button", name="Open").first.click()
        expect(page.get_by_label("...or paste your text")).to_have_value(FIRST, timeout=30_000)
        idle(page)
        wait_progressing(slot(page, 0).get_by_text("your pick").first)
