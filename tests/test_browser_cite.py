"""The Cite page as a picking tool, in a real browser: `streamlit run app.py` driven by Debian's Chromium.

One app server and one browser for the module (the machine has two cores). Each test is one of the
problems a researcher met: pasting then one click, one-click candidates, nothing lost on navigation,
Markdown in file names, malformed library uploads, progress in view during a fill, a dead LLM.
"""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path

import bibtexparser
import pytest
from playwright.sync_api import expect

from app_support import build_sample_library, chromium, streamlit_server, upload, wait_progressing
from citefinder.ui.cite.results import PAGE
from llm_support import fields, scripted_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TWO = (
    "Sequence transduction no longer needs recurrence, since attention is all you need [CITATION]. "
    "The bench was quiet that morning. "
    "Reciprocal rank fusion merges several rankings and outperforms Condorcet fusion [CITATION]."
)


def many(n: int) -> str:
    return " ".join(f"Sequence transduction without recurrence: attention is all you need, part {i} [CITATION]."
                    for i in range(n))


LIBRARY: dict[str, Path] = {}  # the module's library folder (set by the app fixture)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-cite")
    sample = build_sample_library(tmp_path_factory.getbasetemp() / "browser-sample-library")
    library = tmp_path_factory.mktemp("browser-cite-library") / "library"  # a copy: these tests import into it
    shutil.copytree(sample, library, ignore=shutil.ignore_patterns("workspace"))
    LIBRARY["path"] = library
    # fills at the old default threshold: what these tests read is the page, not the threshold
    threshold = {"CITEFINDER_CONFIDENCE_THRESHOLD": "0.55"}
    with streamlit_server(library, root / "server.log", env=threshold) as url, chromium((1280, 900)) as page:
        page.goto(url)
        wait_progressing(page.get_by_text("Find the papers behind every [CITATION]"))
        wait_progressing(page.get_by_role("button", name="Find citations"))
        yield url, page, root


def go(page, url: str, path: str = "") -> None:
    page.goto(f"{url}/{path}")
    page.locator("[data-testid='stAppViewContainer']").wait_for()


def slot(page, n: int):
    return page.locator("[class*='st-key-slot_']").nth(n)


def download_bib_titles(page) -> list[str]:
    with page.expect_download() as download:
        page.get_by_role("button", name="Download .bib").click()
    bib = bibtexparser.parse_file(download.value.path())
    return sorted(e.fields_dict["title"].value.strip("{}") for e in bib.entries)


def test_paste_then_one_click_fills_and_a_click_on_a_candidate_updates_the_bib(app):
    url, page, _ = app
    go(page, url)
    page.get_by_label("...or paste your text").fill(TWO)
    page.get_by_role("button", name="Find citations").click()  # one click, right after pasting
    wait_progressing(slot(page, 1))
    assert page.get_by_text("2 citation slots found").count() == 1
    assert download_bib_titles(page) == [
        "Attention Is All You Need",
        "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods",
    ]
    first = slot(page, 0)
    assert first.get_by_role("button", name="Chosen").count() == 1
    first.get_by_role("button", name="Use this").first.click()  # candidate 2, one click
    first.get_by_text("your pick").wait_for()
    titles = download_bib_titles(page)
    assert len(titles) == 2 and "Attention Is All You Need" not in titles
    picked = next(t for t in titles if not t.startswith("Reciprocal"))
    assert picked in first.inner_text().replace("\u2060", "")


def test_navigation_keeps_text_results_and_picks(app):
    url, page, _ = app
    # continues from the previous test's state: a pick in slot 1
    page.get_by_role("link", name="Settings").click()
    page.get_by_text("LLM selector").wait_for()
    page.get_by_role("link", name="Library").click()
    page.get_by_role("heading", name="Library").wait_for()
    page.get_by_role("link", name="Cite").click()
    wait_progressing(slot(page, 1))
    expect(page.get_by_label("...or paste your text")).to_have_value(TWO)
    expect(slot(page, 0).get_by_text("your pick")).to_have_count(1)
    assert page.get_by_role("button", name="Download .bib (2 papers)").count() == 1
    go(page, url)  # a reload: a new session restores the library's last draft from disk
    wait_progressing(slot(page, 1))
    expect(page.get_by_label("...or paste your text")).to_have_value(TWO)
    expect(slot(page, 0).get_by_text("your pick")).to_have_count(1)


