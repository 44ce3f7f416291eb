"""The probes' shared helper (it backs no bench/RESULTS.md section itself).

What the drafts probes share: a drafts_eval output's slots grouped by draft, and each draft's library.

A probe reads a ``bench/drafts_eval.py`` output (its ``outcomes`` keep every agent's ranked list), walks
the drafts one at a time with :func:`drafts`, and opens the library drafts_eval built for that draft
(``bench/out/drafts-libs/<name>-refs-enriched``) to read its papers or vectors or to fill the draft again.
"""

from __future__ import annotations

import sys
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


def add_list(result: dict, embedder, name: str, cache: Path) -> None:
    """An exact-cosine ranked list named ``name`` added to every slot of a drafts_eval output: each draft's papers
    embedded with ``embedder`` (cached in ``cache/<draft>.npz`` while the library's ids stay the same), each
    slot's dense query (from filling the draft again) scored against them, the top 100 kept."""
    import numpy as np

    from citefinder.library.records import embedding_text
    from citefinder.retrieve.agents.dense import dense_text

    groups = by_draft(result["outcomes"])
    for n, draft in enumerate(drafts(result), start=1):
        papers = list(draft.library.iter_papers())
        ids = [p.doc_id for p in papers]
        f = cache / f"{draft.name}.npz"
        if f.exists() and list(np.load(f)["ids"]) == ids:
            docs = np.load(f)["vecs"]
        else:
            docs = np.asarray(embedder.encode([embedding_text(p) for p in papers]), dtype=np.float32)
            np.savez(f, ids=np.array(ids), vecs=docs)
        queries = [dense_text(r.query) for r in draft.fill()]
        sims = np.asarray(embedder.encode(queries), dtype=np.float32) @ docs.T
        for o, row in zip(draft.outcomes, sims, strict=True):
            order = np.argsort(-row)[:100]
            o["lists"][name] = [[ids[i], r, round(float(row[i]), 5)] for r, i in enumerate(order, start=1)]
        print(f"[{n}/{len(groups)}] {draft.name}: {len(papers)} papers, {len(draft.outcomes)} slots",
              file=sys.stderr, flush=True)
