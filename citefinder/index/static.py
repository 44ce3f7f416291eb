"""Static vectors: every paper embedded by the shipped static embedding (:mod:`citefinder.library.encoders.static`), one
matrix searched exactly, a derived index of its own (``indexes/static-vectors/``) beside the MiniLM vectors.

They make a literature library of a few hundred thousand papers dense-searchable in minutes on a laptop
(``citefinder library embed --static``), where MiniLM takes hours: the ``static`` agents
(:mod:`citefinder.retrieve.agents.static`) are its dense first pass, fused with BM25 and the others. They are
never built as a side effect of a search: an agent that finds none current skips, saying how to build them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citefinder.index.base import PaperSource, derived_indexes
from citefinder.index.vectors import VectorMatrix, load_matrix, save_matrix
from citefinder.types import Hit

log = logging.getLogger(__name__)

PAGE = 4096  # papers read and embedded at once
_ENCODED = "encoded.json"  # what the matrix holds: {"ids": ids_digest of its doc ids, "papers": n}


def ids_digest(doc_ids: Iterable[str]) -> str:
    """What a set of encoded papers is: the sha1 of their sorted doc ids (a removal plus an addition changes it,
    where a count would not)."""
    h = hashlib.sha1()
    for doc_id in sorted(doc_ids):
        h.update(doc_id.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def library_ids(library: PaperSource) -> list[str]:
    """Every stored paper's doc id, read from the library's BM25 index (which holds them all) when it has one,
    else from its papers."""
    ensure = getattr(library, "ensure_bm25", None)
    if callable(ensure):
        return list(ensure().doc_ids)
    return [p.doc_id for p in library.iter_papers()]


class StaticVectorKind:
    """The :class:`~citefinder.index.base.IndexKind` of the static vectors. Its stamp names the model only (a new
    static embedding makes the saved matrix unusable); which papers it holds is its own stamp,
    :func:`ids_digest` of its rows' doc ids, saved beside it (``encoded.json``), so an import leaves the
    vectors of the papers that have them usable (:func:`saved_static`) and ``embed --static`` encodes only the
    new ones (:func:`build_static`)."""

    name = "static-vectors"
    version = 2

    def __init__(self, progress: Callable[[int, int], None] | None = None) -> None:
        self.progress = progress

    def stamp(self, library: PaperSource) -> str:
        from citefinder.library.encoders.static import static_encoder

        return f"{static_encoder().name}-{static_encoder().digest}"

    def build(self, library: PaperSource) -> VectorMatrix:
        """Every stored paper's title and abstract (the text MiniLM embeds), page by page into one matrix."""
        return self.update(library, None)

    def update(self, library: PaperSource, old: VectorMatrix | None) -> VectorMatrix:
        """The matrix of every stored paper: ``old``'s rows for the papers it holds (a removed paper's row
        dropped), the others encoded now, page by page."""
        from citefinder.library.encoders.static import static_encoder
        from citefinder.library.records import embedding_text

        encoder = static_encoder()
        have = {d: i for i, d in enumerate(old.doc_ids)} if old is not None else {}
        ids = library_ids(library)
        new = [d for d in ids if d not in have]
        total = len(new)
        rows: list[np.ndarray] = []
        new_ids: list[str] = []
        page: list[Any] = []
        start = time.perf_counter()

        def flush() -> None:
            rows.append(np.asarray(encoder.encode([embedding_text(p) for p in page]), dtype=np.float32))
            new_ids.extend(p.doc_id for p in page)
            page.clear()
            if self.progress:
                self.progress(len(new_ids), total)

        wanted = set(new)
        if wanted:
            for paper in _papers(library, new):
                if paper.doc_id in wanted:
                    page.append(paper)
                    if len(page) >= PAGE:
                        flush()
            if page:
                flush()
        current = set(ids)
        kept = [i for d, i in have.items() if d in current] if old is not None else []
        parts = ([np.asarray(old.matrix[kept], dtype=np.float32)] if old is not None and kept else []) + rows
        matrix = np.concatenate(parts) if parts else np.empty((0, encoder.dim), np.float32)
        doc_ids = tuple(old.doc_ids[i] for i in kept) + tuple(new_ids) if old is not None else tuple(new_ids)
        log.info("static vectors: %d encoded, %d kept, %d dropped in %.1f s", len(new_ids), len(kept),
                 len(have) - len(kept), time.perf_counter() - start)
        return VectorMatrix(doc_ids, matrix)

    def is_current(self, index: VectorMatrix, library: PaperSource) -> bool:
        """Usable: a saved matrix of this model is searched for the papers it holds, whatever was imported since
        (:func:`static_state` says whether it holds every stored paper)."""
        return True

    def save(self, index: VectorMatrix, folder: Path) -> None:
        save_matrix(index, folder)
        (folder / _ENCODED).write_text(json.dumps({"ids": ids_digest(index.doc_ids), "papers": len(index.doc_ids)}))

    def load(self, folder: Path) -> VectorMatrix:
        return load_matrix(folder)


