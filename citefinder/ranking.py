"""The one retrieve -> fuse path, shared by the pipeline, the evaluation runner and reranker mining."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from citefinder.fuse import Fusion, fuse, learned_fusion
from citefinder.retrieve.common import Agent, Rankings, run_agent
from citefinder.types import Query, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings


def fusion_of(settings: "Settings", kind: Literal["slots", "questions"] = "slots") -> Fusion:
    """The :class:`Fusion` the settings ask for: the tuned weights for citation slots or for free-text
    questions ('learned'), plain RRF or max-score."""
    if settings.fusion == "learned":
        return learned_fusion(kind)
    return Fusion(settings.fusion, settings.rrf_k)


def retrieve(agents: Sequence[Agent], query: Query) -> tuple[Rankings, tuple[StageTrace, ...]]:
    """Every agent's ranked lists (keyed by list name) and one trace per agent, in agent order."""
    rankings: Rankings = {}
    traces: list[StageTrace] = []
    for agent in agents:
        lists, trace = run_agent(agent, query)
        rankings.update(lists)
        traces.append(trace)
    return rankings, tuple(traces)


def fused_ids(agents: Sequence[Agent], query: Query, fusion: Fusion) -> list[str]:
    """Doc ids in fused order for ``query`` (what reranker mining trains on)."""
    rankings, _ = retrieve(agents, query)
    return [doc_id for doc_id, _ in fuse(rankings, fusion)]
