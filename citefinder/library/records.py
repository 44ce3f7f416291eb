"""Paper <-> Chroma record conversion. Chroma metadata holds scalars only and no None."""

from __future__ import annotations

import json
from typing import Any, Mapping

from citefinder.types import Paper

_SCALARS = ("title", "venue", "doi", "arxiv_id", "url", "entry_type", "source", "key", "bibtex", "pages", "volume")
_INTS = ("year", "position", "cited_by")
_JSON = ("ids", "provenance")  # tuples of tuples, stored as JSON strings (absent when empty)


def embedding_text(paper: Paper) -> str:
    """What the dense embedder sees: title, then abstract."""
    return f"{paper.title}. {paper.abstract}".strip() if paper.abstract else paper.title


def to_metadata(paper: Paper, *, norm_title: str) -> dict[str, Any]:
    meta: dict[str, Any] = {k: getattr(paper, k) for k in _SCALARS if getattr(paper, k)}
    meta["authors"] = json.dumps(list(paper.authors), ensure_ascii=False)
    meta["norm_title"] = norm_title
    for name in _JSON:
        if getattr(paper, name):
            meta[name] = json.dumps([list(x) for x in getattr(paper, name)], ensure_ascii=False)
    for name in _INTS:
        if getattr(paper, name) is not None:
            meta[name] = int(getattr(paper, name))
    return meta


def to_update_metadata(paper: Paper, *, norm_title: str) -> dict[str, Any]:
    """Metadata for ``collection.update``, which merges: fields the paper no longer has are set to
    None, which deletes them."""
    meta: dict[str, Any] = {k: None for k in _SCALARS + _INTS + _JSON}
    meta.update(to_metadata(paper, norm_title=norm_title))
    return meta


def from_record(doc_id: str, meta: Mapping[str, Any] | None, document: str | None) -> Paper:
    meta = meta or {}
    try:
        authors = tuple(json.loads(meta.get("authors") or "[]"))
    except ValueError:
        authors = ()
    ints = {k: int(v) if isinstance(v := meta.get(k), (int, float)) else None for k in _INTS}
    listed = {k: _json_pairs(meta.get(k)) for k in _JSON}
    return Paper.from_dict({**{k: meta.get(k) for k in _SCALARS}, **ints, **listed, "doc_id": doc_id,
                            "title": str(meta.get("title", "")), "authors": authors, "abstract": document or ""})


def _json_pairs(value: Any) -> list[list[str]]:
    """A JSON list of string lists (``ids``, ``provenance``); [] for anything else."""
    try:
        items = json.loads(value) if isinstance(value, str) else []
    except ValueError:
        return []
    return [[str(x) for x in item] for item in items if isinstance(item, list)] if isinstance(items, list) else []


def source_name(paper: Any) -> str:
    """What an import failure names: the record's source file, else its doc_id, else "record"."""
    source = getattr(paper, "source", None)
    doc_id = getattr(paper, "doc_id", None)
    return str(source if isinstance(source, str) and source else doc_id if isinstance(doc_id, str) else "record")