def test_markdown_in_a_file_name_renders_as_text(app):
    url, page, _ = app
    go(page, url)
    page.locator('input[type="file"]').first.set_input_files(
        files=[{"name": "**bold** [x](http://evil.example).txt", "mimeType": "text/plain",
                "buffer": b"Attention is all you need [CITATION]."}])
    caption = page.get_by_text("Text from")
    wait_progressing(caption)
    assert "**bold** [x](http" in caption.inner_text().replace("\u2060", "")
    assert caption.locator("strong strong, a").count() == 0


def test_progress_in_view_mid_fill_and_a_dead_llm_shows_one_banner(app, tmp_path, alone):
    url, page, _ = app
    # a fresh page: the saved draft of earlier tests on this library (their picks) would make the fill ask first
    shutil.rmtree(LIBRARY["path"] / "workspace", ignore_errors=True)
    with scripted_server(tmp_path, [{"sleep": 1.0, **fields("1")}]) as llm:
        go(page, url, "Settings")
        page.get_by_label("Model (LiteLLM form)").fill(f"hosted_vllm/{llm.alias}")
        page.get_by_label("API base URL").fill(llm.base_url)
        page.get_by_role("spinbutton", name="Slots at a time").fill("2")
        page.get_by_role("button", name="Save", exact=True).click()
        page.get_by_text("LLM settings saved").wait_for()
        go(page, url, "Settings")  # a reload: settings come back from the per-user file
        expect(page.get_by_label("API base URL")).to_have_value(llm.base_url)

        go(page, url)
        area = page.get_by_label("...or paste your text")
        area.fill(many(8))
        area.press("Control+Enter")  # apply the text first: a click during the rerun it starts is dropped
        page.wait_for_timeout(400)
        wait_progressing(page.get_by_test_id("stStatusWidgetRunningIcon"), state="hidden")
        page.get_by_role("button", name="Find citations").click()
        box = page.locator(".st-key-fill_progress")
        wait_progressing(box.get_by_text("of 8 slots filled"))
        wait_progressing(box.get_by_text("2 of 8 slots filled"))  # a slot row per finished slot
        assert box.locator("[data-testid='stDataFrame']").count() == 1
        wait_progressing(box.get_by_text("Filled 8 of 8 slots"))
        wait_progressing(slot(page, 7))

    from conftest import free_port

    go(page, url, "Settings")
    page.get_by_label("API base URL").fill(f"http://127.0.0.1:{free_port()}/v1")
    page.get_by_role("spinbutton", name="Slots at a time").fill("4")
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("LLM settings saved").wait_for()
    go(page, url)
    page.get_by_label("...or paste your text").fill(many(30))
    with alone():
        start = time.perf_counter()
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(page.get_by_text(f"30 slots, {PAGE} a page"))  # the results, a page of cards at a time
        elapsed = time.perf_counter() - start
    print(f"\nbrowser: 30 slots against a dead LLM endpoint in {elapsed:.1f} s")
    assert page.get_by_text("so it was not asked again in this fill").count() == 1
    assert elapsed < 15.0


def test_malformed_library_uploads_show_a_message_not_a_traceback(app):
    url, page, root = app
    go(page, url, "Library")
    wait_progressing(page.get_by_role("button", name="Import").first)
    bad = [
        {"name": "surrogate.jsonl", "mimeType": "application/json",
         "buffer": b'{"title": "Lone \\ud800 surrogate", "authors": ["A"]}\n'},
        {"name": "truncated.jsonl.gz", "mimeType": "application/gzip",
         "buffer": gzip.compress(json.dumps({"title": "x" * 500}).encode() * 50)[:200]},
        {"name": "entry_type.jsonl", "mimeType": "application/json",
         "buffer": b'{"title": "Odd entry type", "entry_type": {"a": 1}}\n'},
    ]
    upload(page, bad, "Import 3 files").click()
    wait_progressing(page.get_by_text("Last import").or_(page.get_by_text("Import failed")).first)
    main = page.locator("[data-testid='stMain']")
    assert main.locator("[data-testid='stException']").count() == 0
    assert "Traceback" not in main.inner_text() and str(root) not in main.inner_text()
