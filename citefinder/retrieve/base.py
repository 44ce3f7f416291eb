"""The retrieval-agent protocol and the one runner every caller uses (pipeline, evaluation, mining).

An agent is one small class: a ``name``, the query variants it wants, and ``search(query, k)``
returning ranked hits (1-based ranks, best first). :func:`run_agent` times it, runs it over the
query variants, turns a failure into a trace instead of an exception and records what it did.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from citefinder.types import Hit, Query, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

log = logging.getLogger(__name__)

Rankings = dict[str, tuple[Hit, ...]]


class Agent(Protocol):
    """A retrieval agent. ``k`` is how many hits it returns; ``uses_variants``: it also searches each
    query variant (an LLM rewrite) as a list of its own (``name#1``, ``name#2``...)."""

    name: str
    k: int
    uses_variants: bool

    def search(self, query: Query) -> list[Hit]: ...

    def skip_reason(self, query: Query) -> str | None:
        """Why this agent has nothing to do for ``query`` (e.g. no name next to the marker), else None."""
        ...


class LibraryAgent:
    """An agent over one library: subclasses name it and say when it has nothing to do (``skip_reason``), what it
    reads of the query (``inputs``) and how it searches (``search``). It returns ``k`` hits at most: the dense
    agents' number (``needs_vectors``) or the lexical ones'."""

    name = ""
    uses_variants = False
    needs_vectors = False

    def __init__(self, settings: "Settings", library: "Library") -> None:
        self.library = library
        self.k = settings.k_dense if self.needs_vectors else settings.k_bm25


class TextAgent(LibraryAgent):
    """An agent that searches one part of the query as text: subclasses say which part (:meth:`text`),
    how to search it (:meth:`search_text`) and, for dense agents, ``needs_vectors``."""

    empty_reason = "empty query"

    def text(self, query: Query) -> str:
        return query.focus

    def search_text(self, text: str) -> list[Hit]:
        raise NotImplementedError

    def skip_reason(self, query: Query) -> str | None:
        if not self.text(query).strip():
            return self.empty_reason
        if self.needs_vectors and not self.library.embedded_count():
            return "no paper has dense vectors yet (run `citefinder library embed`)"
        return None

    def inputs(self, query: Query) -> dict[str, object]:
        return {"text": self.text(query), **({"variants": list(query.variants)} if self.uses_variants else {})}

    def search(self, query: Query) -> list[Hit]:
        return self.search_text(self.text(query))


def run_agent(agent: Agent, query: Query) -> tuple[Rankings, StageTrace]:
    """Run ``agent`` on the query (and its variants); failures are recorded, never raised.

    Status "error" when every search failed (empty rankings), "skipped" when the agent had nothing
    to search for, "ok" otherwise (failed variants listed in the message).
    """
    start = time.perf_counter()
    queries = [(agent.name, query)]
    if agent.uses_variants:
        queries += [(f"{agent.name}#{i}", replace(query, text=v, local="")) for i, v in enumerate(query.variants, 1)]
    rankings: Rankings = {}
    errors: dict[str, str] = {}
    skipped: list[str] = []
    for key, q in queries:
        reason = agent.skip_reason(q)
        if reason:
            skipped.append(reason)
            continue
        try:
            rankings[key] = tuple(agent.search(q))
        except Exception as e:  # noqa: BLE001 - an agent failure is recorded, the pipeline decides
            log.warning("%s retrieval failed for %r: %s", agent.name, q.text[:80], e)
            errors[key] = f"{type(e).__name__}: {e}"

    if not rankings and errors:
        status, message = "error", "; ".join(f"{key}: {msg}" for key, msg in errors.items())
    elif not rankings:
        status, message = "skipped", f"skipped: {skipped[0] if skipped else 'nothing to search for'}"
    else:
        status = "ok"
        n_hits = sum(len(h) for h in rankings.values())
        message = f"{n_hits} hits from {len(rankings)} quer{'y' if len(rankings) == 1 else 'ies'}"
        if errors:
            message += f"; {len(errors)} failed: " + "; ".join(f"{key}: {msg}" for key, msg in errors.items())
    trace = StageTrace(
        agent=agent.name,
        kind="retriever",
        status=status,  # type: ignore[arg-type]
        message=message,
        inputs=agent_inputs(agent, query),
        params={"k": agent.k},
        top=rankings.get(agent.name, ()),
        elapsed_s=time.perf_counter() - start,
        details={
            "variants": {key: [h.to_dict() for h in hits] for key, hits in rankings.items() if key != agent.name},
            "errors": errors,
        },
    )
    finish = getattr(agent, "finish_trace", None)  # an agent may add what only it knows (e.g. its coverage)
    return rankings, (finish(trace) if callable(finish) else trace)


def retrieve(agents: Sequence[Agent], query: Query) -> tuple[Rankings, tuple[StageTrace, ...]]:
    """Every agent's ranked lists (keyed by list name) and one trace per agent, in agent order: the one
    retrieval step the pipeline, the evaluation runner and reranker mining share."""
    rankings: Rankings = {}
    traces: list[StageTrace] = []
    for agent in agents:
        lists, trace = run_agent(agent, query)
        rankings.update(lists)
        traces.append(trace)
    return rankings, tuple(traces)


def agent_inputs(agent: Agent, query: Query) -> dict[str, object]:
    """What the agent read, for the trace (its own ``inputs(query)`` when it has one)."""
    describe = getattr(agent, "inputs", None)
    if callable(describe):
        return dict(describe(query))
    return {"text": query.text, "variants": list(query.variants)}


def hits_from_scores(scores: dict[str, float], k: int) -> list[Hit]:
    """Ranked hits from ``doc_id -> score`` (higher first; ties by doc_id), positive scores only."""
    ranked = sorted(((d, s) for d, s in scores.items() if s > 0), key=lambda t: (-t[1], t[0]))[:k]
    return [Hit(d, r, float(s)) for r, (d, s) in enumerate(ranked, start=1)]
