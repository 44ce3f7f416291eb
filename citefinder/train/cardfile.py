"""The files of a trained model's card, for every model CiteFinder trains (embedders, rerankers):
``model_card.json`` and a short ``README.md`` beside it (replacing the generic one sentence-transformers writes),
each written all-or-nothing. Pure JSON and paths: importing this module is instant."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citefinder.rank.cards import CARD_FILE
from citefinder.text.safewrite import atomic_write

README_FILE = "README.md"


def write_json(path: Path, data: dict[str, Any]) -> None:
    """``data`` as indented UTF-8 JSON into ``path``, all-or-nothing."""
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))


def save_card(folder: Path, card: dict[str, Any], markdown: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    """``card`` (dated now unless it says when it was made) into ``folder``'s ``model_card.json``, and ``markdown``
    of it into its ``README.md``; the card written."""
    card.setdefault("created", time.strftime("%Y-%m-%d %H:%M %Z"))
    write_json(folder / CARD_FILE, card)
    atomic_write(folder / README_FILE, markdown(card).encode("utf-8"))
    return card
