"""What the engine and the draft say about one cited paper in one context: where the fused ranking puts
it, the engine's calibrated confidence there, how close its vector and its words are to the context
(sentence and paragraph) compared with every other paper of the library, whether the key itself names
a word of the context, how alike this context is to the other places the draft cites the same key, and
how alike the paper is to the papers cited with it.

The retrieval runs once per cite command (:func:`rank_context`); :func:`fit_features` then describes any
paper of the library as the one cited there, and :mod:`citefinder.check.model` turns that into the
probability that the key fits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from citefinder.rank.calibration import candidate_features
from citefinder.retrieve.agents.dense import dense_text
from citefinder.retrieve.query.reformulate import STOPWORDS, clean_context
from citefinder.types import Candidate, Query, Slot

if TYPE_CHECKING:
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

ALTERNATIVES_FROM = 5  # alternatives are looked for among the top candidates
NEARBY = 3  # cite commands on each side whose papers :func:`fit_features` compares with
_KEY_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_WORD = re.compile(r"[A-Za-z]+")


class Vectors:
    """The library's paper vectors by doc_id (the exact matrix the dense agent searches), for one check."""

    def __init__(self, library: "Library", exact_max: int) -> None:
        import numpy as np

        from citefinder.index.base import derived
        from citefinder.index.vectors import VECTORS

        self.library = library
        self.doc_ids: tuple[str, ...] = ()
        self.matrix: Any = np.zeros((0, 0), dtype=np.float32)
        if 0 < library.embedded_count() <= exact_max:
            index = derived(library, VECTORS)
            self.doc_ids, self.matrix = index.doc_ids, np.asarray(index.matrix)
        self.row = {d: i for i, d in enumerate(self.doc_ids)}

    def embed(self, texts: Sequence[str]) -> Any:
        return self.library.embedder.encode(list(texts))

    def cosines(self, vector: Any) -> dict[str, float]:
        if not self.doc_ids:
            return {}
        import numpy as np

        sims = self.matrix @ np.asarray(vector, dtype=np.float32)
        return dict(zip(self.doc_ids, (float(x) for x in sims), strict=True))

    def of(self, doc_id: str) -> Any:
        i = self.row.get(doc_id)
        return None if i is None else self.matrix[i]


@dataclass(frozen=True)
class Ranked:
    """One context (a cite command's slot) ranked against the whole library."""

    slot: Slot
    query: Query
    candidates: tuple[Candidate, ...]
    ran: tuple[str, ...]
    size: int
    vector: Any = None  # the context's vector (what the dense agent embeds)
    wvector: Any = None  # the paragraph's vector
    cosine: dict[str, float] = field(default_factory=dict)  # doc_id -> cosine with the sentence, every paper
    best_cosine: float = 0.0
    window: dict[str, float] = field(default_factory=dict)  # doc_id -> cosine with the paragraph around it
    bm25: dict[str, tuple[int, float]] = field(default_factory=dict)  # doc_id -> (rank, score), papers it matched
    words: frozenset[str] = frozenset()  # the words of the sentence and its neighbours, lower case
    wbm25: dict[str, tuple[int, float]] = field(default_factory=dict)  # the same for the paragraph


def rank_context(pipeline: "Pipeline", slot: Slot, vectors: Vectors, *, draft: str = "") -> Ranked:
    """Retrieve, fuse and rerank for ``slot``; then the context's cosine with every paper's vector and its
    BM25 score for every paper with a word in common."""
    query, candidates, traces = pipeline.rank_slot(slot, draft=draft)
    size = pipeline.library.count()
    window_text = clean_context(slot.window) or query.text
    sentence, window = vectors.embed([dense_text(query), window_text])
    cosine = vectors.cosines(sentence)
    bm25 = {h.doc_id: (h.rank, h.score) for h in pipeline.library.bm25_search(query.focus, max(1, size))}
    words = frozenset(w.lower() for w in _WORD.findall(slot.window or slot.context))
    wbm25 = {h.doc_id: (h.rank, h.score) for h in pipeline.library.bm25_search(window_text, max(1, size))}
    return Ranked(slot, query, candidates, tuple(pipeline.agents_ran(traces)), size, sentence, window, cosine,
                  max(cosine.values(), default=0.0), vectors.cosines(window), bm25, words, wbm25)


