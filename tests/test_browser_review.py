"""A researcher's whole review in a real browser (`streamlit run app.py`, Debian's Chromium): import their .bib
(drafts-dev chebnet, beside the sample library), fill the real 49-slot draft, pick in five slots (two citing two
papers each; by keyboard and by mouse), edit one sentence, re-run, reload. Every pick is intact except the edited
slot's, which says it changed; the downloaded .bib holds the user's own entries byte for byte (and so does
`citefinder fill draft.txt -o out.bib` from a library imported from that .bib); the filled .tex cites both papers
of each two-paper slot in one ``\\citep{a,b}``; keys n / p / 1-5 / a / u drive the review.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pytest
from playwright.sync_api import Error as PlaywrightError

from app_support import ROOT, browser_library, chromium, streamlit_server, wait_progressing
from citefinder.ui.cite.results import PAGE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHEBNET = ROOT.parent / "shared" / "data" / "drafts-dev" / "chebnet"
START_MS = 240_000
FILL_MS = 240_000


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    root, library = browser_library(tmp_path_factory, "browser-review")
    with streamlit_server(library, root / "server.log") as url, chromium((1280, 900)) as page:
        page.goto(url)
        wait_progressing(page.get_by_role("button", name="Find citations"))
        yield url, page, root


def idle(page) -> None:
    """Wait for the script run a click or key started to end."""
    page.wait_for_timeout(400)
    wait_progressing(page.get_by_test_id("stStatusWidgetRunningIcon"), state="hidden")


def click(page, locator, then=None) -> None:
    """Click once the page is idle; a rerun replacing the element (or briefly showing it twice: a "strict mode
    violation") is retried."""
    for attempt in range(8):
        try:
            idle(page)
            locator.click(timeout=5000)
            idle(page)
            if then is not None:
                then.wait_for(timeout=15_000)
            return
        except PlaywrightError:
            page.wait_for_timeout(500 * (attempt + 1))
    locator.click()


def press(page, key: str, until) -> None:
    """Press ``key`` on the page (not in a field) and wait until ``until()`` is true: the rerun a key starts
    can begin a moment after the key."""
    idle(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page
    page.keyboard.press(key)
    for _ in range(300):
        page.wait_for_timeout(200)
        try:
            if until():
                break
        except PlaywrightError:  # the page was being redrawn
            continue
    else:
        raise AssertionError(f"key {key}: nothing happened")
    idle(page)


def download(page, label: str) -> bytes:
    button = page.get_by_role("button", name=re.compile("^" + re.escape(label)))
    for attempt in range(6):
        try:
            idle(page)
            with page.expect_download(timeout=30_000) as d:
                button.first.click(timeout=5000)
            return Path(d.value.path()).read_bytes()
        except PlaywrightError:
            page.wait_for_timeout(500 * (attempt + 1))
    raise AssertionError(f"could not download {label}")


def choose(page, box, option: str) -> None:
    """Choose an option of the selectbox in ``box`` until it shows it (a rerun can close or replace the box)."""
    for attempt in range(8):
        try:
            idle(page)
            box.get_by_role("combobox").click(timeout=5000)
            page.get_by_role("option", name=option, exact=True).first.click(timeout=5000)
            idle(page)
            if box.locator("input").first.input_value() == option:
                return
        except PlaywrightError:
            page.keyboard.press("Escape")
        page.wait_for_timeout(500 * (attempt + 1))
    raise AssertionError(f"could not choose {option}")


def rows(page) -> dict[int, dict]:
    return {r["slot"]["index"]: r for r in json.loads(download(page, "Download results (JSON)"))}


def cards(page):
    return page.locator("[class*='st-key-slot_']")


def run_id(page) -> str:
    cls = cards(page).first.get_attribute("class") or ""
    return re.search(r"st-key-slot_(\d+)_", cls).group(1)


def in_review(page):
    return cards(page).filter(has_text="· in review").first


def card(page, index: int):
    """The card of slot ``index`` (0-based), drawn or not."""
    return page.locator(f".st-key-slot_{run_id(page)}_{index}")


def results_shown(page, slots: int, timeout: int) -> None:
    """The results of a ``slots``-slot draft are on the page (its cards come a page at a time)."""
    page.get_by_text(f"{slots} slots, {PAGE} a page").wait_for(timeout=timeout)


def show(page, index: int, slots: int = 49) -> None:
    """Draw the page of cards that holds slot ``index`` (choosing it puts its first slot in review); chosen
    again when a rerun replaced the page before its cards came."""
    low = index // PAGE * PAGE
    label = f"Slots {low + 1}–{min(low + PAGE, slots)}"
    for _ in range(4):
        idle(page)  # the cards of a run being replaced are not the ones to read the run's id from
        if card(page, index).count():
            return
        choose(page, page.locator("[class*='st-key-cite_page_']"), label)
        try:
            card(page, index).wait_for(timeout=15_000)
            return
        except PlaywrightError:
            continue
    raise AssertionError(f"slot {index}'s card never shown ({label})")


def slot_index(card) -> int:
    return int(re.search(r"st-key-slot_\d+_(\d+)", card.get_attribute("class") or "").group(1))


def candidate(page, slot: int, n: int, add: bool = False):
    return page.locator(f".st-key-pick_{run_id(page)}_{slot}_{n}{'_add' if add else ''} button:visible")


def in_view(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and -5 <= box["y"] < 900 - 40


def assert_own_entries(bib: bytes, own: bytes) -> int:
    """Every entry of ``bib`` is one of the user's entries, byte for byte; returns how many."""
    blocks = bibtexparser.parse_string(bib.decode("utf-8")).entries
    assert blocks and bibtexparser.parse_string(bib.decode("utf-8")).failed_blocks == []
    for entry in blocks:
        assert entry.raw.encode("utf-8") in own, entry.raw[:200]
    return len(blocks)


def test_a_whole_review_keeps_every_pick_and_exports_the_users_own_entries(app, tmp_path):
    url, page, root = app
    own_bib = (CHEBNET / "refs.bib").read_bytes()
    draft = (CHEBNET / "draft.txt").read_text(encoding="utf-8")

    # 1. import the user's .bib on the Library page
    page.goto(f"{url}/Library")
    uploader = page.locator("[data-testid='stFileUploader']").filter(has_text="BibTeX (.bib)")
    wait_progressing(uploader)
    idle(page)
    uploader.locator('input[type="file"]').set_input_files(str(CHEBNET / "refs.bib"))
    click(page, page.get_by_role("button", name="Import 1 file"), then=page.get_by_text("Last import"))
    sidebar = page.locator("[data-testid='stSidebar']")
    wait_progressing(sidebar.get_by_text("43 papers of yours"))
    assert "sample papers (not suggested)" in sidebar.inner_text()

    # 2. fill the real draft (uploaded as a .tex), in \citep
    page.goto(url)
    wait_progressing(page.get_by_role("button", name="Find citations"))
    page.locator('input[type="file"]').first.set_input_files(
        files=[{"name": "chebnet.tex", "mimeType": "text/x-tex", "buffer": draft.encode("utf-8")}])
    wait_progressing(page.get_by_text("49 citation slots found"))
    click(page, page.get_by_role("button", name="Find citations"))
    results_shown(page, 49, FILL_MS)
    idle(page)
    before = rows(page)
    assert len(before) == 49
    assert not any(p["source"] == "sample-library.bib" for r in before.values() for p in
                   (c["paper"] for c in r["candidates"]))  # the sample is left out once the user's papers exist

    # 3. keyboard: n brings the next slot to check (after the one in review) into view, 1 picks, a then 2 adds
    first = slot_index(in_review(page))  # the first slot to check is in review from the start
    heading = page.get_by_role("heading", name="Find the papers behind every [CITATION]")
    for _ in range(20):  # up at the draft (scrolled there again if a late redraw moved the page): the slot is below
        heading.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        if not in_view(page, in_review(page)):
            break
    assert not in_view(page, in_review(page))  # out of view, up at the draft: n brings it into view
    press(page, "n", lambda: in_view(page, in_review(page)) and slot_index(in_review(page)) != first)
    key_one = slot_index(in_review(page))
    assert key_one > first  # n moves on from the slot in review, the first one too (issue 37: it was a no-op)
    press(page, "1", lambda: in_review(page).get_by_text("your pick").count() == 1)
    press(page, "n", lambda: slot_index(in_review(page)) != key_one)
    key_two = slot_index(in_review(page))
    assert key_two > key_one and in_view(page, in_review(page))
    press(page, "2", lambda: in_review(page).get_by_text("your pick").count() == 1)
    press(page, "a", lambda: in_review(page).get_by_text("Adding:").count() == 1)
    press(page, "3", lambda: in_review(page).get_by_text("(2 of 2)").count() == 1)
    press(page, "p", lambda: slot_index(in_review(page)) != key_two)
    assert slot_index(in_review(page)) < key_two and in_view(page, in_review(page))

    # 4. mouse: a single pick, a two-paper slot, a pick undone with u and made again
    taken = {key_one, key_two}
    free = [i for i, r in before.items() if r["slot"]["sentence"].count("[CITATION]") == 1 and len(r["candidates"]) >= 3
            and all(abs(i - t) > 1 for t in taken) and len(r["user_choices"]) <= 1
            and r["candidates"][2]["paper"]["doc_id"] not in r["user_choices"]]  # candidate 3 is not cited yet
    single, double, other = free[0], free[len(free) // 2], free[-1]
    show(page, single)
    click(page, candidate(page, single, 2))
    show(page, double)
    click(page, candidate(page, double, 1))
    click(page, candidate(page, double, 3, add=True))
    show(page, other)
    click(page, candidate(page, other, 3), then=card(page, other).get_by_text("your pick"))
    press(page, "u", lambda: card(page, other).get_by_text("your pick").count() == 0)
    after_undo = rows(page)
    assert after_undo[other]["user_choices"] == before[other]["user_choices"]  # back to the engine's pick
    click(page, candidate(page, other, 3), then=card(page, other).get_by_text("your pick"))
    picked = rows(page)
    mine = {i: picked[i]["user_choices"] for i in (key_one, key_two, single, double, other)}
    assert [len(mine[i]) for i in (key_one, key_two, single, double, other)] == [1, 2, 1, 2, 1]
    assert mine[double] == [before[double]["candidates"][0]["paper"]["doc_id"],
                            before[double]["candidates"][2]["paper"]["doc_id"]]

    # 5. downloads: the user's own entries byte for byte; \citep{a,b} in the two-paper slots
    assert assert_own_entries(download(page, "Download .bib"), own_bib) >= 5
    choose(page, page.locator(".st-key-cite_command"), "\\citep")
    filled = download(page, "Download draft with \\cite").decode("utf-8")
    keys = {i: r["cite_keys"] for i, r in rows(page).items()}
    for i in (key_two, double):
        assert len(keys[i]) == 2 and f"\\citep{{{','.join(keys[i])}}}" in filled

    # 6. edit the single pick's sentence, find citations again (it asks), reload
    slot = picked[single]["slot"]
    edited = draft[: slot["start"]] + "notably " + draft[slot["start"]:]
    area = page.get_by_label("...or paste your text")
    area.fill(edited)
    area.press("Control+Enter")
    idle(page)
    yes = page.get_by_role("button", name="Yes, find them again")
    click(page, page.get_by_role("button", name="Find citations"))  # it asks in a dialog over the page
    wait_progressing(yes)
    assert "Kept 4 picks (their sentences did not change); 1 slot changed" in page.locator(
        ".st-key-cite_confirm_rerun").inner_text()  # it asks first, saying what it keeps
    click(page, yes)
    wait_progressing(page.get_by_role("dialog"), state="hidden")  # the question (a dialog) is answered
    wait_progressing(page.locator("[data-testid='stMain']").get_by_text(
        "Kept 4 picks (their sentences did not change); 1 slot changed"))
    for reload in (False, True):
        if reload:
            page.goto(url)
            results_shown(page, 49, START_MS)
        show(page, single)
        changed = card(page, single)  # its pick is set aside, shown, not applied
        wait_progressing(changed.get_by_text("This sentence changed since you picked."))
        idle(page)  # the results download of the finished run, not of one still rendering
        again = rows(page)
        for i in (key_one, key_two, double, other):
            assert again[i]["user_choices"] == mine[i], i
        assert not again[single]["user_picked"], (reload, {k: v for k, v in again[single].items() if "user" in k})
        assert all(again[i]["user_picked"] for i in mine if i != single), reload

    # 7. the CLI from a library imported from that .bib writes the same entries, byte for byte
    env = {**os.environ, "CITEFINDER_LIBRARY": str(tmp_path / "cli-lib")}
    (tmp_path / "draft.txt").write_text(draft, encoding="utf-8")
    for args in (["library", "import", str(CHEBNET / "refs.bib")],
                 ["fill", str(tmp_path / "draft.txt"), "-o", str(tmp_path / "out.bib")]):
        done = subprocess.run([sys.executable, "-m", "citefinder.cli.main", *args], capture_output=True, text=True,
                              env=env, timeout=900, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
    assert assert_own_entries((tmp_path / "out.bib").read_bytes(), own_bib) >= 5
