"""What embeds a query for the dense agents: the library's own embedder, or a query encoder trained to put a
citing sentence near the paper it cites, against the library's unchanged document vectors.

A query encoder only fits document vectors of the model it was trained against: CiteFinder's shipped one
(:mod:`citefinder.library.encoders.shipped`) was trained against all-MiniLM-L6-v2, so a library whose papers another
embedder wrote keeps its own embedder for queries, and says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from citefinder.library.encoders.embedder import MINILM, Embedder
from citefinder.library.encoders.shipped import QUERY_ENCODER, available, model_folder

SAME = "same"
TRAINED = "trained"


@dataclass(frozen=True)
class QuerySide:
    """The embedder of queries and what a trace says of it."""

    embedder: Embedder
    name: str  # "same" (the library's embedder), "trained", or the folder
    note: str  # empty when nothing needs saying


def query_side(setting: str, library_embedder: Embedder) -> QuerySide:
    """The query side ``setting`` asks for, for a library whose papers ``library_embedder`` embedded."""
    choice = (setting or SAME).strip()
    if choice == SAME:
        return QuerySide(library_embedder, SAME, "")
    if choice == TRAINED:
        if library_embedder.name != MINILM:
            return QuerySide(library_embedder, SAME, f"the trained query encoder fits 'minilm' libraries; this one's "
                             f"papers were embedded by {library_embedder.name!r}, which embeds the queries too")
        if not available(QUERY_ENCODER):
            return QuerySide(library_embedder, SAME, "this installation has no trained query encoder")
        trained = str(model_folder(QUERY_ENCODER))
        return QuerySide(Embedder(trained, library_embedder.max_seq_length, library_embedder.batch_size), TRAINED, "")
    folder = str(Path(choice).expanduser())
    trained_for = _document_embedder(Path(folder))
    if trained_for is not None and trained_for != library_embedder.name:
        return QuerySide(library_embedder, SAME, f"the query encoder {folder} was trained against {trained_for!r} "
                         f"vectors; this library's papers were embedded by {library_embedder.name!r}, which embeds "
                         "the queries too")
    return QuerySide(Embedder(folder, library_embedder.max_seq_length, library_embedder.batch_size), folder, "")


def _document_embedder(folder: Path) -> str | None:
    """The embedder whose document vectors a query encoder trained by ``embedder train --query-only`` fits
    (its card says), or None when the folder does not say."""
    try:  # the card citefinder.train.embedder.card writes (model_card.json)
        card = json.loads((folder / "model_card.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = card.get("query_only") if isinstance(card, dict) else None
    return str(found.get("document_embedder")) if isinstance(found, dict) and found.get("document_embedder") else None
