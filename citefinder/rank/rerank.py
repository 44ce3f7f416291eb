"""The "rerank" agent: one small protocol over a skip, a cross-encoder and a bi-encoder re-scorer.

Each reranker takes the fused candidates and returns the top ``top_n`` in a new order, with a
"rerank" StageScore added and, in the trace details, a confidence in [0, 1] per document.
A reranker that fails at run time degrades to the fused order with status "fallback".
Heavy imports (rerankers, torch, sentence-transformers) happen inside the classes.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from citefinder.errors import ModelLoadError
from citefinder.library.records import embedding_text
from citefinder.rank.cards import check_cross_encoder_folder
from citefinder.retrieve.agents.dense import dense_text
from citefinder.types import Candidate, Hit, Query, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings

log = logging.getLogger(__name__)

MPNET_RESCORER = "mpnet-rescorer"
TRAINED = "trained"  # the cross-encoder CiteFinder trained on citing sentences and ships (library/encoders/shipped.py)
TRAINED_LABEL = "CiteFinder's citation cross-encoder"


class Reranker(Protocol):
    """Reorder the top ``top_n`` fused candidates; agent name "rerank"; never raises at run time."""

    name: str

    def rerank(
        self, query: Query, candidates: Sequence[Candidate], top_n: int
    ) -> tuple[tuple[Candidate, ...], StageTrace]: ...


def candidate_text(candidate: Candidate) -> str:
    """What a reranker reads of a paper: title and abstract (as the dense embedder reads it)."""
    return embedding_text(candidate.paper)


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _passthrough(
    candidates: Sequence[Candidate], top_n: int, *, status: str, message: str, params: dict[str, Any], start: float
) -> tuple[tuple[Candidate, ...], StageTrace]:
    head = tuple(candidates[:top_n])
    trace = StageTrace(
        agent="rerank",
        status=status,  # type: ignore[arg-type]
        message=message,
        inputs={"candidates": len(candidates)},
        params={**params, "top_n": top_n},
        top=tuple(Hit(c.doc_id, i + 1, _fused_score(c)) for i, c in enumerate(head)),
        elapsed_s=time.perf_counter() - start,
    )
    return head, trace


def _fused_score(c: Candidate) -> float:
    fused = c.stage("fused")
    return fused.score if fused else 0.0


def blend_order(scores: Sequence[float], blend: str = "rrf", k: int = 60) -> list[int]:
    """Indices of the fused candidates (fused order) in their new order.

    "replace": by rerank score alone. "rrf": by ``1/(k + fused rank) + 1/(k + rerank rank)``, the
    model a third voter beside BM25 and dense rather than overruling them. Sorts are stable:
    ties keep the fused order.
    """
    by_score = sorted(range(len(scores)), key=lambda i: -scores[i])
    if blend == "replace":
        return by_score
    if blend != "rrf":
        raise ValueError(f"unknown rerank blend {blend!r}: use 'rrf' or 'replace' (setting CITEFINDER_RERANK_BLEND)")
    rerank_rank = {i: r for r, i in enumerate(by_score, start=1)}
    return sorted(range(len(scores)), key=lambda i: -(1.0 / (k + i + 1) + 1.0 / (k + rerank_rank[i])))


def _scored(
    candidates: Sequence[Candidate],
    scores: Sequence[float],
    confidences: Sequence[float],
    *,
    params: dict[str, Any],
    message: str,
    start: float,
) -> tuple[tuple[Candidate, ...], StageTrace]:
    order = blend_order(scores, params.get("blend", "replace"), int(params.get("blend_k", 60)))
    ranked = tuple(candidates[i].with_score("rerank", r + 1, scores[i]) for r, i in enumerate(order))
    trace = StageTrace(
        agent="rerank",
        status="ok",
        message=message,
        inputs={"candidates": len(candidates)},
        params=params,
        top=tuple(Hit(c.doc_id, r + 1, float(scores[i])) for r, (c, i) in enumerate(zip(ranked, order, strict=True))),
        elapsed_s=time.perf_counter() - start,
        details={"confidence": {candidates[i].doc_id: float(confidences[i]) for i in order}},
    )
    return ranked, trace


class SkipReranker:
    """No reranking: the fused order passes through; ``reason`` is shown in the trace."""

    name = "skip"

    def __init__(self, reason: str = "no cross-encoder configured") -> None:
        self.reason = reason

    def rerank(
        self, query: Query, candidates: Sequence[Candidate], top_n: int
    ) -> tuple[tuple[Candidate, ...], StageTrace]:
        return _passthrough(
            candidates,
            top_n,
            status="skipped",
            message=f"skipped: {self.reason}",
            params={"reranker": None},
            start=time.perf_counter(),
        )


class ScoringReranker:
    """The one wrapper around a model that scores (query, candidate) pairs: it scores the top ``top_n``,
    orders them (:func:`blend_order`), records a confidence per candidate, and degrades to the fused
    order when the model fails. A backend says how it scores (``_scores``) and what a score means
    (``confidence``)."""

    name: str = ""
    kind = "reranker"  # in messages: "cross-encoder ... failed"
    blend: str = "rrf"
    blend_k: int = 60

    def _scores(self, query: Query, candidates: Sequence[Candidate]) -> list[float]:
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        return {"reranker": self.name, "blend": self.blend, "blend_k": self.blend_k}

    def confidence(self, score: float) -> float:
        raise NotImplementedError

    def rerank(
        self, query: Query, candidates: Sequence[Candidate], top_n: int
    ) -> tuple[tuple[Candidate, ...], StageTrace]:
        start = time.perf_counter()
        head = list(candidates[:top_n])
        params = {**self.params(), "top_n": top_n}
        if not head:
            return _passthrough(head, top_n, status="ok", message="no candidates", params=params, start=start)
        try:
            scores = self._scores(query, head)
        except Exception as e:  # noqa: BLE001 - optional stage: degrade to the fused order
            log.warning("%s %s failed: %s", self.kind, self.name, e)
            return _passthrough(head, top_n, status="fallback", message=f"fused order kept: {self.kind} failed: {e}",
                                params=params, start=start)
        return _scored(head, scores, [self.confidence(x) for x in scores], params=params,
                       message=self.done(len(head)), start=start)

    def done(self, n: int) -> str:
        """What the trace says after scoring ``n`` candidates."""
        return f"{self.name} reranked {n} candidates"


class CrossEncoderReranker(ScoringReranker):
    """A cross-encoder through ``rerankers.Reranker(name, model_type="cross-encoder")``.

    ``name_or_path`` is a local folder (checked at construction) or a hub name (needs internet
    or a warm Hugging Face cache). The model loads on first use; call :meth:`load` to load early.
    Scores are the model's logits; the trace keeps ``sigmoid(logit)`` as the confidence.
    """

    kind = "cross-encoder"

    def __init__(
        self,
        name_or_path: str,
        *,
        label: str | None = None,
        source: str = "settings",
        batch_size: int = 16,
        blend: str = "rrf",
        blend_k: int = 60,
        slot_text: bool = False,
    ) -> None:
        folder = Path(name_or_path).expanduser()
        if folder.exists():
            check_cross_encoder_folder(folder)
            name_or_path = str(folder)
        self.path = name_or_path  # what rerankers loads
        self.name = label or name_or_path  # what traces and messages call it
        self.source = source  # "settings" or "library default"
        self.batch_size = batch_size
        self.blend, self.blend_k = blend, blend_k
        self.slot_text = slot_text  # read the slot as the dense agent does (its own part first): how it was trained
        self._model: Any = None
        self._load_error: ModelLoadError | None = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """Load the model once; a failed load is remembered rather than retried for every slot."""
        with self._lock:
            if self._load_error is not None:
                raise self._load_error
            if self._model is None:
                try:
                    from rerankers import Reranker as load_ranker

                    model = load_ranker(self.path, model_type="cross-encoder", verbose=0, batch_size=self.batch_size)
                except Exception as e:  # noqa: BLE001 - any loader failure becomes one clear message
                    self._load_error = ModelLoadError(
                        f"Could not load the cross-encoder {self.path!r} ({self._where()}): {e}"
                    )
                    raise self._load_error from e
                if model is None:  # rerankers returns None when its extra dependencies are missing
                    self._load_error = ModelLoadError(
                        f"Could not load the cross-encoder {self.name!r}: install `rerankers[transformers]`."
                    )
                    raise self._load_error
                self._model = model
            return self._model

    def _where(self) -> str:
        return "the library's default reranker" if self.source == "library default" else "setting CITEFINDER_RERANKER"

    def _scores(self, query: Query, candidates: Sequence[Candidate]) -> list[float]:
        model = self.load()
        text = dense_text(query) if self.slot_text else query.text
        ranked = model.rank(text, [candidate_text(c) for c in candidates], doc_ids=list(range(len(candidates))))
        scores = [0.0] * len(candidates)
        for result in ranked.results:
            score = result.score
            if isinstance(score, (list, tuple)):  # two-label heads: the last logit is "relevant"
                score = score[-1]
            scores[int(result.document.doc_id)] = float(score)
        return scores

    def params(self) -> dict[str, Any]:
        return {"reranker": self.name, "model": self.path, "source": self.source, "blend": self.blend,
                "blend_k": self.blend_k}

    def confidence(self, score: float) -> float:
        return sigmoid(score)

    def done(self, n: int) -> str:
        blended = " (blended with the fused order by RRF)" if self.blend == "rrf" else ""
        return f"cross-encoder {self.name} reranked {n} candidates{blended}"


class BiEncoderRescorer(ScoringReranker):
    """Re-score by cosine between the query and title + abstract with a sentence embedder.

    ``model`` has ``encode(texts)`` (a :class:`citefinder.library.encoders.embedder.Embedder` or a
    SentenceTransformer). Confidence is the cosine clipped to [0, 1]. Not a default: a
    stronger embedder than the index's (mpnet over MiniLM) for a few dozen candidates.
    """

    kind = "re-scorer"

    def __init__(self, model: Any, *, name: str = MPNET_RESCORER, blend: str = "rrf", blend_k: int = 60) -> None:
        self.model = model
        self.name = name
        self.blend, self.blend_k = blend, blend_k

    def _scores(self, query: Query, candidates: Sequence[Candidate]) -> list[float]:
        import numpy as np

        vecs = np.asarray(self.model.encode([query.text] + [candidate_text(c) for c in candidates]), dtype=np.float32)
        vecs = vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
        return [float(s) for s in vecs[1:] @ vecs[0]]

    def confidence(self, score: float) -> float:
        return min(1.0, max(0.0, score))

    def done(self, n: int) -> str:
        return f"{self.name} re-scored {n} candidates by cosine"


DISABLED = "none"


def make_reranker(settings: "Settings") -> Reranker:
    """The reranker the settings ask for, else the library's default.

    ``settings.reranker``: "none" disables reranking; "mpnet-rescorer" is the bi-encoder
    re-scorer; any other value is a cross-encoder folder or name (an explicit setting always
    wins). Unset: the default recorded in the library folder by ``citefinder reranker train``
    (``<library>/rerankers/default.json``), else no reranking. A library default that cannot be
    used is skipped with the reason in the trace rather than breaking the pipeline.
    """
    if settings.reranker and settings.reranker.strip().lower() == DISABLED:
        return SkipReranker(f"reranking disabled (reranker '{DISABLED}')")
    blend: dict[str, Any] = {"blend": settings.rerank_blend, "blend_k": settings.rrf_k}
    if settings.reranker == MPNET_RESCORER:
        from citefinder.library.encoders.embedder import MPNET, Embedder

        return BiEncoderRescorer(Embedder(MPNET, settings.embed_max_seq_length, settings.embed_batch_size), **blend)
    if settings.reranker and settings.reranker.strip().lower() == TRAINED:
        return trained_reranker(blend)
    if settings.reranker:
        return CrossEncoderReranker(settings.reranker, **blend)
    from citefinder.rank.cards import library_default

    default = library_default(Path(settings.library))
    if default is None:
        return SkipReranker()
    if not default.path.is_dir():
        log.warning("the library's default reranker %s is missing at %s", default.name, default.path)
        return SkipReranker(f"the library's default reranker {default.name} is missing at {default.path}")
    try:
        return CrossEncoderReranker(str(default.path), label=default.name, source="library default", **blend)
    except ModelLoadError as e:
        log.warning("the library's default reranker cannot be used: %s", e)
        return SkipReranker(f"the library's default reranker cannot be used: {e}")


def trained_reranker(blend: dict[str, Any]) -> Reranker:
    """The shipped cross-encoder (built into the cache on first use), or a skip that says why not."""
    from citefinder.library.encoders.shipped import RERANKER, model_folder

    try:
        folder = model_folder(RERANKER)
    except ModelLoadError as e:
        log.warning("the trained reranker cannot be used: %s", e)
        return SkipReranker(str(e))
    return CrossEncoderReranker(str(folder), label=TRAINED_LABEL, source="settings", slot_text=True, **blend)


def reranker_key(settings: "Settings") -> str:
    """What :func:`make_reranker` would build, as a cache key: the setting, else the library's
    default (with when it was set and when its folder last changed, so ``citefinder reranker use``
    and a retrained model are seen without a restart), the blend, ``rrf_k`` and the library."""
    from citefinder.rank.cards import DEFAULT_FILE, library_default, rerankers_dir

    library = Path(settings.library).expanduser().resolve()
    tail = f"|{settings.rerank_blend}:{settings.rrf_k}|{library}"
    if settings.reranker:
        return settings.reranker + tail
    default = library_default(library)
    if default is None:
        return "library-default:none" + tail

    def mtime(path: Path) -> int:
        try:
            return path.stat().st_mtime_ns
        except OSError:
            return 0

    stamp = f"{mtime(rerankers_dir(library) / DEFAULT_FILE)}:{mtime(default.path)}"
    return f"library-default:{default.name}:{default.path}@{stamp}{tail}"
