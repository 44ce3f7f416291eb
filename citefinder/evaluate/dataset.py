"""Benchmark query files (schema of ../shared/data: CiteME excerpts, AutoScholarQuery questions)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from citefinder.errors import InputError


@dataclass(frozen=True)
class EvalItem:
    """One query: a citation excerpt (with a slot) or a literature-search question."""

    id: str
    text: str
    gold: tuple[str, ...]  # doc_ids of the cited papers that are in the library
    gold_titles: tuple[str, ...] = ()
    answerable: bool = True
    split: str | None = None


def load_items(path: Path, *, split: str | None = None, limit: int | None = None) -> list[EvalItem]:
    """Read a JSONL query file; ``split`` keeps one split ("train"/"test"), ``limit`` the first N."""
    items: list[EvalItem] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InputError(f"Cannot read the query file {path}: {e}") from e
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            item = EvalItem(
                id=str(d["id"]),
                text=str(d["text"]),
                gold=tuple(d.get("gold") or ()),
                gold_titles=tuple(d.get("gold_titles") or ()),
                answerable=bool(d.get("answerable", bool(d.get("gold")))),
                split=d.get("split"),
            )
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"{path}, line {n}: not a query record ({e}); expected id, text, gold") from e
        if split is None or item.split == split:
            items.append(item)
    return items[:limit] if limit else items
