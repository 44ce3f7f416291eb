"""The static embedding shipped in the package (``citefinder/models/static-minilm/``): a vector per token,
distilled once from the MiniLM we ship with model2vec (``bench/static_distill.py``; its card says how, and what it
measured). A text's vector is the mean of its tokens' rows, L2-normalised: no neural network runs, so a few
hundred thousand abstracts take minutes on a laptop's CPU where MiniLM takes hours. It gives a literature library
a dense first pass beside BM25 (:mod:`citefinder.index.static`, the ``static`` agents) until, or instead of,
MiniLM vectors.

Inference is the tokenizer (``tokenizers``), a table lookup and a mean (numpy); model2vec itself is needed only to
distil. The model is read from the package folder: nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from citefinder.errors import ModelLoadError

log = logging.getLogger(__name__)

STATIC_MINILM = "static-minilm"
FOLDER = Path(__file__).resolve().parents[2] / "models" / STATIC_MINILM
MAX_TOKENS = 512  # tokens of a text that count (model2vec's default): an abstract's first 512
BATCH = 2048  # texts tokenised and averaged at once
_QUERY_CACHE = 64
_LOCK = threading.Lock()
_LOADED: dict[Path, "StaticEncoder"] = {}


class StaticEncoder:
    """A static embedding folder (``model.safetensors`` with one ``embeddings`` table, ``tokenizer.json``)."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        try:
            table = load_file(str(folder / "model.safetensors"))["embeddings"]
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except (OSError, KeyError, ValueError, Exception) as e:  # noqa: BLE001 - any loader failure, one message
            raise ModelLoadError(f"Could not load the static embedding in {folder}: {e}. Reinstall CiteFinder "
                                 "(the package ships it in citefinder/models/).") from e
        self.folder = folder
        self.name = folder.name
        self.table = np.asarray(table, dtype=np.float32)
        self.dim = int(self.table.shape[1])
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer = tokenizer
        self.digest = digest(folder)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text (a text without known tokens: zeros). The mean of a batch's token
        rows is torch's ``embedding_bag`` (torch is a dependency already): gathering the rows with numpy first
        writes hundreds of MB per batch, ten times slower (measured, bench/RESULTS.md (section 44, static-vec))."""
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        table = torch.from_numpy(self.table)
        for start in range(0, len(texts), BATCH):
            chunk = list(texts[start:start + BATCH])
            ids = [e.ids for e in self.tokenizer.encode_batch_fast(chunk, add_special_tokens=False)]
            lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
            if not lengths.any():
                continue
            flat = np.fromiter((t for i in ids for t in i), dtype=np.int64, count=int(lengths.sum()))
            offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            with torch.no_grad():
                means = torch.nn.functional.embedding_bag(torch.from_numpy(flat), table, torch.from_numpy(offsets),
                                                          mode="mean")
            out[start:start + len(chunk)] = means.numpy()
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def query(self, text: str) -> np.ndarray:
        """One text's vector, remembered for the last few texts (the static agents of a slot share them)."""
        with self._lock:
            if text in self._queries:
                self._queries.move_to_end(text)
                return self._queries[text]
        vector = self.encode([text])[0]
        with self._lock:
            self._queries[text] = vector
            while len(self._queries) > _QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector


def digest(folder: Path) -> str:
    """What identifies the model's vectors: its table's size and first bytes, and its config."""
    h = hashlib.sha1()
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        f = folder / name
        if f.is_file():
            h.update(name.encode())
            h.update(str(f.stat().st_size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 16))
    return h.hexdigest()[:12]


def static_encoder(folder: Path | None = None) -> StaticEncoder:
    """The shipped static embedding (or the one in ``folder``), loaded once per process."""
    path = Path(folder or FOLDER)
    with _LOCK:
        if path not in _LOADED:
            _LOADED[path] = StaticEncoder(path)
            log.info("loaded the static embedding %s (%d x %d)", path, *_LOADED[path].table.shape)
        return _LOADED[path]


def card(folder: Path | None = None) -> dict[str, Any]:
    """The model card's figures (``card.json``); empty when the folder has none."""
    try:
        data = json.loads((Path(folder or FOLDER) / "card.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
