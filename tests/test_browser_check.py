"""The Check view in a real browser: `streamlit run app.py` driven by Debian's Chromium (issue 21).

The researcher opens *Check*, uploads tests/data/latex/checked.tex and its refs.bib, clicks *Check
citations*, sees the verdicts (one citation likely wrong), replaces that key with the better fit in one
click, and downloads the corrected .tex: byte for byte the upload except that key."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from app_support import build_sample_library, chromium, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATEX = Path(__file__).parent / "data" / "latex"
WRONG = b"He.Zhang.ea.2016"


def test_check_view_in_a_browser(tmp_path):
    library = build_sample_library(tmp_path / "library")
    tex = (LATEX / "checked.tex").read_bytes()
    with streamlit_server(library, tmp_path / "server.log") as url, chromium() as page:
        page.goto(f"{url}/Check")
        wait_progressing(page.get_by_role("button", name="Check citations"))
        uploads = page.locator('input[type="file"]')
        uploads.nth(0).set_input_files(str(LATEX / "checked.tex"))
        # the draft's upload reruns the page: the .bib is given once that rerun has shown it
        wait_progressing(page.get_by_text("checked.tex").first)
        uploads.nth(1).set_input_files(str(LATEX / "refs.bib"))
        wait_progressing(page.get_by_text("refs.bib").first)
        page.wait_for_timeout(3_000)  # let the rerun each upload starts finish: a click during it is dropped
        page.get_by_role("button", name="Check citations").click()
        fix = page.get_by_role("button", name="Replace with Robertson.Zaragoza.2009")
        wait_progressing(fix)
        main = page.locator("[data-testid='stMain']")
        text = main.inner_text()
        assert "likely wrong" in text and "citations" in text and "Traceback" not in text
        assert main.locator("[data-testid='stException']").count() == 0

        fix.click()
        wait_progressing(page.get_by_text("Replaced by Robertson.Zaragoza.2009"))
        download = page.get_by_role("button", name="Download corrected .tex")
        expect(download).to_have_count(1, timeout=60_000)  # the rerun's stale copy (disabled) is gone
        expect(download).to_be_enabled()
        with page.expect_download() as got:
            download.click()
        assert got.value.suggested_filename == "checked.fixed.tex"
        corrected = Path(got.value.path()).read_bytes()
    at = tex.index(WRONG)
    assert corrected == tex[:at] + b"Robertson.Zaragoza.2009" + tex[at + len(WRONG):]
