"""A fill that runs on a worker thread, so it goes on while the user visits other pages.

The Cite page starts a :class:`FillJob` and polls :meth:`FillJob.snapshot` to draw live progress;
a page switch stops the page's script, not the fill. Finished slots are kept as they come; at the
end the draft and its results are saved for the library (:mod:`citefinder.ui.workspace`). No
streamlit here: the worker never touches ``st.session_state``.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.errors import CitefinderError
from citefinder.text.slots import find_slots
from citefinder.types import Paper, Slot, SlotResult
from citefinder.ui.picks import Carry, Picks, SetAside, carry_over, draft_name
from citefinder.ui.workspace import Draft, save_draft
from citefinder.workflow import fill as workflow_fill
from citefinder.workflow.fill import FillRequest

if TYPE_CHECKING:
    from citefinder.pipeline.pipeline import Pipeline

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kept:
    """What the user had before this fill, moved onto its slots when it ends (:func:`carry_over`): picks of
    unchanged sentences stay, picks of edited ones are set aside beside their slot."""

    slots: tuple[Slot, ...] = ()
    picks: Picks = field(default_factory=dict)
    aside: dict[int, SetAside] = field(default_factory=dict)
    extra: dict[str, Paper] = field(default_factory=dict)  # the picked papers (to show and export them)
    history: tuple[Picks, ...] = ()
    paired: dict[str, Any] | None = None


class FillCancelled(Exception):
    """Raised in the progress callback to stop a fill the user abandoned ("start over")."""


@dataclass(frozen=True)
class Snapshot:
    done: int
    total: int
    results: tuple[SlotResult, ...]  # finished slots, in slot order
    finished: bool
    error: str | None
    elapsed_s: float


class FillJob:
    """The workflow's :func:`~citefinder.workflow.fill.run_slots` over ``text`` on a daemon thread; thread-safe
    snapshots of its progress."""

    def __init__(self, pipeline: "Pipeline", text: str, *, source_name: str | None = None,
                 library_folder: str | Path | None = None, total: int = 0, kept: Kept | None = None,
                 draft_id: str = "") -> None:
        self.pipeline = pipeline
        self.draft_id = draft_id  # the draft the results belong to (saved as its file, shown on its page only)
        self.text = text
        self.source_name = source_name
        self.library_folder = library_folder
        self.kept = kept or Kept()
        # the user's picks moved onto this text's slots (computed at once: the slots need no search)
        new_slots = find_slots(text, pipeline.settings.context_sentences)
        self.carry: Carry = carry_over(self.kept.slots, self.kept.picks, new_slots, self.kept.aside)
        self._lock = threading.Lock()
        self._results: dict[int, SlotResult] = {}
        self._total = total
        self._finished = False
        self._error: str | None = None
        self._cancelled = False
        self._start = time.perf_counter()
        self._end: float | None = None
        self._thread = threading.Thread(target=self._run, name="cite-fill", daemon=True)

    def start(self) -> "FillJob":
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop after the slots in flight; nothing is saved."""
        with self._lock:
            self._cancelled = True

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def snapshot(self) -> Snapshot:
        with self._lock:
            results = tuple(self._results[i] for i in sorted(self._results))
            end = self._end if self._end is not None else time.perf_counter()
            return Snapshot(len(results), self._total, results, self._finished, self._error, end - self._start)

    def _progress(self, done: int, total: int, result: SlotResult | None) -> None:
        with self._lock:
            self._total = total
            if result is not None and result.slot is not None:
                self._results[result.slot.index] = result
            if self._cancelled:
                raise FillCancelled()

    def _run(self) -> None:
        try:
            workflow_fill.fill_slots(self.pipeline, FillRequest(self.text), self._progress,
                                     name=draft_name(self.source_name, self.text))  # the cites it has learned too
        except FillCancelled:
            log.info("fill cancelled by the user")
        except CitefinderError as e:
            with self._lock:
                self._error = str(e)
        except Exception as e:  # noqa: BLE001 - shown as one line on the page; the traceback goes to the log
            log.exception("fill failed")
            with self._lock:
                self._error = f"Filling stopped on an unexpected error ({type(e).__name__}); details are in the log."
        finally:
            with self._lock:
                self._finished = True
                self._end = time.perf_counter()
                cancelled = self._cancelled
            if not cancelled and self.library_folder is not None:
                self._save(self.library_folder)

    def _save(self, library_folder: str | Path) -> None:
        snap = self.snapshot()
        if not snap.results:
            return
        k, c = self.kept, self.carry
        draft = Draft(self.text, self.source_name, snap.results, choices=c.picks, extra_papers=dict(k.extra),
                      elapsed_s=snap.elapsed_s, changed=c.changed, history=k.history, paired=k.paired,
                      draft_id=self.draft_id)
        try:
            save_draft(library_folder, draft)
        except OSError as e:
            log.warning("could not save the draft for %s: %s", self.library_folder, e)
