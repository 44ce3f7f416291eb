"""Helpers for the app tests (AppTest and browser): a sample library built once, PDFs, downloads."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from citefinder.config import Settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_BIB = ROOT / "assets" / "sample-library.bib"
SAMPLE_SIZE = 170  # entries in assets/sample-library.bib
TWO_SLOTS = (
    "Sequence transduction no longer needs recurrence, since attention is all you need [CITATION]. "
    "The bench was quiet that morning. "
    "Reciprocal rank fusion merges several rankings and outperforms Condorcet fusion [CITATION]."
)
# Slots a no-LLM run fills: BM25 and dense both rank the cited paper first (the default, calibrated rule).
PDF_LINES = [
    (72, 740, 11, "Pre-training deep bidirectional transformers improved language understanding [CITATION]."),
    (72, 720, 11, "The weather was mild."),
    (72, 700, 11, "Dense passage retrieval for open-domain question answering learns dense representations of "
                  "passages [CITATION]."),
    (72, 680, 11, "Nobody disagreed."),
    (72, 660, 11, "Generative adversarial nets estimate generative models via an adversarial process [CITATION]."),
]


def build_sample_library(folder: Path) -> Path:
    """The sample .bib imported into ``folder`` (once: reused when it already holds the papers)."""
    from citefinder.library.store import Library

    if (folder / "library.json").exists():
        return folder
    library = Library.open(Settings(library=folder))
    report = library.import_files([SAMPLE_BIB])
    assert report.added == SAMPLE_SIZE, report
    return folder


def sample_copy(tmp_path_factory, folder: Path, ignore: tuple[str, ...] = ("workspace",)) -> Path:
    """A writable copy of the (session-built) sample library at ``folder``: a test's own library to change."""
    built = build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns(*ignore))
    return folder


def sample_with_literature(tmp_path_factory, tmp_path: Path, monkeypatch) -> Path:
    """A copy of the sample library (no paired .bib) under ``tmp_path`` with the small literature library of
    tests/data/literature configured beside it, and a cache of the test's own; the copy's folder."""
    from citefinder.ui import workspace
    from tests.test_sources_local import build_literature

    folder = sample_copy(tmp_path_factory, tmp_path / "library", ignore=("workspace", "paired"))
    literature = build_literature(tmp_path / "papers-lit")
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    monkeypatch.setenv("CITEFINDER_LITERATURE", str(literature))
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    workspace.clear_draft(folder)
    return folder


def open_app(folder: Path, monkeypatch, timeout: float = 240):
    """The app over the library ``folder``, with no draft restored from an earlier test."""
    from streamlit.testing.v1 import AppTest

    from citefinder.ui import workspace

    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    workspace.clear_draft(folder)
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)


def plain(markdown: str) -> str:
    """Markdown written by escape_markdown, back to its text."""
    from citefinder.ui.markdown import WORD_JOINER

    return re.sub(r"\\(.)", r"\1", markdown).replace(WORD_JOINER, "")


def button(at, label: str):
    """The page's button labelled ``label``."""
    return next(b for b in at.button if b.label == label)


def fill(at, text: str):
    """The Cite page run on ``text``: pasted, then *Find citations* clicked."""
    from citefinder.ui import state

    at.run()
    at.text_area(key=state.CITE_TEXT).set_value(text).run()
    return button(at, "Find citations").click().run()


def browser_library(tmp_path_factory, name: str) -> tuple[Path, Path]:
    """A test's folder ``name`` and, in it, a copy of the sample library (built once for the browser tests)."""
    root = tmp_path_factory.mktemp(name)
    sample = build_sample_library(tmp_path_factory.getbasetemp() / "browser-sample-library")
    library = root / "library"
    shutil.copytree(sample, library, ignore=shutil.ignore_patterns("workspace"))
    return root, library


def make_pdf(lines: list[tuple[float, float, float, str]]) -> bytes:
    """A one-page PDF with these text lines (tests/data/make_pdfs.py's tiny writer)."""
    spec = importlib.util.spec_from_file_location("make_pdfs", ROOT / "tests" / "data" / "make_pdfs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_pdf(lines)


class DownloadSpy:
    """Records what ``st.download_button`` stores, so AppTest can read a button's file back."""

    def __init__(self, monkeypatch) -> None:
        from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

        self.files: dict[str, bytes] = {}
        original = MemoryMediaFileStorage.load_and_get_id
        spy = self

        def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
            file_id = original(self, path_or_data, mimetype, kind, filename)
            spy.files[file_id] = path_or_data if isinstance(path_or_data, bytes) else Path(path_or_data).read_bytes()
            return file_id

        monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", load_and_get_id)

    def data(self, button) -> bytes:
        """The bytes behind an AppTest download button."""
        file_id = os.path.splitext(button.proto.url.rsplit("/", 1)[-1])[0]
        return self.files[file_id]


# --- browser tests and screenshots ----------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


@contextlib.contextmanager
def streamlit_server(library: Path, log_path: Path, script: str | Path = "app.py", env: dict[str, str] | None = None):
    """``streamlit run <script>`` on a free loopback port; yields the base URL; stopped by its PID.

    The server keeps its per-user settings beside its log unless ``env`` says otherwise.
    """
    from conftest import free_port, stop_process, wait_for_port

    port = free_port()
    env = {**os.environ, "CITEFINDER_USER_SETTINGS": str(log_path.with_name("user-settings.json")),
           "CITEFINDER_LIBRARY": str(library), **(env or {})}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, proc, timeout=90)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop_process(proc)


