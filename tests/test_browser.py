"""End to end in a real browser: `streamlit run app.py` driven by Debian's Chromium through Playwright.

A fresh, empty library folder: the app loads the sample library on first run, then a pasted
paragraph with two slots is filled, a trace opened, the .bib downloaded and parsed, and an
uploaded PDF with three slots filled.
"""

from __future__ import annotations

import time

import bibtexparser
import pytest
from playwright.sync_api import expect

from app_support import PDF_LINES, TWO_SLOTS, chromium, make_pdf, paste_draft, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]



def test_cite_flow_in_the_browser(tmp_path):
    # fills at the old default threshold: what these tests read is the page, not the threshold
    threshold = {"CITEFINDER_CONFIDENCE_THRESHOLD": "0.55"}
    with streamlit_server(tmp_path / "library", tmp_path / "server.log", env=threshold) as url, chromium() as page:
        page.goto(url)
        wait_progressing(page.get_by_text("Sample library loaded"))

        paste_draft(page, TWO_SLOTS)
        page.get_by_text("citation slots found").wait_for()
        assert page.get_by_text("citation slots found").inner_text().startswith("2")

        start = time.perf_counter()
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(page.get_by_text("Filled 2 of 2 slots"))
        fill_s = time.perf_counter() - start
        print(f"\nbrowser: filled 2 slots in {fill_s:.2f} s (click to results shown)")
        page.locator("strong", has_text="Attention Is All You Need").first.wait_for()  # the slot's chosen paper
        page.get_by_text("Slot 2", exact=True).wait_for()

        page.get_by_text("Trace: how this paper was chosen").first.click()
        page.get_by_role("tab", name="Query").first.wait_for()
        for tab in ("BM25", "Dense", "Fused", "Rerank", "Select"):
            page.get_by_role("tab", name=tab).first.wait_for()
        page.get_by_role("tab", name="Rerank").first.click()
        page.locator("[data-testid='stAlert']").filter(has_text="skipped: no cross-encoder configured").wait_for()

        with page.expect_download() as download:
            page.get_by_role("button", name="Download .bib (2 papers)").click()
        assert download.value.suggested_filename == "references.bib"
        bib = bibtexparser.parse_file(download.value.path())
        assert not bib.failed_blocks
        assert sorted(e.fields_dict["title"].value.strip("{}") for e in bib.entries) == [
            "Attention Is All You Need",
            "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods",
        ]

        page.locator('input[type="file"]').first.set_input_files(
            files=[{"name": "draft.pdf", "mimeType": "application/pdf", "buffer": make_pdf(PDF_LINES)}]
        )
        wait_progressing(page.get_by_text("3 citation slots found"))
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(page.get_by_text("Filled 3 of 3 slots"))
        page.get_by_text("Slot 3", exact=True).wait_for()
        page.get_by_role("button", name="Download draft with \\cite (3 of 3 filled)").wait_for()
        expect(page.get_by_role("button", name="Accept, next")).to_have_count(3)


HOSTILE_SCRIPT = """
from citefinder.types import Paper
from citefinder.ui.render import highlight_slot, paper_card
import streamlit as st

paper_card(Paper(
    doc_id="t:x",
    title="<img src=x onerror=window.__xss=1> [click](javascript:alert(1)) **bold** $x^2$ :red[hi] www.evil.example",
    authors=("<b>A</b>", "me@evil.example"),
    year=2020,
    venue="# heading https://evil.example",
    url="javascript:alert(3)",
))
st.markdown(highlight_slot("Before <i>x</i> [CITATION] and [CITATION] end.", 1))
"""


def test_hostile_metadata_is_plain_text_in_the_browser(tmp_path):
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE_SCRIPT)
    with streamlit_server(tmp_path / "library", tmp_path / "server.log", script) as url, chromium() as page:
        page.goto(url)
        wait_progressing(page.get_by_text("end."))
        main = page.locator("[data-testid='stMain']")
        assert main.locator("img, b, i, a, h1, .katex").count() == 0
        assert page.evaluate("() => window.__xss") is None
        texts = [t.replace("\u2060", "") for t in main.locator("[data-testid='stMarkdownContainer']").all_inner_texts()]
        assert ("<img src=x onerror=window.__xss=1> [click](javascript:alert(1)) **bold** $x^2$ :red[hi] "
                "www.evil.example") in texts
        assert "Before <i>x</i> [CITATION] and [CITATION] end." in texts
