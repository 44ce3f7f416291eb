"""pandas tables for the app (shown with ``st.dataframe``, which renders every cell as text).

Pure functions: records in, DataFrame out. Missing ranks are <NA>, not 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from citefinder.types import Candidate, Hit, ImportReport, Paper, SlotResult, StageTrace

STAGES_BEFORE = ("reformulate", "rewrite")  # then the retrieval agents, in the order they ran
STAGES_AFTER = ("fuse", "rerank", "select")


def authors_short(authors: Sequence[str], n: int = 3) -> str:
    """"A, B, C et al." for long author lists."""
    if not authors:
        return ""
    if len(authors) <= n:
        return ", ".join(authors)
    return ", ".join(authors[:n]) + " et al."


def papers_frame(papers: Sequence[Paper], whose: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per paper: key, title, authors, year, venue, whose it is (``whose``: doc_id -> "yours",
    "sample", ...; the column is left out without it), id."""
    frame = pd.DataFrame(
        {
            "key": [p.key or "" for p in papers],
            "title": [p.title for p in papers],
            "authors": [authors_short(p.authors) for p in papers],
            "year": pd.array([p.year for p in papers], dtype="Int64"),
            "venue": [p.venue or "" for p in papers],
            "id": [p.doc_id for p in papers],
        }
    )
    if whose is not None:
        frame.insert(2, "whose", [whose.get(p.doc_id, "") for p in papers])
    return frame


def _stage_names(candidates: Sequence[Candidate]) -> list[str]:
    """Agent lists present (in the order first seen, each agent's query variants like bm25#1 after it)."""
    names: list[str] = []
    for c in candidates:
        for s in c.scores:
            if s.stage not in names and s.stage not in ("fused", "rerank"):
                names.append(s.stage)
    agents = list(dict.fromkeys(n.split("#")[0] for n in names))
    return sorted(names, key=lambda n: (agents.index(n.split("#")[0]), n))


def shown(frame: pd.DataFrame, precision: int = 4) -> Any:
    """``frame`` as the page shows it: a missing value is an empty cell, not "None"; numbers stay numbers (a
    column still sorts by them). A pandas Styler, which ``st.dataframe`` displays with these values."""
    return frame.style.format(na_rep="", precision=precision)


def candidates_frame(candidates: Sequence[Candidate], limit: int | None = None) -> pd.DataFrame:
    """The final list with each candidate's rank in every stage (retrievers, fusion, rerank)."""
    shown = list(candidates[:limit] if limit else candidates)
    lists = _stage_names(shown)

    def rank(c: Candidate, stage: str) -> int | None:
        s = c.stage(stage)
        return s.rank if s else None

    def score(c: Candidate, stage: str) -> float | None:
        s = c.stage(stage)
        return round(s.score, 4) if s else None

    data: dict[str, object] = {
        "#": list(range(1, len(shown) + 1)),
        "title": [c.paper.title for c in shown],
        "year": pd.array([c.paper.year for c in shown], dtype="Int64"),
    }
    for name in lists:
        data[f"{name} rank"] = pd.array([rank(c, name) for c in shown], dtype="Int64")
    data["fused rank"] = pd.array([rank(c, "fused") for c in shown], dtype="Int64")
    data["fused score"] = pd.array([score(c, "fused") for c in shown], dtype="Float64")
    if any(c.stage("rerank") for c in shown):
        data["rerank rank"] = pd.array([rank(c, "rerank") for c in shown], dtype="Int64")
        data["rerank score"] = pd.array([score(c, "rerank") for c in shown], dtype="Float64")
    return pd.DataFrame(data)


def hits_frame(hits: Sequence[Hit], papers: Mapping[str, Paper], limit: int | None = None) -> pd.DataFrame:
    """A stage's top-k: rank, score, title, year (title blank when the paper was not looked up)."""
    shown = list(hits[:limit] if limit else hits)
    return pd.DataFrame(
        {
            "rank": [h.rank for h in shown],
            "score": [round(h.score, 4) for h in shown],
            "title": [papers[h.doc_id].title if h.doc_id in papers else h.doc_id for h in shown],
            "year": pd.array([papers[h.doc_id].year if h.doc_id in papers else None for h in shown], dtype="Int64"),
        }
    )


def stage_times_frame(traces: Sequence[StageTrace]) -> pd.DataFrame:
    """One row per agent: status, milliseconds, and what it said (in pipeline order)."""

    def position(t: StageTrace) -> int:
        if t.agent in STAGES_BEFORE:
            return STAGES_BEFORE.index(t.agent)
        if t.agent in STAGES_AFTER:
            return 100 + STAGES_AFTER.index(t.agent)
        return 10  # retrieval agents, in the order they ran (sorted() is stable)

    ordered = sorted(traces, key=position)
    return pd.DataFrame(
        {
            "agent": [t.agent for t in ordered],
            "status": [t.status for t in ordered],
            "ms": [round(t.elapsed_s * 1000, 1) for t in ordered],
            "note": [t.message for t in ordered],
        }
    )


def failures_frame(report: ImportReport) -> pd.DataFrame:
    return pd.DataFrame({"source": [f.source for f in report.failures], "reason": [f.reason for f in report.failures]})


def slot_progress_frame(rows: Sequence[Mapping[str, object]]) -> pd.DataFrame:
    """The live table shown while slots are filled."""
    return pd.DataFrame(list(rows), columns=["slot", "status", "paper", "confidence", "seconds"])


def total_seconds(result: SlotResult) -> float:
    return sum(t.elapsed_s for t in result.traces)
