"""The probes' shared helper (it backs no bench/RESULTS.md section itself).

What the drafts probes share: a drafts_eval output's slots grouped by draft, and each draft's library.

A probe reads a ``bench/drafts_eval.py`` output (its ``outcomes`` keep every agent's ranked list), walks
the drafts one at a time with :func:`drafts`, and opens the library drafts_eval built for that draft
(``bench/out/drafts-libs/<name>-refs-enriched``) to read its papers or vectors or to fill the draft again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library
    from citefinder.types import SlotResult

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared/data/drafts-dev"
LIBS = ROOT / "bench/out/drafts-libs"


@dataclass
class Draft:
    """One draft of a drafts_eval output: its name, its slots' outcomes (text order) and its library."""

    name: str
    outcomes: list[dict]
    settings: Settings
    library: Library

    @property
    def text(self) -> str:
        return (DATA / self.name / "draft.txt").read_text(encoding="utf-8")

    def fill(self) -> list[SlotResult]:
        """Fill the draft again with the probe's settings (the slots' queries, in the outcomes' order)."""
        from citefinder.pipeline.pipeline import Pipeline

        results = Pipeline(self.settings, self.library).cite_text(self.text)
        assert len(results) == len(self.outcomes), self.name
        return results


def by_draft(outcomes: list[dict]) -> dict[str, list[dict]]:
    """Outcomes grouped by draft (an outcome's id is ``<draft>:<slot>``), in their order."""
    groups: dict[str, list[dict]] = {}
    for o in outcomes:
        groups.setdefault(o["id"].rsplit(":", 1)[0], []).append(o)
    return groups


def drafts(result: dict, agents: tuple[str, ...] = ("bm25",), only: set[str] | None = None) -> Iterator[Draft]:
    """Each draft of a drafts_eval output (those named in ``only``) with its library opened (``agents``:
    what :meth:`Draft.fill` runs)."""
    from citefinder.config import Settings, offline_environment
    from citefinder.library.store import Library

    offline_environment()
    for name, outs in by_draft(result["outcomes"]).items():
        if only is not None and name not in only:
            continue
        settings = Settings().with_overrides(library=LIBS / f"{name}-refs-enriched", agents=agents)
        yield Draft(name, outs, settings, Library.open(settings))
