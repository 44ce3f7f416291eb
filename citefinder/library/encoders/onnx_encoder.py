"""A sentence encoder exported to ONNX (a BERT-style ``model.onnx`` beside its ``tokenizer.json``), run with
onnxruntime and mean pooling: how incite-app ships its MiniLM-L6 fine-tuned on citation contexts.

Why a module of its own: such a folder has no PyTorch weights and no sentence-transformers files, so
neither :mod:`citefinder.library.encoders.bert` nor sentence-transformers can load it; onnxruntime and tokenizers
are already installed (chromadb needs them), so nothing new is required. Vectors are mean-pooled over
the attention mask and L2-normalised, as sentence-transformers does for all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from citefinder.library.encoders.bert import padded_batches

log = logging.getLogger(__name__)

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"


def supports(folder: Path) -> bool:
    """True for a folder holding ``model.onnx`` and ``tokenizer.json`` (and no PyTorch weights to prefer)."""
    return (folder / MODEL_FILE).is_file() and (folder / TOKENIZER_FILE).is_file()


class OnnxEncoder:
    """Mean-pooled, L2-normalised sentence vectors from an ONNX encoder whose first output is the
    last hidden state (batch, tokens, dim).

    Two sessions share the weights file: one on a single thread for a few texts (a query; more
    threads spin against each other on a busy 2-core machine, as :mod:`citefinder.library.encoders.embedder`
    found for torch) and one on every core for bulk embedding.
    """

    def __init__(self, folder: Path, max_seq_length: int) -> None:
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        config = _read_json(self.folder / "config.json")
        limit = min(max_seq_length, int(config.get("max_position_embeddings", 512)))
        self.tokenizer = Tokenizer.from_file(str(self.folder / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=limit)
        self.tokenizer.no_padding()
        self._sessions: dict[int, Any] = {}
        session = self._session(1)
        self.inputs = [i.name for i in session.get_inputs()]
        shape = session.get_outputs()[0].shape
        self.dim = int(shape[-1]) if isinstance(shape[-1], int) else int(config.get("hidden_size", 0))
        if not self.dim:  # neither the graph nor a config says: run one token through it
            one = np.ones((1, 1), dtype=np.int64)
            self.dim = int(self._forward(session, one, one).shape[1])

    def _session(self, threads: int) -> Any:
        """An inference session on ``threads`` intra-op threads (0: onnxruntime's default, every core)."""
        if threads not in self._sessions:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # no warnings about unused initialisers on every load
            self._sessions[threads] = ort.InferenceSession(
                str(self.folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        return self._sessions[threads]

    def _forward(self, session: Any, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def encode(self, texts: Sequence[str], batch_size: int, *, threads: int | None = None) -> np.ndarray:
        """Vectors in input order; batches are formed from texts of similar length (less padding)."""
        session = self._session(threads if threads is not None else (1 if len(texts) <= 8 else _bulk_threads()))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for chunk, ids, mask in padded_batches(self.tokenizer, texts, batch_size):
            out[chunk] = self._forward(session, ids, mask)
        return out


def _bulk_threads() -> int:
    """Threads for bulk embedding: ``OMP_NUM_THREADS`` when set (as torch honours it), else every core."""
    try:
        return max(0, int(os.environ.get("OMP_NUM_THREADS", "0")))
    except ValueError:
        return 0


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
