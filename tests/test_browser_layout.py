"""The page frame in a real browser at 800 px wide (beside an editor): `streamlit run app.py` driven by Chromium.

One app server (started fresh, so the first load is a cold one) and one browser for the module, on a
copy of the sample library. Each test is one of the smaller problems a researcher met: the sidebar
called the Cite page "app", labels were cut at 820 px, the first load showed seconds of blank page,
the browser asked fonts.gstatic.com for a favicon, and an import did not say what its duplicates
matched nor let a PDF's wrongly read title be fixed.
"""

from __future__ import annotations

import shutil
from urllib.parse import urlparse

import pytest

from app_support import build_sample_library, chromium, make_pdf, streamlit_server, upload, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FILL_MS = 120_000
WIDTH, HEIGHT = 800, 900
TITLE = "Find the papers behind every [CITATION]"
TWO = (
    "Sequence transduction no longer needs recurrence, since attention is all you need [CITATION]. "
    "The bench was quiet that morning. "
    "Reciprocal rank fusion merges several rankings and outperforms Condorcet fusion [CITATION]."
)
# Runs in the page before Streamlit: when (ms after navigation start) the title first appeared, and
# whether "Opening the library…" was on the page together with it.
PAINT_OBSERVER = """
(() => {
  const paint = window.__paint = {title: null, opening: false, both: false};
  const look = () => {
    const text = document.body ? document.body.textContent : "";
    const title = text.includes(%r), opening = text.includes("Opening the library");
    if (title && paint.title === null) paint.title = performance.now();
    paint.opening = paint.opening || opening;
    paint.both = paint.both || (title && opening);
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true});
})();
""" % TITLE


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-layout")
    sample = build_sample_library(tmp_path_factory.getbasetemp() / "browser-sample-library")
    library = root / "library"
    shutil.copytree(sample, library, ignore=shutil.ignore_patterns("workspace"))  # no draft from other tests
    # fills at the old default threshold: what these tests read is the page, not the threshold
    threshold = {"CITEFINDER_CONFIDENCE_THRESHOLD": "0.55"}
    with streamlit_server(library, root / "server.log", env=threshold) as url, chromium((WIDTH, HEIGHT)) as page:
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.add_init_script(PAINT_OBSERVER)
        page.goto(url)  # the server's first page: imports, the embedder and the store are loaded now
        wait_progressing(page.get_by_role("button", name="Find citations"))
        cold = page.evaluate("window.__paint")
        yield url, page, cold, requests, library


def go(page, url: str, path: str = "") -> None:
    page.goto(f"{url}/{path}")
    page.locator("[data-testid='stAppViewContainer']").wait_for()


def test_the_sidebar_names_the_cite_page(app):
    url, page, _, _, _ = app
    go(page, url)
    links = page.locator("[data-testid='stSidebarNav'] a")
    links.first.wait_for()
    names = [t.split("\n")[-1].strip() for t in links.all_inner_texts()]  # the icon's ligature comes first
    assert names == ["Cite", "Check", "Library", "Settings", "Search", "Evaluate"]
    page.get_by_role("link", name="Library").click()
    wait_progressing(page.get_by_role("heading", name="Library"))
    assert urlparse(page.url).path == "/Library"
    page.get_by_role("link", name="Cite").click()
    page.get_by_role("heading", name=TITLE).wait_for()


def test_first_paint_is_fast_with_the_library_opening_behind_a_visible_status(app):
    url, page, cold, _, _ = app
    print(f"\nbrowser: cold first paint {cold['title']:.0f} ms after navigation start")
    # The cold load drew the title while the library was still opening, and said so.
    assert cold["title"] is not None and cold["both"], cold
    warm = []
    for _ in range(3):  # a warm server: the best of three loads (the machine is shared; one slow load is noise)
        go(page, url)
        wait_progressing(page.get_by_role("button", name="Find citations"))
        warm.append(page.evaluate("window.__paint.title"))
    print(f"browser: warm first paint {', '.join(f'{t:.0f}' for t in warm)} ms")
    assert min(warm) < 2000, warm


def _inside(page, locator) -> None:
    box = locator.bounding_box()
    assert box is not None, locator
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH + 0.5, (locator, box)
    cut = locator.evaluate("el => [...el.querySelectorAll('p, div')].some(e => e.scrollWidth > e.clientWidth + 1)")
    assert not cut, f"label cut: {locator.inner_text()!r}"


def test_the_cite_page_is_usable_at_800_px(app):
    url, page, _, _, _ = app
    go(page, url)
    area = page.get_by_label("...or paste your text")
    wait_progressing(area)
    area.fill(TWO)
    page.get_by_role("button", name="Find citations").click()
    first = page.locator("[class*='st-key-slot_']").first
    wait_progressing(page.locator("[class*='st-key-slot_']").nth(1))
    for name in ("Find citations", "Try an example", "Start over", "Download .bib (2 papers)",
                 "Download draft with \\cite (2 of 2 filled)", "Download results (JSON)", "Next to check"):
        _inside(page, page.get_by_role("button", name=name))
    first.get_by_role("button", name="Chosen").scroll_into_view_if_needed()
    _inside(page, first.get_by_role("button", name="Chosen"))
    for button in first.get_by_role("button", name="Use this").all():
        _inside(page, button)
    _inside(page, first.get_by_role("button", name="Accept, next"))
    for option in ("Cards", "Table", "All", "Not found", "Unsure"):
        _inside(page, page.locator("[data-testid='stButtonGroup'] button", has_text=option))
    main = page.locator("[data-testid='stMainBlockContainer']")
    assert main.evaluate("el => el.scrollWidth <= el.clientWidth + 1")  # nothing sticks out sideways