def _papers(library: PaperSource, doc_ids: list[str]) -> Iterator[Any]:
    """The papers of ``doc_ids``: fetched by id when they are a few, else every stored paper read in order."""
    get = getattr(library, "get", None)
    if callable(get) and len(doc_ids) <= 50 * PAGE:
        for n in range(0, len(doc_ids), PAGE):
            yield from get(doc_ids[n:n + PAGE])
        return
    yield from library.iter_papers()


STATIC_VECTORS = StaticVectorKind()


@dataclass(frozen=True)
class StaticState:
    """How the saved static vectors stand against the stored papers: ``have`` papers of the library have one,
    ``missing`` do not, ``gone`` rows are of papers removed since."""

    have: int
    missing: int
    gone: int

    @property
    def current(self) -> bool:
        return not self.missing and not self.gone

    def line(self) -> str:
        """What ``library import`` says when the vectors are out of date ("" when they are current)."""
        if self.current:
            return ""
        gone = f", {self.gone} of removed papers" if self.gone else ""
        return (f"static vectors are out of date: {self.missing} papers have none ({self.have} have{gone}); the "
                "literature tier searches the ones there are; `citefinder library embed --static` encodes the new "
                "ones only")


def static_state(library: PaperSource) -> StaticState | None:
    """The static vectors' state (None when the library has none): by the doc ids encoded, not a count."""
    index = saved_static(library)
    if index is None:
        return None
    ids = set(library_ids(library))
    encoded = set(index.doc_ids)
    return StaticState(len(encoded & ids), len(ids - encoded), len(encoded - ids))


@dataclass(frozen=True)
class StaticBuilt:
    """What :func:`build_static` did: papers with a vector, papers encoded now, seconds, where the matrix is."""

    papers: int
    seconds: float
    folder: Path | None
    encoded: int = 0


def build_static(library: PaperSource, progress: Callable[[int, int], None] | None = None) -> StaticBuilt:
    """The library's static vectors brought up to date and saved with its derived indexes: only the papers
    without one are encoded (minutes for 333k the first time), the rows of removed papers dropped."""
    start = time.perf_counter()
    indexes = derived_indexes(library)
    kind = StaticVectorKind(progress)
    old = indexes.saved(kind, library)
    ids = library_ids(library)
    if old is not None and _saved_ids(indexes.root) == ids_digest(ids):
        return StaticBuilt(len(old.doc_ids), time.perf_counter() - start, _folder(indexes.root), 0)
    index = kind.update(library, old)
    indexes.store(kind, library, index)
    encoded = len(index.doc_ids) - (len(set(old.doc_ids) & set(index.doc_ids)) if old is not None else 0)
    return StaticBuilt(len(index.doc_ids), time.perf_counter() - start, _folder(indexes.root), encoded)


def _folder(root: Path | None) -> Path | None:
    return root / StaticVectorKind.name if root is not None else None


def _saved_ids(root: Path | None) -> str | None:
    if root is None:
        return None
    try:
        return str(json.loads((root / StaticVectorKind.name / _ENCODED).read_text())["ids"])
    except (OSError, ValueError, KeyError):
        return None


def saved_static(library: PaperSource) -> VectorMatrix | None:
    """The library's static vectors when they were built (see :func:`build_static`), else None; after an import
    they hold the papers they were built for (the new ones have none until ``embed --static``)."""
    return derived_indexes(library).saved(STATIC_VECTORS, library)


def static_search(library: PaperSource, text: str, k: int) -> list[Hit]:
    """Papers nearest ``text`` by the static embedding (exact cosine); [] without static vectors. A paper removed
    since the vectors were made is left out."""
    index = saved_static(library)
    if index is None or not text.strip() or k <= 0:
        return []
    from citefinder.library.encoders.static import static_encoder

    hits = index.search(static_encoder().query(text), k)
    get = getattr(library, "get", None)
    if not callable(get) or not hits:
        return hits
    stored = {p.doc_id for p in get([h.doc_id for h in hits])}
    if len(stored) == len(hits):
        return hits
    return [Hit(h.doc_id, n, h.score) for n, h in enumerate((h for h in hits if h.doc_id in stored), 1)]
