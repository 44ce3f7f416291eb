"""The card of a trained embedder, and the trained embedders a library keeps (``<library>/embedders/NAME``).

A model folder holds ``model_card.json`` (base model, data, config, training throughput, held-out
metrics of the base and the trained model, whether it wins) and a short ``README.md`` replacing the
generic one sentence-transformers writes. Pure JSON and paths: importing this module is instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from citefinder.rank.cards import read_card
from citefinder.train.cardfile import save_card

EMBEDDERS_DIR = "embedders"
CARD_VERSION = 1


def embedders_dir(library: Path) -> Path:
    """Where a library keeps the embedders trained for it."""
    return Path(library) / EMBEDDERS_DIR


def write_card(folder: Path, card: dict[str, Any]) -> dict[str, Any]:
    """Write ``model_card.json`` and ``README.md`` into ``folder``."""
    folder = Path(folder)
    card = {"citefinder_embedder": CARD_VERSION, **card, "name": folder.name.removesuffix(".partial")}
    return save_card(folder, card, card_markdown)


def update_card(folder: Path, **changes: Any) -> dict[str, Any]:
    """Merge ``changes`` into an existing card (e.g. the held-out metrics measured after training)."""
    return write_card(folder, {**(read_card(folder) or {}), **changes})


def card_markdown(card: dict[str, Any]) -> str:
    """A short human-readable card."""
    t = card.get("training", {})
    lines = [
        f"# CiteFinder embedder `{card.get('name', '?')}`",
        "",
        "A sentence embedder (BERT, mean pooling, normalised) fine-tuned by `citefinder embedder train` on real "
        "citing sentences: each sentence is pulled towards the paper it cites (title, plus abstract when known) "
        "and away from the other papers of its batch and from another paper its citing paper cites.",
        "",
        f"- created: {card.get('created', '?')}",
        f"- base model: {card.get('base_model', '?')}",
        f"- data: {', '.join(card.get('data', {}).get('sources', [])) or '?'} "
        f"(split {card.get('data', {}).get('split', '?')})",
        f"- training: {t.get('pairs_seen', '?')} of {t.get('pairs', '?')} pairs, {t.get('steps', '?')} steps in "
        f"{t.get('train_seconds', '?')} s ({t.get('pairs_per_s', '?')} pairs/s, {t.get('torch_threads', '?')} "
        f"CPU threads)",
        f"- config: `{json.dumps(card.get('config', {}))}`",
    ]
    metrics = card.get("metrics")
    if metrics:
        lines += ["", "## Held-out citing papers (never trained on)", ""]
        lines += [f"- {k}: `{json.dumps(v)}`" for k, v in metrics.items()]
        lines += ["", f"Beats the base: **{'yes' if card.get('wins') else 'no'}**."]
    lines += ["", "Use as a library's embedder: `CITEFINDER_EMBEDDER=<this folder>` (a new library, or "
              "`citefinder embedder use` to copy a library onto it).", ""]
    return "\n".join(lines)


def list_embedders(library: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Trained embedder folders inside the library, with their cards, oldest first (unfinished ones skipped)."""
    folder = embedders_dir(library)
    if not folder.is_dir():
        return []
    found = [(p, read_card(p)) for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.endswith(".partial")]
    out = [(p, c) for p, c in found if c and c.get("citefinder_embedder")]
    return sorted(out, key=lambda pc: str(pc[1].get("created", "")))
