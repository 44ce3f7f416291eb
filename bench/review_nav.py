"""How long `n` / `p` take on a long draft (issue 29: a 300-slot page, target <= 0.5 s a key), in a scripted browser.

The draft is the first 300 slots of drafts-dev's *training* papers (their draft.txt, in bench/drafts_split.json's
order), on the sample library plus chebnet's .bib (as bench/review_time.py builds it); the fill uses the
lexical agents only (``CITEFINDER_AGENTS``, default bm25,title) so that filling 300 slots takes a minute: the
page drawn afterwards is the same shape whatever the agents. Then `n` is pressed ``--presses`` times and `p`
as often; each key is timed from the key press until the slot it moves to is on screen and the app's script
run is over (Streamlit's running icon gone).

    python bench/review_nav.py --out bench/out/review-nav.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import write_json
from review_time import DATA, ROOT, _env, app_page, build_library, idle

SPLIT = ROOT / "bench" / "drafts_split.json"
MARK = re.compile(r"\[CITATION\]")


def long_draft(slots: int) -> str:
    """Whole paragraphs of the training papers' drafts until ``slots`` markers (cut at a paragraph)."""
    parts, count = [], 0
    for name in json.loads(SPLIT.read_text())["train"]:
        for para in (DATA / "drafts-dev" / name / "draft.txt").read_text(encoding="utf-8").split("\n\n"):
            n = len(MARK.findall(para))
            if n and count + n <= slots:
                parts.append(para.strip())
                count += n
            if count >= slots:
                return "\n\n".join(parts)
    return "\n\n".join(parts)


def press(page, key: str, run: str, timeout_s: float = 60.0) -> tuple[float, int | None]:
    """Press ``key``; seconds until a slot other than the one on screen before is the one in view and the run is
    over, and which slot that is."""
    before = focused_slot(page, run)
    t0 = time.perf_counter()
    page.keyboard.press(key)
    end = t0 + timeout_s
    icon = page.get_by_test_id("stStatusWidgetRunningIcon")
    marked = None  # when the card of another slot first said "in review" (drawn, before it is scrolled to)
    while time.perf_counter() < end:
        if marked is None and page.evaluate(MARKED_JS, [run, before if before is not None else -1]):
            marked = time.perf_counter() - t0
            PHASES.append(round(marked, 3))
        now = focused_slot(page, run)
        if now is not None and now != before and icon.count() == 0:
            return time.perf_counter() - t0, now
        page.wait_for_timeout(20)
    page.screenshot(path="/tmp/review-nav-timeout.png")
    raise TimeoutError(f"key {key}: the slot in view did not change within {timeout_s} s (before: {before}, "
                       f"now: {focused_slot(page, run)}, running: {icon.count()})")


FOCUSED_JS = """(run) => {
    const prefix = "st-key-slot_" + run + "_";
    for (const el of document.querySelectorAll("[class*='" + prefix + "']")) {
        const cls = Array.from(el.classList).find(c => c.startsWith(prefix));
        const index = cls ? cls.slice(prefix.length) : "";
        if (!/^[0-9]+$/.test(index) || !el.textContent.includes("in review")) continue;
        const top = el.getBoundingClientRect().top;
        return (top >= -5 && top < window.innerHeight) ? parseInt(index) : null;
    }
    return null;
}"""


MARKED_JS = """([run, before]) => {
    const prefix = "st-key-slot_" + run + "_";
    for (const el of document.querySelectorAll("[class*='" + prefix + "']")) {
        const cls = Array.from(el.classList).find(c => c.startsWith(prefix));
        const index = cls ? cls.slice(prefix.length) : "";
        if (/^[0-9]+$/.test(index) && parseInt(index) !== before && el.textContent.includes("in review")) return true;
    }
    return false;
}"""
PHASES: list[float] = []  # seconds from each key until the page drew the new slot in review (scrolled or not)


def focused_slot(page, run: str) -> int | None:
    """The slot in review ("· in review" on its card), when its card is on screen; else None (one script)."""
    return page.evaluate(FOCUSED_JS, run)


def measure(code: Path, library: Path, slots: int, presses: int, agents: str) -> dict:
    draft = long_draft(slots)
    count = len(MARK.findall(draft))
    env = {**_env(code, library), "CITEFINDER_AGENTS": agents}
    out: dict = {"code": str(code), "slots": count, "agents": agents, "load_start": os.getloadavg()}
    with app_page(code, library, env) as (page, server):
        page.locator('input[type="file"]').first.set_input_files(
            files=[{"name": "long.txt", "mimeType": "text/plain", "buffer": draft.encode()}])
        page.get_by_text(f"{count} citation slots found").wait_for(timeout=60_000)
        idle(page)
        start = time.perf_counter()
        page.get_by_role("button", name="Find citations").click()
        page.get_by_text(re.compile(r"^Filled \d+ of \d+ slots")).first.wait_for(timeout=1_200_000)
        idle(page)
        out["fill_s"] = round(time.perf_counter() - start, 1)
        print(f"filled {count} slots in {out['fill_s']} s", file=sys.stderr)
        first = page.locator("[class*='st-key-slot_']").first
        run = re.search(r"st-key-slot_(\d+)_", first.get_attribute("class") or "").group(1)
        page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page
        spy = None
        if os.environ.get("REVIEW_NAV_PYSPY"):  # a profile of the server while the keys are pressed
            spy = subprocess.Popen([os.environ["REVIEW_NAV_PYSPY"], "record", "-p", str(server.pid), "-f",
                                    "speedscope", "-o", str(library.parent / "nav-profile.json"), "-r", "50"])
            time.sleep(2)
        timings: dict[str, list[float]] = {"n": [], "p": []}
        path: list[int | None] = []
        for key in ["n"] * presses + ["p"] * presses:
            seconds, where = press(page, key, run)
            timings[key].append(round(seconds, 3))
            path.append(where)
        if spy is not None:
            spy.send_signal(2)
            spy.wait(timeout=60)
        for key, values in timings.items():
            out[f"{key}_s"] = values
            out[f"{key}_p50_s"] = round(statistics.median(values), 3)
            out[f"{key}_max_s"] = round(max(values), 3)
        out["slots_visited"] = path
        out["drawn_s"] = list(PHASES)
        out["drawn_p50_s"] = round(statistics.median(PHASES), 3) if PHASES else None
        out["load_end"] = os.getloadavg()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app is measured")
    p.add_argument("--work", type=Path, default=ROOT / "bench" / "out" / "review")
    p.add_argument("--slots", type=int, default=300)
    p.add_argument("--presses", type=int, default=10)
    p.add_argument("--agents", default="bm25,title")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    code = args.code.resolve()
    folder = args.work / re.sub(r"[^A-Za-z0-9_-]", "_", code.name)
    shutil.rmtree(folder / "library" / "workspace", ignore_errors=True)  # no draft from an earlier run
    folder.mkdir(parents=True, exist_ok=True)
    build_library(code, folder / "library")
    out = measure(code, folder / "library", args.slots, args.presses, args.agents)
    print(json.dumps({k: v for k, v in out.items() if not k.endswith("_s") or k.endswith("p50_s")
                      or k.endswith("max_s") or k == "fill_s"}, indent=1))
    write_json(args.out, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
