"""Take the README screenshots: `python docs/make_screenshots.py` (needs /usr/bin/chromium).

Starts the app on a fresh temporary library (the sample loads on first run), fills the example
draft and saves docs/screenshot-cite.png (the default view: each slot with its candidates one click
away), docs/screenshot-compact.png (the compact table of all slots, with the slot in review above it)
and docs/screenshot-trace.png.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / "tests"))

from app_support import chromium, streamlit_server  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, \
            streamlit_server(Path(tmp) / "library", Path(tmp) / "server.log") as url, \
            chromium(viewport=(1400, 1750)) as page:
        page.goto(url)
        page.get_by_text("Sample library loaded").wait_for(timeout=240_000)
        page.get_by_role("button", name="Try an example").click()
        page.get_by_text("5 citation slots found").wait_for()
        page.get_by_role("button", name="Find citations").click()
        # without an LLM, slots whose retrievers disagree are answered "not found" with candidates
        page.get_by_text(re.compile(r"Filled \d+ of 5 slots")).wait_for(timeout=120_000)
        page.get_by_text("Slot 5", exact=True).wait_for()
        page.wait_for_timeout(1500)
        page.mouse.move(0, 0)
        page.screenshot(path=str(DOCS / "screenshot-cite.png"))

        page.locator("[data-testid='stButtonGroup'] button", has_text="Table").click()
        page.locator("[data-testid='stDataFrame']").last.wait_for()
        page.wait_for_timeout(1500)
        grid = page.locator("[data-testid='stDataFrame']").last.bounding_box()
        page.mouse.click(grid["x"] + 16, grid["y"] + 35 + 3 * 35 + 17)  # the fourth row's selection box
        page.locator("[class*='st-key-slot_']").first.wait_for()
        page.wait_for_timeout(1500)
        page.mouse.move(0, 0)
        page.screenshot(path=str(DOCS / "screenshot-compact.png"))
        page.locator("[data-testid='stButtonGroup'] button", has_text="Cards").click()
        page.get_by_text("Slot 5", exact=True).wait_for()

        page.get_by_text("Trace: how this paper was chosen").first.click()
        page.get_by_role("tab", name="Fused").first.click()
        page.wait_for_timeout(2000)
        card = page.locator("[class*='st-key-slot_']").first
        card.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        card.screenshot(path=str(DOCS / "screenshot-trace.png"))
    print("wrote", *(DOCS / f"screenshot-{n}.png" for n in ("cite", "compact", "trace")))


if __name__ == "__main__":
    main()