@dataclass(frozen=True)
class Contexts:
    """Every cite command's context in the draft as vectors (sentence and paragraph), to ask the question
    the other way round: of all the places the draft cites something, is this one where the paper fits?"""

    sentences: Any
    windows: Any

    @classmethod
    def of(cls, ranked: Sequence[Ranked]) -> "Contexts":
        import numpy as np

        return cls(np.asarray([r.vector for r in ranked], dtype=np.float32),
                   np.asarray([r.wvector for r in ranked], dtype=np.float32))

    def mean_cos(self, paper: Any) -> float:
        import numpy as np

        if paper is None or not len(self.sentences):
            return 0.0
        return float(np.mean(self.sentences @ np.asarray(paper, dtype=np.float32)))

    def reverse_pct(self, paper: Any, ranked: Ranked) -> tuple[float, float]:
        """The share of the draft's contexts closer to ``paper`` than ``ranked``'s (sentence, paragraph)."""
        import numpy as np

        if paper is None or not len(self.sentences):
            return 0.5, 0.5
        v = np.asarray(paper, dtype=np.float32)
        out = []
        for table, own in ((self.sentences, ranked.vector), (self.windows, ranked.wvector)):
            sims = table @ v
            mine = float(np.dot(np.asarray(own, dtype=np.float32), v))
            out.append(float(np.mean(sims > mine + 1e-6)))
        return out[0], out[1]


def key_parts(key: str) -> set[str]:
    """The words a citation key is made of (``devlin2019bert`` -> devlin, bert; ``LeCunMNIST`` -> le, cun,
    mnist), generic words and years left out."""
    parts = {p.lower() for run in re.split(r"[^A-Za-z]+", key) for p in _KEY_PART.findall(run)}
    return {p for p in parts if len(p) >= 3 and p not in STOPWORDS and p not in ("etal", "and", "the")}


def _max_cos(a: Any, others: Sequence[Any]) -> float:
    import numpy as np

    vs = [o for o in others if o is not None]
    if a is None or not vs:
        return 0.0
    return float(max(np.dot(np.asarray(a, dtype=np.float32), np.asarray(v, dtype=np.float32)) for v in vs))


def name_features(cands: Sequence[Candidate], doc_id: str) -> dict[str, float]:
    """What the names the sentence writes say, as the fill's "names" agents read them ("Fast R-CNN [CITATION]"):
    ``named`` / ``named_weak``: the paper's reciprocal rank in the strong (clear) and the weaker name matches;
    ``other_named`` / ``other_named_weak``: the same for the best other paper (another paper named here)."""
    f = {}
    for agent, name in (("names", "named"), ("names-weak", "named_weak")):
        rr = {c.doc_id: 1.0 / s.rank for c in cands if (s := c.stage(agent)) is not None and s.rank > 0}
        f[name] = rr.get(doc_id, 0.0)
        f[f"other_{name}"] = max((x for d, x in rr.items() if d != doc_id), default=0.0)
    return f


def cousin_check_features(sentence: str, cands: Sequence[Candidate], at: int | None,
                          others: dict[int, float], own: float) -> dict[str, float]:
    """Whether a paper that fits better is a close relative of the cited one (:mod:`citefinder.rank.relatives`:
    the benchmark's paper written for the model's, the base method's for its extension) and whether the sentence
    tells them apart: ``cousin_alt_p`` the engine's probability of the best relative among the top candidates,
    ``cousin_alt_gap`` how far it is above the cited paper's, ``cousin_tell_alt`` / ``cousin_tell_key`` the words of
    the sentence only that relative / only the cited paper holds; ``tell_gap`` the same difference against the best
    other candidate, relative or not."""
    from citefinder.rank.relatives import relatives, telling_words

    f = {"cousin_alt_p": 0.0, "cousin_alt_gap": 0.0, "cousin_tell_alt": 0.0, "cousin_tell_key": 0.0, "tell_gap": 0.0}
    if at is None or not others:
        return f
    key = cands[at].paper
    best = max(others, key=lambda i: others[i])
    ta, tk = telling_words(sentence, cands[best].paper, key)
    f["tell_gap"] = float(min(2, ta) - min(2, tk))
    kin = [i for i in others if relatives(key, cands[i].paper).related]
    if kin:
        i = max(kin, key=lambda j: others[j])
        ta, tk = telling_words(sentence, cands[i].paper, key)
        f.update(cousin_alt_p=others[i], cousin_alt_gap=others[i] - own, cousin_tell_alt=float(min(2, ta)),
                 cousin_tell_key=float(min(2, tk)))
    return f


