"""Library edits reach the export (issue 29, item 5): a .bib paired on the Cite page is listed on the Library
page (its papers, and where they live); a URL edited there is confirmed where Save was clicked, with the field
named, and the .bib downloaded from the Cite page afterwards holds it, the rest of the user's entry as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app_support import build_sample_library, chromium, click_until, paste_draft, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OWN = Path(__file__).parent / "data" / "own-over-sample.bib"
FILL_MS = 180_000
TITLE = "Adam: A method for stochastic optimization"
URL = "https://arxiv.org/abs/1412.6980"


def pick(page, select, option: str, then, opener) -> None:
    """Choose a selectbox option, trying again while a rerun replaces the box (as test_browser_layout's pick)."""
    from playwright.sync_api import Error as PlaywrightError

    for attempt in range(8):
        try:
            page.get_by_test_id("stStatusWidgetRunningIcon").wait_for(state="hidden", timeout=FILL_MS)
            if not select.is_visible():
                opener.click(timeout=5000)
            select.click(timeout=5000)
            page.get_by_role("option", name=option).first.click(timeout=5000)
            then.wait_for(timeout=5000)
            return
        except PlaywrightError:
            page.keyboard.press("Escape")
            page.wait_for_timeout(500 * (attempt + 1))
    then.wait_for()


def test_an_edit_of_a_paired_paper_is_listed_confirmed_and_exported(tmp_path) -> None:
    library = tmp_path / "library"
    shutil.copytree(build_sample_library(tmp_path.parent / "edits-sample"), library,
                    ignore=shutil.ignore_patterns("workspace"))
    with streamlit_server(library, tmp_path / "server.log") as url, chromium() as page:
        page.goto(url)
        wait_progressing(page.get_by_role("button", name="Find citations"))
        paste_draft(page, "We train every model with the Adam optimizer [CITATION] and a warm-up.")
        wait_progressing(page.get_by_text("citation slot found"))
        paired = page.locator("[data-testid='stFileUploader']").filter(has_text="Pair with your .bib")
        paired.locator('input[type="file"]').set_input_files(str(OWN))
        wait_progressing(page.get_by_text("Paired with"))
        # the card's title, not the fill's progress table (its cells are never visible, and it can come first)
        click_until(page, page.get_by_role("button", name="Find citations"),
                    page.get_by_text(TITLE).filter(visible=True).first, FILL_MS // 2, log=tmp_path / "server.log")

        page.goto(f"{url}/Library")
        section = page.get_by_role("heading", name="Paired .bib files")
        wait_progressing(section)
        listed = page.locator("[data-testid='stExpander']", has_text="own-over-sample.bib · 6 papers")
        opener = listed.get_by_text("6 papers")
        opener.click()
        pick(page, listed.get_by_role("combobox"), TITLE, listed.get_by_label("URL"), opener)
        listed.get_by_label("URL").fill(URL)
        listed.get_by_role("button", name="Save").click()
        confirm = page.get_by_text("URL added").first
        wait_progressing(confirm)
        assert "the .bib you download holds the new text" in confirm.inner_text()

        page.goto(url)
        download = page.get_by_role("button", name="Download .bib")
        wait_progressing(download)
        with page.expect_download() as got:
            download.click()
        bib = Path(got.value.path()).read_text(encoding="utf-8")
    entry = bib[bib.index("@article{kingma2014adam,"):]
    entry = entry[:entry.index("\n}") + 2]
    assert f"url = {{{URL}}}" in entry or f"url={{{URL}}}" in entry, entry
    assert "journal={arXiv preprint arXiv:1412.6980}" in entry  # the user's own text kept
    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")
