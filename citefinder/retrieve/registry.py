"""The retrieval agents, registered in one place.

Adding an agent is one module (a class with ``name``, ``k``, ``uses_variants``, ``skip_reason`` and
``search``; an :class:`~citefinder.library.derived.IndexKind` if it needs one) and one line here.
The pipeline runs the agents the settings name (``CITEFINDER_AGENTS``); fusion, confidence,
evaluation, reranker mining, the CLI report and the trace UI loop over whatever agents ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from citefinder.errors import ConfigError
from citefinder.library.derived import IndexKind
from citefinder.retrieve.authors import AUTHORS, AuthorsAgent
from citefinder.retrieve.bm25 import Bm25Agent
from citefinder.retrieve.common import Agent
from citefinder.retrieve.context import ContextAgent
from citefinder.retrieve.dense import DenseAgent
from citefinder.retrieve.draft import DraftAgent
from citefinder.retrieve.keys import KEYS, KeysAgent
from citefinder.retrieve.names import NAMES, NamesAgent
from citefinder.retrieve.near import NearAgent
from citefinder.retrieve.title import TITLES, TitleAgent

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library


@dataclass(frozen=True)
class AgentSpec:
    """How to make an agent, what it is for, and the derived indexes it reads."""

    make: Callable[["Settings", "Library"], Agent]
    describe: str
    indexes: tuple[IndexKind, ...] = ()


def _vectors() -> IndexKind:
    from citefinder.library.vectors import VECTORS

    return VECTORS


AGENTS: dict[str, AgentSpec] = {
    "bm25": AgentSpec(Bm25Agent, "BM25 over title, authors, venue and abstract"),
    "dense": AgentSpec(DenseAgent, "embedding similarity (exact cosine)", (_vectors(),)),
    "title": AgentSpec(TitleAgent, "BM25 over titles alone", (TITLES,)),
    "names": AgentSpec(NamesAgent, "the name next to the marker vs. the names papers introduce: strong, clear matches",
                       (NAMES,)),
    "names-weak": AgentSpec(partial(NamesAgent, strong=False), "the same, weaker or tied matches", (NAMES,)),
    "authors": AgentSpec(AuthorsAgent, "'Surname et al. (2019)' next to the marker vs. authors and year", (AUTHORS,)),
    "draft": AgentSpec(DraftAgent, "the draft's own title/abstract and section heading (dense)"),
    "near": AgentSpec(NearAgent, "BM25 over the few words right next to the marker"),
    "context": AgentSpec(ContextAgent, "the slot's sentence with its neighbours (dense)"),
    "keys": AgentSpec(KeysAgent, "the words next to the marker vs. the names the user's citation keys add", (KEYS,)),
}


def make_agents(settings: "Settings", library: "Library") -> list[Agent]:
    """The agents ``settings.agents`` names, in that order."""
    unknown = [name for name in settings.agents if name not in AGENTS]
    if unknown:
        raise ConfigError(
            f"unknown retrieval agent(s) {', '.join(unknown)} (setting CITEFINDER_AGENTS); "
            f"known: {', '.join(AGENTS)}"
        )
    return [AGENTS[name].make(settings, library) for name in settings.agents]


def index_kinds(settings: "Settings", library: "Library") -> list[IndexKind]:
    """The derived indexes the configured agents read (built after every import).

    The exact-search vectors are left out above ``exact_dense_max`` papers, where Chroma's own
    index answers the dense agent."""
    exact = library.embedded_count() <= settings.exact_dense_max
    kinds: list[IndexKind] = []
    for name in settings.agents:
        spec = AGENTS.get(name)
        for kind in spec.indexes if spec else ():
            if kind not in kinds and (exact or kind.name != "vectors"):
                kinds.append(kind)
    return kinds
