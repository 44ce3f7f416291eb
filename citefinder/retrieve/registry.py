"""The retrieval agents, declared in one place.

Adding an agent is one module in ``retrieve/agents/`` (a class with ``name``, ``k``, ``uses_variants``,
``skip_reason`` and ``search``; an :class:`~citefinder.index.base.IndexKind` in ``index/`` if it needs
one) and one :class:`AgentSpec` line here. The spec says everything the rest of CiteFinder needs:

- ``default``: whether it runs when the settings do not name the agents (``CITEFINDER_AGENTS``);
- ``weight``: its fusion weight until ``bench/tune.py fusion`` writes a tuned one into
  ``citefinder/data/fusion.json`` (:func:`citefinder.rank.fuse.fusion_of` warns, naming it, meanwhile);
- ``feature``: whether the calibrated confidence reads its rank and score (set it only together with a
  refit ``citefinder/data/confidence.json``); the confidence of a candidate does not change when an
  agent it does not read joins the run.

The pipeline, fusion, confidence, evaluation, reranker mining, the CLI report and the trace UI loop
over whatever agents ran, never over hard-coded names.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from citefinder.errors import ConfigError
from citefinder.index.anchors import ANCHORS
from citefinder.index.authors import AUTHORS
from citefinder.index.base import IndexKind, derived_indexes
from citefinder.index.citations import CITATION_VECTORS
from citefinder.index.cocitation import COCITATIONS
from citefinder.index.keys import KEYS
from citefinder.index.names import NAMES
from citefinder.index.titles import TITLES
from citefinder.index.vectors import VECTORS
from citefinder.retrieve.agents.authors import AuthorsAgent
from citefinder.retrieve.agents.bm25 import Bm25Agent
from citefinder.retrieve.agents.cited_as import CitedAsAgent
from citefinder.retrieve.agents.cited_like import CitedLikeAgent
from citefinder.retrieve.agents.cited_often import CitedOftenAgent
from citefinder.retrieve.agents.co_cited import CoCitedAgent
from citefinder.retrieve.agents.context import ContextAgent
from citefinder.retrieve.agents.dense import DenseAgent
from citefinder.retrieve.agents.draft import DraftAgent
from citefinder.retrieve.agents.keys import KeysAgent
from citefinder.retrieve.agents.names import CITED_NAMES, NamesAgent
from citefinder.retrieve.agents.near import NearAgent
from citefinder.retrieve.agents.static import StaticAgent, StaticContextAgent, StaticDraftAgent
from citefinder.retrieve.agents.title import TitleAgent
from citefinder.retrieve.base import Agent

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

# The fusion weight of an agent data/fusion.json has not tuned yet: about what the tuned weak agents got.
UNTUNED_WEIGHT = 0.2


@dataclass(frozen=True)
class AgentSpec:
    """How to make an agent, what it is for, the derived indexes it reads, and how the rest treats it."""

    make: Callable[["Settings", "Library"], Agent]
    describe: str
    indexes: tuple[IndexKind, ...] = ()
    default: bool = True
    weight: float = UNTUNED_WEIGHT
    feature: bool = False


AGENTS: dict[str, AgentSpec] = {
    "bm25": AgentSpec(Bm25Agent, "BM25 over title, authors, venue and abstract", feature=True),
    "dense": AgentSpec(DenseAgent, "embedding similarity (exact cosine)", (VECTORS,), feature=True),
    "title": AgentSpec(TitleAgent, "BM25 over titles alone", (TITLES,), feature=True),
    "names": AgentSpec(NamesAgent, "the name next to the marker vs. the names papers introduce (and the citation "
                       "memory uses): strong, clear matches", (NAMES, CITED_NAMES), feature=True),
    "names-weak": AgentSpec(partial(NamesAgent, strong=False), "the same, weaker or tied matches",
                            (NAMES, CITED_NAMES), feature=True),
    "authors": AgentSpec(AuthorsAgent, "'Surname et al. (2019)' next to the marker vs. authors and year", (AUTHORS,),
                         feature=True),
    "near": AgentSpec(NearAgent, "BM25 over the few words right next to the marker", feature=True),
    "context": AgentSpec(ContextAgent, "the slot's sentence with its neighbours (dense)", (VECTORS,), feature=True),
    "draft": AgentSpec(DraftAgent, "the draft's own title/abstract and section heading (dense)", (VECTORS,),
                       feature=True),
    "keys": AgentSpec(KeysAgent, "the words next to the marker vs. the names the user's citation keys add", (KEYS,),
                      feature=True),
    # over the library's citation-context memory (library/contexts/): skipped, saying why, without one
    "cited-as": AgentSpec(CitedAsAgent, "BM25 over the sentences that cite each paper (its anchor text)", (ANCHORS,)),
    "cited-like": AgentSpec(CitedLikeAgent, "the citing sentences nearest the slot (dense), each voting for its paper",
                            (CITATION_VECTORS,)),
    "co-cited": AgentSpec(CoCitedAgent, "papers cited together with the draft's citations near the slot",
                          (COCITATIONS,)),
    "cited-often": AgentSpec(CitedOftenAgent, "how often the memory cites a paper (a prior)", (COCITATIONS,)),
    # over the static vectors (index/static.py): a literature library's dense first pass, built by `library embed
    # --static`, never as a side effect (no index listed here); they skip, saying so, where there are none
    "static": AgentSpec(StaticAgent, "the sentence by the static embedding (distilled MiniLM)", default=False),
    "static-context": AgentSpec(StaticContextAgent, "the sentence with its neighbours by the static embedding",
                                default=False),
    "static-draft": AgentSpec(StaticDraftAgent, "the draft's topic by the static embedding", default=False),
}


def default_agents() -> tuple[str, ...]:
    """The agents that run when the settings name none, in registry order."""
    return tuple(name for name, spec in AGENTS.items() if spec.default)


def feature_agents() -> tuple[str, ...]:
    """The agents whose ranks and scores the calibrated confidence reads."""
    return tuple(name for name, spec in AGENTS.items() if spec.feature)


def agent_names(settings: "Settings") -> tuple[str, ...]:
    """The agents a pipeline with these settings runs, in order (``settings.agents``, else the defaults)."""
    return tuple(settings.agents) if settings.agents is not None else default_agents()


def untuned_weight(name: str) -> float:
    """The fusion weight an agent gets while data/fusion.json has none for it."""
    spec = AGENTS.get(name)
    return spec.weight if spec is not None else 0.0


def make_agents(settings: "Settings", library: "Library") -> list[Agent]:
    """The agents the settings name (or the defaults), in that order."""
    names = agent_names(settings)
    unknown = [name for name in names if name not in AGENTS]
    if unknown:
        raise ConfigError(
            f"unknown retrieval agent(s) {', '.join(unknown)} (setting CITEFINDER_AGENTS); "
            f"known: {', '.join(AGENTS)}"
        )
    return [AGENTS[name].make(settings, library) for name in names]


def index_kinds(settings: "Settings", library: "Library") -> list[IndexKind]:
    """The derived indexes the configured agents read.

    The exact-search vectors are left out above ``exact_dense_max`` papers, where Chroma's own
    index answers the dense agents."""
    exact = library.embedded_count() <= settings.exact_dense_max
    kinds: list[IndexKind] = []
    for name in agent_names(settings):
        spec = AGENTS.get(name)
        for kind in spec.indexes if spec else ():
            if kind not in kinds and (exact or kind is not VECTORS):
                kinds.append(kind)
    return kinds


def keep_indexes_current(settings: "Settings", library: "Library") -> None:
    """After every write to ``library``, build the derived indexes the configured agents read, so the
    first query after an import is fast (they are otherwise built on first use)."""

    ref = weakref.ref(library)  # the hook lives in the library: no reference cycle through it

    def rebuild() -> None:
        lib = ref()
        if lib is not None:
            derived_indexes(lib).rebuild(index_kinds(settings, lib), lib)

    library.on_write("derived-indexes", rebuild)
