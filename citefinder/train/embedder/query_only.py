"""Train only the query side of the dense agent: a citing sentence embedded near the paper it cites, against
the *frozen* document vectors of the library's embedder (``citefinder embedder train --query-only``).

The documents are embedded once by the library's own embedder, exactly as the library stores them, and
never change: the trained model embeds only queries (setting ``query_encoder``,
:mod:`citefinder.library.encoders.query_side`), so no library is re-embedded and its stored vectors stay valid.
Only the top ``layers`` encoder layers learn (the rest, word embeddings included, stay the base model's):
parameter-efficient, and on a CPU the frozen lower layers need no backward pass.

Loss: softmax cross-entropy of each sentence over the vectors of *every* paper cited in the training pairs
(scaled cosines, temperature 0.05): the other references of the same citing paper, the hardest negatives
of the users' job, are in every softmax for free. A paper the same cite command or sentence also cites
is masked.
This is the recipe of CiteFinder's shipped query encoder (bench/train28/gpu_train.py at bc9259c, bench/RESULTS.md).
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citefinder.train.embedder.pack import ContextPair
from citefinder.train.embedder.train import (
    Steps,
    TrainConfig,
    TrainProgress,
    TrainResult,
    embed_texts,
    linear_schedule,
    load_base,
    save_trained,
)

log = logging.getLogger(__name__)

Encode = Callable[[Sequence[str]], np.ndarray]  # texts -> L2-normalised vectors (the library's embedder)


@dataclass(frozen=True)
class QueryOnlyConfig:
    """Knobs of query-side training (recorded in the model card)."""

    base_model: str = "minilm"  # the library's embedder: the queries start where its documents are
    layers: int = 3  # top encoder layers trained
    epochs: int = 3
    batch_size: int = 32
    query_max_length: int = 128
    learning_rate: float = 2e-4
    warmup_ratio: float = 0.05
    weight_decay: float = 0.01
    scale: float = 20.0  # temperature 0.05
    seed: int = 13

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DocumentPool:
    """The frozen vectors of every paper the training pairs cite, in the library embedder's space."""

    keys: tuple[str, ...]
    vectors: np.ndarray  # (len(keys), dim), L2-normalised

    def index(self) -> dict[str, int]:
        return {k: i for i, k in enumerate(self.keys)}


def document_pool(pairs: Sequence[ContextPair], encode: Encode) -> DocumentPool:
    """Embed each cited paper once, as the library embeds it (``encode`` is the library's embedder)."""
    texts: dict[str, str] = {}
    for p in pairs:
        texts.setdefault(p.doc, p.doc_text)
    keys = tuple(sorted(texts))
    vectors = np.asarray(encode([texts[k] for k in keys]), dtype=np.float32)
    return DocumentPool(keys, vectors)


def freeze_all_but_top(model: Any, layers: int) -> int:
    """Leave only the top ``layers`` encoder layers trainable; returns the trainable parameter count."""
    bert = model[0].auto_model
    total = int(bert.config.num_hidden_layers)
    if not 1 <= layers <= total:
        raise ValueError(f"--layers must be between 1 and {total} (the base model's encoder layers), got {layers}")
    top = {f"encoder.layer.{i}." for i in range(total - layers, total)}
    count = 0
    for name, prm in bert.named_parameters():
        prm.requires_grad = any(name.startswith(t) for t in top)
        count += prm.numel() if prm.requires_grad else 0
    return count


def _targets(batch: Sequence[ContextPair], index: dict[str, int], n_docs: int) -> tuple[Any, Any]:
    """Each sentence's paper (its row in the pool) and the mask of the other papers its cite command or its
    sentence cites (right answers too, or written beside it: never pushed away)."""
    import torch

    target = torch.tensor([index[p.doc] for p in batch])
    mask = torch.zeros((len(batch), n_docs), dtype=torch.bool)
    for i, p in enumerate(batch):
        for other in p.gold | p.sentence:
            if other != p.doc and other in index:
                mask[i, index[other]] = True
    return target, mask


def train_query_encoder(
    pairs: Sequence[ContextPair],
    output: Path,
    pool: DocumentPool,
    config: QueryOnlyConfig | None = None,
    *,
    max_steps: int | None = None,
    card: dict[str, Any] | None = None,
    progress: Callable[[TrainProgress], None] | None = None,
) -> TrainResult:
    """Train the query side on ``pairs`` against ``pool`` and save it (complete model folder, with its card).

    ``output`` is replaced only once the new model is completely written.
    """
    import torch

    config = config or QueryOnlyConfig()
    if len(pairs) < 2:
        raise ValueError(f"need at least 2 citing sentences to train on, got {len(pairs)}")
    index = pool.index()
    missing = sorted({p.doc for p in pairs} - set(index))
    if missing:
        raise ValueError(f"{len(missing)} cited papers have no document vector (e.g. {missing[0]!r})")
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    model = load_base(TrainConfig(base_model=config.base_model))
    trainable = freeze_all_but_top(model, config.layers)
    docs = torch.from_numpy(pool.vectors)
    params = [p for p in model.parameters() if p.requires_grad]
    steps_per_epoch = math.ceil(len(pairs) / config.batch_size)
    total = steps_per_epoch * config.epochs
    total = min(total, max_steps) if max_steps else total
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, linear_schedule(int(total * config.warmup_ratio), total))
    log.info("query side: %d pairs, %d papers, %d steps, %d trainable parameters", len(pairs), len(pool.keys),
             total, trainable)
    model.train()
    steps = Steps(total, progress)
    order = list(range(len(pairs)))
    for epoch in range(config.epochs):
        random.Random(config.seed + epoch).shuffle(order)
        for lo in range(0, len(order), config.batch_size):
            if steps.finished:
                break
            batch = [pairs[i] for i in order[lo:lo + config.batch_size]]
            target, mask = _targets(batch, index, len(pool.keys))
            q = embed_texts(model, [p.query for p in batch], config.query_max_length)
            logits = (q @ docs.T * config.scale).masked_fill(mask, float("-inf"))
            steps.take(torch.nn.functional.cross_entropy(logits, target), params, optimizer, scheduler, len(batch),
                       epoch)
        steps.end_epoch()
        if steps.finished:
            break
    model.eval()
    card = {**(card or {}), "query_only": {"document_embedder": config.base_model, "layers": config.layers,
                                           "trainable_params": trainable, "documents": len(pool.keys)},
            "config": config.to_dict()}
    return save_trained(model, config.base_model, Path(output), card, pairs, steps)
