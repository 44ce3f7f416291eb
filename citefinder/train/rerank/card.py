"""Writing the card of a trained reranker, and choosing a library's default reranker.

A trained model folder holds ``model_card.json`` (base model, data, config, metrics, date) and a
short ``README.md``. A library names its default reranker in ``<library>/rerankers/default.json``;
:func:`citefinder.rank.rerank.make_reranker` reads it when no reranker is set explicitly. Pure JSON and
paths: importing this module is instant.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from citefinder.rank.cards import DEFAULT_FILE, LibraryDefault, read_card, rerankers_dir
from citefinder.train.cardfile import save_card, write_json

CARD_VERSION = 1


def write_card(folder: Path, card: dict[str, Any]) -> dict[str, Any]:
    """Write ``model_card.json`` and ``README.md`` (replacing the generic one sentence-transformers writes)."""
    folder = Path(folder)
    card = {"citefinder_reranker": CARD_VERSION, "name": folder.name.removesuffix(".partial"), **card}
    return save_card(folder, card, card_markdown)


def update_card(folder: Path, **changes: Any) -> dict[str, Any]:
    """Merge ``changes`` into an existing card (e.g. validation metrics measured after training)."""
    return write_card(folder, {**(read_card(folder) or {}), **changes})


def card_markdown(card: dict[str, Any]) -> str:
    """A short human-readable card."""
    training = card.get("training", {})
    lines = [
        f"# CiteFinder reranker `{card.get('name', '?')}`",
        "",
        "A cross-encoder (one relevance logit) trained by `citefinder reranker train` to rerank the "
        "fused BM25 + dense candidates of a citation context or question (query, title + abstract).",
        "",
        f"- created: {card.get('created', '?')}",
        f"- base model: {card.get('base_model', '?')}",
        f"- data: {', '.join(card.get('data', {}).get('sources', [])) or '?'}",
        f"- training: {training.get('queries', '?')} queries, {training.get('pairs', '?')} pairs, "
        f"{training.get('steps', '?')} steps in {training.get('train_seconds', '?')} s "
        f"on {training.get('device', '?')}",
        f"- config: `{json.dumps(card.get('config', {}))}`",
    ]
    metrics = card.get("metrics")
    if metrics:
        lines += ["", "## Validation (held-out queries, never trained on)", ""]
        lines += [f"- {k}: `{json.dumps(v)}`" for k, v in metrics.items()]
    lines += ["", "Load with `rerankers.Reranker(<this folder>, model_type=\"cross-encoder\")`.", ""]
    return "\n".join(lines)


def set_library_default(library: Path, model_dir: Path, name: str | None = None) -> LibraryDefault:
    """Make ``model_dir`` the library's default reranker (stored relative when it lies inside the library)."""
    library = Path(library)
    model_dir = Path(model_dir).resolve()
    try:
        stored = str(model_dir.relative_to(library.resolve()))
    except ValueError:
        stored = str(model_dir)
    folder = rerankers_dir(library)
    folder.mkdir(parents=True, exist_ok=True)
    name = name or model_dir.name
    write_json(folder / DEFAULT_FILE, {"name": name, "path": stored, "set": time.strftime("%Y-%m-%d %H:%M %Z")})
    return LibraryDefault(name, model_dir)


def clear_library_default(library: Path) -> bool:
    """Remove the library's default reranker; True when there was one."""
    file = rerankers_dir(library) / DEFAULT_FILE
    if file.exists():
        file.unlink()
        return True
    return False


