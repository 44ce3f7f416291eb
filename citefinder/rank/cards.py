"""Reranker model folders: reading a trained model's card, checking a folder holds a cross-encoder,
listing a library's trained rerankers, and which one is its default (``<library>/rerankers/default.json``,
read by :func:`citefinder.rank.rerank.make_reranker` when no reranker is set explicitly). Writing cards
and defaults is training's job (:mod:`citefinder.train.rerank.card`). Pure JSON and paths: importing
this module is instant."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citefinder.errors import ModelLoadError

CARD_FILE = "model_card.json"
RERANKERS_DIR = "rerankers"
DEFAULT_FILE = "default.json"


def rerankers_dir(library: Path) -> Path:
    """Where a library keeps its trained rerankers."""
    return Path(library) / RERANKERS_DIR


def read_card(folder: Path) -> dict[str, Any] | None:
    """The card of a model folder, or None when it has none (or it is unreadable)."""
    try:
        card = json.loads((Path(folder) / CARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return card if isinstance(card, dict) else None


@dataclass(frozen=True)
class LibraryDefault:
    """The reranker a library uses when none is set explicitly."""

    name: str
    path: Path  # absolute


def library_default(library: Path) -> LibraryDefault | None:
    """The library's default reranker, or None when it has none."""
    file = rerankers_dir(library) / DEFAULT_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        path = Path(data["path"]).expanduser()
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not path.is_absolute():
        path = (Path(library) / path).resolve()
    return LibraryDefault(str(data.get("name") or path.name), path)


def list_rerankers(library: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Trained reranker folders inside the library, with their cards, oldest first."""
    folder = rerankers_dir(library)
    if not folder.is_dir():
        return []
    found = [(p, read_card(p)) for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.endswith(".partial")]
    return sorted(((p, c) for p, c in found if c), key=lambda pc: str(pc[1].get("created", "")))


def check_cross_encoder_folder(path: Path) -> None:
    """Raise ModelLoadError unless ``path`` looks like a trained cross-encoder.

    A cross-encoder has a ``*ForSequenceClassification`` architecture in config.json. A
    sentence-transformers bi-encoder (``BertModel`` plus a Pooling module) would load with a
    randomly initialised head and score nothing meaningful, so it is refused.
    """
    setting = "setting CITEFINDER_RERANKER"
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ModelLoadError(
            f"The reranker folder {path} ({setting}) has no config.json: it is not a Hugging Face model folder."
        )
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelLoadError(f"The reranker folder {path} ({setting}) has an unreadable config.json: {e}") from e
    card = _citefinder_card(path)
    if card is not None and not card.get("trained"):
        raise ModelLoadError(
            f"The reranker folder {path} ({setting}) holds a cross-encoder whose training did not finish "
            "(its model_card.json says trained: false); its scores would mean nothing. Train it again with "
            "`citefinder reranker train`."
        )
    architectures = [str(a) for a in config.get("architectures") or []]
    pooling = (path / "1_Pooling").exists() or _modules_json_has_pooling(path / "modules.json")
    if pooling or not any(a.endswith("ForSequenceClassification") for a in architectures):
        kind = (
            "a sentence-transformers bi-encoder (it has a Pooling module)"
            if pooling
            else (f"not a cross-encoder (architectures {architectures or 'missing'}, no *ForSequenceClassification)")
        )
        raise ModelLoadError(
            f"The reranker folder {path} ({setting}) is {kind}. Point it to a trained cross-encoder folder "
            f"(e.g. one saved from cross-encoder/ms-marco-MiniLM-L6-v2), use 'mpnet-rescorer' for the "
            "bi-encoder re-scorer, or leave it empty to skip reranking."
        )


def _citefinder_card(path: Path) -> dict[str, Any] | None:
    """The card ``citefinder reranker train`` writes, or None for a folder from elsewhere."""
    card = read_card(path)
    return card if card is not None and "citefinder_reranker" in card else None


def _modules_json_has_pooling(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        modules = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return any("Pooling" in str(m.get("type", "")) for m in modules if isinstance(m, dict))
