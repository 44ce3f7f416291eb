"""Time to review a real paper on the Cite page, in a scripted browser: drafts-dev chebnet (49 slots, its own
43-entry .bib imported beside the sample library, as a new user has it), filled, then for every slot whose gold
paper is among the five candidates shown, the clicks that make the slot cite its gold answer, each timed from
the click until the page shows it. Run it on two checkouts to compare them:

    python bench/review_time.py --code /work/wt-layout --out bench/out/review-before.json   # before
    python bench/review_time.py --code . --out bench/out/review-after.json                   # after

The library is imported by the checkout's own code (so each version keeps what its importer keeps) into
``--work/<name>``; the app is that checkout's ``app.py`` (``streamlit run``) driven by Debian's Chromium.
A slot is reached when it cites a gold paper (any key); a checkout that lets a slot cite several papers is
also asked for every gold paper in the five (``Add``), and the end state is scored both ways.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CHEBNET = DATA / "drafts-dev" / "chebnet"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def _env(code: Path, library: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code), "CITEFINDER_LIBRARY": str(library), "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "CITEFINDER_USER_SETTINGS": str(library.parent / "settings.json")}


def build_library(code: Path, library: Path) -> None:
    """The sample library, then the user's .bib, imported by ``code``'s own importer."""
    if (library / "library.json").exists():
        return
    script = ("from pathlib import Path; from citefinder.config import Settings; "
              "from citefinder.library.store import Library; "
              f"lib = Library.open(Settings(library=Path({str(library)!r}))); "
              f"print(lib.import_files([Path({str(code / 'assets' / 'sample-library.bib')!r})]).added, "
              f"lib.import_files([Path({str(CHEBNET / 'refs.bib')!r})]).added)")
    subprocess.run([sys.executable, "-c", script], env=_env(code, library), check=True, cwd=code)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def app_page(code: Path, library: Path, env: dict[str, str] | None = None) -> Iterator[tuple[Any, subprocess.Popen]]:
    """``code``'s app served on a free loopback port (its log beside the library) and a Chromium page on its
    Cite page, ready; yields (page, server); both are stopped afterwards."""
    from playwright.sync_api import sync_playwright

    port = _port()
    with (library.parent / "server.log").open("wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                   "--server.address", "127.0.0.1", "--server.headless", "true"],
                                  cwd=code, env=env or _env(code, library), stdout=log, stderr=subprocess.STDOUT)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True).new_page()
                for _ in range(120):
                    try:
                        page.goto(f"http://127.0.0.1:{port}")
                        break
                    except Exception:  # noqa: BLE001 - the server is still starting
                        time.sleep(1)
                page.get_by_role("button", name="Find citations").wait_for(timeout=240_000)
                yield page, server
                browser.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def idle(page, timeout_ms: int = 240_000) -> None:
    page.wait_for_timeout(300)
    page.get_by_test_id("stStatusWidgetRunningIcon").wait_for(state="hidden", timeout=timeout_ms)


def wait_until(page, check, timeout_s: float = 120.0) -> None:
    from playwright.sync_api import Error as PlaywrightError

    end = time.perf_counter() + timeout_s
    while time.perf_counter() < end:
        try:
            if check():
                return
        except PlaywrightError:
            pass
        page.wait_for_timeout(50)
    raise TimeoutError("the page did not show the change")


def show_slot(page, run: str, index: int) -> None:
    """Draw the page of cards holding slot ``index`` when the page draws its cards a page at a time (the choice
    of page made again when a rerun closed its list)."""
    from playwright.sync_api import Error as PlaywrightError

    card = page.locator(f".st-key-slot_{run}_{index}")
    for attempt in range(6):
        idle(page)
        if card.count():
            return
        try:
            page.locator("[class*='st-key-cite_page_']").get_by_role("combobox").click(timeout=5000)
            page.get_by_role("option").first.wait_for(timeout=5000)
            for option in page.get_by_role("option").all():
                low, high = (int(n) for n in re.findall(r"\d+", option.inner_text())[:2])
                if low <= index + 1 <= high:
                    option.click(timeout=5000)
                    break
            idle(page)
            card.wait_for(timeout=15_000)
            return
        except PlaywrightError:
            page.keyboard.press("Escape")
            page.wait_for_timeout(500 * (attempt + 1))
    page.screenshot(path=str(ROOT / "bench" / "out" / "review-show-slot.png"))
    raise TimeoutError(f"slot {index}'s card never shown")


def results(page) -> dict[int, dict]:
    button = page.get_by_role("button", name=re.compile("^Download results"))
    idle(page)
    with page.expect_download() as d:
        button.first.click()
    return {r["slot"]["index"]: r for r in json.loads(Path(d.value.path()).read_text())}


def cited(row: dict) -> list[str]:
    """The keys a slot cites in a results row (either version's JSON)."""
    keys = row.get("cite_keys")
    if keys is None:
        keys = [row["cite_key"]] if row.get("cite_key") else []
    return [k for part in keys for k in part.split(",")]


def review(code: Path, library: Path) -> dict:
    gold = [json.loads(line)["keys"] for line in (CHEBNET / "gold.jsonl").read_text().splitlines() if line.strip()]
    draft = (CHEBNET / "draft.txt").read_bytes()
    out: dict = {"code": str(code), "load_start": os.getloadavg()}
    with app_page(code, library) as (page, _):
        page.locator('input[type="file"]').first.set_input_files(
            files=[{"name": "chebnet.tex", "mimeType": "text/x-tex", "buffer": draft}])
        page.get_by_text("49 citation slots found").wait_for(timeout=60_000)
        idle(page)
        start = time.perf_counter()
        page.get_by_role("button", name="Find citations").click()
        # every card (a checkout before the Cite page's pages of cards), or the choice of page
        page.locator("[class*='st-key-slot_']").nth(48).or_(page.get_by_text("49 slots, ")).first.wait_for(
            timeout=600_000)
        idle(page)
        out["fill_s"] = round(time.perf_counter() - start, 2)
        rows = results(page)
        cards = page.locator("[class*='st-key-slot_']")
        run = re.search(r"st-key-slot_(\d+)_", cards.first.get_attribute("class") or "").group(1)
        several = page.locator("[class*='st-key-pick_'][class*='_add']").count() > 0
        slots, clicks, seconds, per_click = [], 0, 0.0, []
        for i, keys in enumerate(gold):
            top = [c["paper"].get("key") for c in rows[i]["candidates"][:5]]
            wanted = [n for n, k in enumerate(top, 1) if k in keys]
            if not wanted:
                continue
            have = cited(rows[i])
            target = [top[n - 1] for n in wanted] if several else [top[wanted[0] - 1]]
            if several:  # every gold paper of the five, as one \cite{a,b}
                done = set(target) <= set(have)
                missing = [n for n in wanted if top[n - 1] not in have]
                wrong = [k for k in have if k not in target]
                actions = ([(wanted[0], False)] + [(n, True) for n in wanted[1:]] if wrong
                           else [(n, True) for n in missing])
            else:  # one paper per slot: a gold one
                done = bool(set(have) & set(keys))
                actions = [] if done else [(wanted[0], False)]
            slot_s = 0.0
            if actions:
                show_slot(page, run, i)
            for number, add in actions:
                button = page.locator(f".st-key-pick_{run}_{i}_{number}{'_add' if add else ''} button:visible")
                idle(page)
                button.scroll_into_view_if_needed()
                t0 = time.perf_counter()
                button.click()
                chosen = page.locator(f".st-key-pick_{run}_{i}_{number} button:visible")
                if add:  # its Add button goes when it is cited
                    wait_until(page, lambda b=button: b.count() == 0)
                else:
                    wait_until(page, lambda b=chosen: "Chosen" in b.inner_text())
                idle(page)
                spent = time.perf_counter() - t0
                per_click.append(round(spent, 2))
                slot_s += spent
                clicks += 1
            slots.append({"slot": i, "gold_in_top5": wanted, "engine_right": done,
                          "clicks": len(actions), "seconds": round(slot_s, 2)})
            seconds += slot_s
        end = results(page)
        answerable = [i for i, keys in enumerate(gold) if keys]
        out.update({
            "several_papers_per_slot": several,
            "slots_with_gold_in_top5": len(slots), "already_right": sum(s["engine_right"] for s in slots),
            "clicks": clicks, "seconds": round(seconds, 2), "per_click_s": per_click,
            "end_any_key": sum(1 for i in answerable if set(cited(end[i])) & set(gold[i])),
            "end_exact_set": sum(1 for i in answerable if set(cited(end[i])) == set(gold[i])),
            "slots": slots, "load_end": os.getloadavg(),
        })
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app is measured")
    p.add_argument("--work", type=Path, default=ROOT / "bench" / "out" / "review")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    code = args.code.resolve()
    name = re.sub(r"[^A-Za-z0-9_-]", "_", code.name)
    folder = args.work / name
    shutil.rmtree(folder / "library" / "workspace", ignore_errors=True)  # no draft from an earlier run
    folder.mkdir(parents=True, exist_ok=True)
    build_library(code, folder / "library")
    out = review(code, folder / "library")
    print(json.dumps({k: v for k, v in out.items() if k != "slots"}, indent=1))
    write_json(args.out, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