def pick(page, select, option: str, then, opener=None) -> None:
    """Choose an option of a Streamlit selectbox by clicking it, until ``then`` shows.

    A rerun still drawing the page can replace the box, close its list as it opens, collapse the
    expander around it (``opener`` opens that again) or show the old and the new copy of it for a
    moment (a "strict mode violation"): each try waits for the run to end, every step has a short
    timeout and the whole choice is tried again."""
    from playwright.sync_api import Error as PlaywrightError

    for attempt in range(8):
        try:
            page.get_by_test_id("stStatusWidgetRunningIcon").wait_for(state="hidden", timeout=FILL_MS)
            if opener is not None and not select.is_visible():
                opener.click(timeout=5000)
            select.click(timeout=5000)
            page.get_by_role("option", name=option).first.click(timeout=5000)
            then.wait_for(timeout=5000)
            return
        except PlaywrightError:  # a timeout, or two copies of the box during a rerun
            page.keyboard.press("Escape")
            page.wait_for_timeout(500 * (attempt + 1))
    then.wait_for()


def test_library_summary_lists_duplicates_and_a_pdf_title_and_an_entry_can_be_edited(app):
    url, page, _, _, library = app
    go(page, url, "Library")
    wait_progressing(page.get_by_role("button", name="Import").first)
    bib = (b"@article{dup, title={Attention is all you need}, author={Vaswani, Ashish}, year={2017}}\n"
           b"@article{new, title={Rank Fusion for Hedgerow Surveys}, author={Doe, Jane}, year={2023}}\n")
    pdf = make_pdf([(72, 740, 16, "1 Introduction"),
                    (72, 700, 11, "Hedgehogs dig tunnels under frozen meadows in winter and sleep there.")])
    upload(page, [{"name": "refs.bib", "mimeType": "application/x-bibtex", "buffer": bib},
                  {"name": "paper.pdf", "mimeType": "application/pdf", "buffer": pdf}], "Import 2 files").click()
    summary = page.locator("[data-testid='stAlert']", has_text="Last import")
    wait_progressing(summary)
    assert "2 added, 1 updated (dup), 0 duplicates skipped, 0 failed" in summary.inner_text(), summary.inner_text()
    # the record that updated a paper is said as updated, not listed under "Duplicates skipped" (issue 37: the
    # list and the count agree; it listed it under a count of 0)
    assert page.locator("[data-testid='stExpander']", has_text="Duplicates skipped").count() == 0

    # the PDF's title was read wrong: fix it from the summary
    pdf_entry = page.locator("[data-testid='stExpander']", has_text="(paper.pdf)")
    pdf_entry.get_by_text("(paper.pdf)").click()
    title = pdf_entry.get_by_label("Title")
    title.fill("Hedgehog Tunnelling Under Frozen Meadows")
    pdf_entry.get_by_label("Authors (one per line)").fill("Ann Example\nBo Sample")
    pdf_entry.get_by_role("button", name="Save").click()
    wait_progressing(page.get_by_text("Saved “Hedgehog Tunnelling Under Frozen Meadows”:").first)
    page.locator("[data-testid='stExpander']", has_text="Hedgehog Tunnelling Under Frozen Meadows · Ann Example, "
                 "Bo Sample · no year (paper.pdf)").wait_for()

    # search finds it under its new title; open it and edit its year and key
    page.get_by_label("Search titles, authors and abstracts").fill("hedgehog tunnelling meadows")
    page.get_by_label("Search titles, authors and abstracts").press("Enter")
    page.get_by_text("best BM25 matches").wait_for()
    editor = page.locator("[data-testid='stExpander']", has_text="Open and edit a paper")
    opener = editor.get_by_text("Open and edit a paper")
    pick(page, editor.get_by_role("combobox"), "Hedgehog Tunnelling Under Frozen Meadows", editor.get_by_label("Year"),
         opener)
    editor.get_by_label("Year").fill("2024")
    editor.get_by_role("textbox", name="Citation key").fill("example2024hedgehog")
    editor.get_by_role("button", name="Save").click()
    wait_progressing(page.get_by_text("Saved “Hedgehog Tunnelling Under Frozen Meadows”:").first)
    # the import summary shows the paper as now stored
    page.locator("[data-testid='stExpander']", has_text="Hedgehog Tunnelling Under Frozen Meadows · Ann Example, "
                 "Bo Sample · 2024 (paper.pdf)").wait_for()
    # what the page saved is what the library holds (read by a second reader, in the test process)
    from citefinder.config import Settings
    from citefinder.library.store import Library

    stored = Library.open(Settings(library=library))
    edited = stored.get([stored.bm25_search("hedgehog tunnelling meadows", 1)[0].doc_id])[0]
    assert (edited.title, edited.authors, edited.year, edited.key) == (
        "Hedgehog Tunnelling Under Frozen Meadows", ("Ann Example", "Bo Sample"), 2024, "example2024hedgehog")


def test_the_browser_asks_nothing_but_this_machine(app):
    _, _, _, requests, _ = app  # every request of the tests above: loads, a fill, an import, edits
    hosts = {urlparse(u).hostname for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")}
    assert hosts == {"127.0.0.1"}, sorted(hosts)
    assert any(u.endswith(".woff2") for u in requests)  # fonts came from the app itself
    assert not any("gstatic" in u or "googleapis" in u for u in requests)