@contextlib.contextmanager
def chromium(viewport: tuple[int, int] = (1400, 1000), http_credentials: dict[str, str] | None = None):
    """Debian's Chromium driven by Playwright (never `playwright install`); yields a page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True,
                                          http_credentials=http_credentials)
            yield context.new_page()
        finally:
            browser.close()


def paste_draft(page, text: str) -> None:
    """Type the draft into the text area and commit it (Streamlit commits on Ctrl+Enter)."""
    area = page.get_by_label("...or paste your text")
    area.fill(text)
    area.press("Control+Enter")


STILL_MS = 180_000  # how long a page may show no progress at all before a wait gives up
CEILING_MS = 1_800_000  # the most any one wait lasts, progress or not (a run that never ends)
POLL_MS = 2_000


def progress_mark(page) -> tuple[bool, str]:
    """What tells that the page is still working: Streamlit's running icon, and the text of its progress bars,
    spinners, status boxes and uploaders (a fill's "12 of 68 slots", an upload's bar)."""
    running = page.get_by_test_id("stStatusWidgetRunningIcon").is_visible()
    busy = page.locator("[data-testid='stProgress'], [data-testid='stSpinner'], [data-testid='stStatusWidget'], "
                        "[data-testid='stFileUploaderFile'], [data-testid='stExpander'] [data-testid='stProgress']")
    try:
        text = "\n".join(busy.all_inner_texts())
    except Exception:  # noqa: BLE001 - an element replaced while it was read: read again next time
        text = ""
    return running, text


def wait_progressing(target, *, state: str = "visible", still_ms: int = STILL_MS,
                     ceiling_ms: int = CEILING_MS) -> None:
    """Wait for the locator ``target`` to reach ``state`` for as long as its page shows progress: the app's script
    is running or its progress text moves. Fail only when the page has been still for ``still_ms`` (nothing
    running, nothing moving) or after ``ceiling_ms`` — never because a busy machine made the work slow."""
    import time

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = target.page
    start = last = time.monotonic()
    seen = progress_mark(page)
    while True:
        try:
            target.wait_for(state=state, timeout=POLL_MS)
            return
        except PlaywrightTimeout:
            pass
        now = time.monotonic()
        mark = progress_mark(page)
        if mark[0] or mark != seen:
            seen, last = mark, now
        if (now - last) * 1000 > still_ms or (now - start) * 1000 > ceiling_ms:
            said = page.locator("body").inner_text()[-2000:]
            raise AssertionError(f"{target} not {state} after {now - start:.0f} s (the page still for "
                                 f"{now - last:.0f} s); the page said:\n{said}")


def settle(page, timeout_ms: int = CEILING_MS) -> None:
    """Wait until the app's script run is over (Streamlit's running icon gone), so that a click that follows
    is not made on an element a rerun is about to replace. A run in progress is progress: only ``timeout_ms``,
    the ceiling, ends the wait."""
    page.get_by_test_id("stStatusWidgetRunningIcon").wait_for(state="hidden", timeout=max(timeout_ms, CEILING_MS))


def upload(page, files, button_name: str, timeout_ms: int = STILL_MS, tries: int = 2):
    """Give the page's first file input ``files`` on a settled page and return the button named
    ``button_name`` once it shows; when it never does (the files lost in a rerun), give them once more."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    button = page.get_by_role("button", name=button_name)
    for attempt in range(tries):
        settle(page, timeout_ms)
        page.locator('input[type="file"]').first.set_input_files(files)
        try:
            wait_progressing(button, still_ms=timeout_ms)
            return button
        except (PlaywrightTimeout, AssertionError):
            if attempt == tries - 1:
                raise
    return button


def click_until(page, button, done, timeout_ms: int, log: Path | None = None, tries: int = 2) -> None:
    """Click ``button`` on a settled page and wait for ``done``; when it never shows, click once more (a click
    lost in a rerun), then fail with what the page and the server's log said."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        settle(page, timeout_ms)
        button.click()
        try:
            wait_progressing(done, still_ms=timeout_ms)
            return
        except (PlaywrightTimeout, AssertionError):
            continue
    said = page.locator("body").inner_text()[-3000:]
    tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
    raise AssertionError(f"never shown after {tries} clicks; the page said:\n{said}\nthe server log:\n{tail}")