def fit_features(ranked: Ranked, doc_id: str, *, exclude: frozenset[str] = frozenset(), calibration: Any = None,
                 key: str = "", elsewhere: Sequence[Any] = (), vectors: Vectors | None = None,
                 contexts: Contexts | None = None, nearby: Sequence[str] = (),
                 uncited: frozenset[str] = frozenset()) -> dict[str, float]:
    """Features of ``doc_id`` as the paper cited in ``ranked``'s context under ``key``. Papers in ``exclude``
    (the other keys of the same command) are not competitors; ``elsewhere`` are the vectors of the other
    contexts where the draft cites the same key."""
    from citefinder.rank.calibration import default_calibration

    calibration = calibration or default_calibration()
    cands = [c for c in ranked.candidates if c.doc_id not in exclude or c.doc_id == doc_id]
    size = max(1, ranked.size - len(exclude))
    f: dict[str, float] = {}
    at = next((i for i, c in enumerate(cands) if c.doc_id == doc_id), None)
    f["in_list"] = 1.0 if at is not None else 0.0
    f["rr_fused"] = 1.0 / (at + 1) if at is not None else 0.0
    # how far down the engine ranks it, on a scale that keeps counting past the first few (1/rank does not: 32nd
    # and 50th of 79 read alike); a paper below the fused list counts as just below it
    rank = at + 1 if at is not None else len(cands) + 1
    f["log_rank"] = math.log(rank)
    f["rank_share"] = min(1.0, rank / size)
    f["p_engine"] = calibration.probability(candidate_features(cands, at, ranked.ran, size)) if at is not None else 0.0
    others = {i: calibration.probability(candidate_features(cands, i, ranked.ran, size))
              for i in range(min(ALTERNATIVES_FROM, len(cands))) if i != at}
    f["alt_p"] = max(others.values(), default=0.0)
    # an entry the draft cites nowhere that fits here: what a slip of the keyboard leaves behind
    f["alt_uncited_p"] = max((p for i, p in others.items() if cands[i].doc_id in uncited), default=0.0)
    for name, table in (("dense", ranked.cosine), ("window", ranked.window)):
        cos = table.get(doc_id)
        best = max((x for d, x in table.items() if d not in exclude), default=0.0)
        f[f"{name}_cos"] = cos if cos is not None else 0.0
        f[f"{name}_gap"] = best - cos if cos is not None else 1.0
        f[f"{name}_pct"] = (sum(1 for d, x in table.items() if x > cos and d not in exclude) / size
                            if cos is not None else 1.0)
    for name, hits in (("bm25", ranked.bm25), ("wbm25", ranked.wbm25)):
        rank, score = hits.get(doc_id, (0, 0.0))
        above = sum(1 for d, (r, _) in hits.items() if rank and r < rank and d not in exclude)
        f[f"{name}_pct"] = above / size if rank else 1.0
        f[f"{name}_raw"] = math.log1p(max(0.0, score))
    f["best_cos"] = ranked.best_cosine  # how much any paper of the library can match this context
    f["words"] = math.log1p(len(ranked.query.keywords))
    f["log_library"] = math.log10(size)
    f["key_named"] = float(min(2, len(key_parts(key) & ranked.words))) if key else 0.0
    f.update(name_features(cands, doc_id))
    f.update(cousin_check_features(ranked.slot.sentence, cands, at, others, f["p_engine"]))
    f["elsewhere"] = 1.0 if elsewhere else 0.0
    f["elsewhere_cos"] = _max_cos(ranked.vector, elsewhere)
    co = [vectors.of(d) for d in exclude] if vectors is not None else []
    f["co_cited"] = 1.0 if any(v is not None for v in co) else 0.0
    f["co_cos"] = _max_cos(vectors.of(doc_id) if vectors is not None else None, co)
    paper = vectors.of(doc_id) if vectors is not None else None
    f["reverse_pct"], f["reverse_wpct"] = contexts.reverse_pct(paper, ranked) if contexts else (0.5, 0.5)
    # papers cited just before and after: a paragraph cites papers of one topic
    near = [vectors.of(d) for d in nearby if d != doc_id] if vectors is not None else []
    f["nearby_cos"] = _max_cos(paper, near)
    # a paper whose vector is close to every context of the draft (a generic title) fits anywhere
    f["hub"] = contexts.mean_cos(paper) if contexts is not None else 0.0
    return f
