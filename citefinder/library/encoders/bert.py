"""A BERT sentence encoder in plain torch, for sentence-transformers folders of the common shape
(a BERT model, mean pooling, normalisation), such as the default all-MiniLM-L6-v2.

Why: importing ``sentence_transformers`` (and through it ``transformers``' model machinery) takes
6-8 s of CPU on this machine before a single text is embedded, torch alone ~2 s; every process that
embeds (the CLI, the app's server, an import) paid it at start. This module reads the same
``model.safetensors`` and ``tokenizer.json`` and computes the same vectors (the tests compare it with
sentence-transformers to 1e-5), with only ``torch``, ``safetensors`` and ``tokenizers`` imported.
Any other folder (mpnet, hub names, other poolings) goes through sentence-transformers as before:
:func:`supports` says which.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

log = logging.getLogger(__name__)

_MODULES = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
            "sentence_transformers.models.Normalize"]


def padded_batches(tokenizer: Any, texts: Sequence[str],
                   batch_size: int) -> Iterator[tuple[list[int], np.ndarray, np.ndarray]]:
    """The texts tokenized and batched by similar length (less padding): per batch, the input positions of its
    texts and their token ids and attention mask (int64, zero-padded to the batch's longest)."""
    encodings = tokenizer.encode_batch([str(t).strip() for t in texts])
    order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        width = max(len(encodings[i].ids) for i in chunk)
        ids = np.zeros((len(chunk), width), dtype=np.int64)
        mask = np.zeros((len(chunk), width), dtype=np.int64)
        for row, i in enumerate(chunk):
            seq = encodings[i].ids
            ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1
        yield chunk, ids, mask


def supports(folder: Path) -> bool:
    """True for a local sentence-transformers folder this encoder reproduces exactly: a BERT with
    absolute positions and GELU, mean pooling, then normalisation, weights in safetensors, a fast
    tokenizer file."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        pooling_dir = next(m["path"] for m in modules if m["type"].endswith("Pooling"))
        pooling = json.loads((folder / pooling_dir / "config.json").read_text(encoding="utf-8"))
        st_config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, StopIteration):
        return False
    mean_only = pooling.get("pooling_mode_mean_tokens") and not any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens")
    return (
        [m.get("type") for m in modules] == _MODULES
        and config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and bool(mean_only)
        and not st_config.get("do_lower_case", False)
        and (folder / "model.safetensors").is_file()
        and (folder / "tokenizer.json").is_file()
    )


class BertEncoder:
    """Mean-pooled, L2-normalised sentence vectors from a BERT sentence-transformers folder."""

    def __init__(self, folder: Path, max_seq_length: int, device: str = "cpu") -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.dim = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        limit = min(max_seq_length, int(config.get("max_position_embeddings", 512)))
        weights = load_file(str(folder / "model.safetensors"))
        prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""
        self.device = device
        self.w = {k[len(prefix):]: v.float().to(device) for k, v in weights.items() if k.startswith(prefix)}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=limit)
        self.tokenizer.no_padding()
        self.torch = torch

    def _ln(self, x: Any, name: str) -> Any:
        return self.torch.nn.functional.layer_norm(x, (self.dim,), self.w[f"{name}.weight"], self.w[f"{name}.bias"],
                                                   self.eps)

    def _lin(self, x: Any, name: str) -> Any:
        return self.torch.nn.functional.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def _forward(self, ids: Any, mask: Any) -> Any:
        x = self.hidden(ids, mask)
        m = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.torch.nn.functional.normalize(pooled, p=2, dim=1)

    def hidden(self, ids: Any, mask: Any) -> Any:
        """The last hidden state (batch, tokens, dim) of int64 token ids and attention mask tensors: what
        :mod:`citefinder.library.encoders.int8` exports to ONNX (pooling stays outside the graph)."""
        torch, F = self.torch, self.torch.nn.functional
        n, length = ids.shape
        positions = torch.arange(length, device=ids.device).unsqueeze(0)
        x = (F.embedding(ids, self.w["embeddings.word_embeddings.weight"])
             + F.embedding(positions, self.w["embeddings.position_embeddings.weight"])
             + self.w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        head = self.dim // self.heads
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t: Any) -> Any:
                return t.view(n, length, self.heads, head).transpose(1, 2)

            q = split(self._lin(x, f"{p}.attention.self.query"))
            k = split(self._lin(x, f"{p}.attention.self.key"))
            v = split(self._lin(x, f"{p}.attention.self.value"))
            att = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0 / math.sqrt(head))
            att = att.transpose(1, 2).reshape(n, length, self.dim)
            x = self._ln(self._lin(att, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            mid = F.gelu(self._lin(x, f"{p}.intermediate.dense"))
            x = self._ln(self._lin(mid, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Vectors in input order; batches are formed from texts of similar length (less padding)."""
        torch = self.torch
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for chunk, ids, mask in padded_batches(self.tokenizer, texts, batch_size):
                ids_t, mask_t = torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)
                out[chunk] = self._forward(ids_t, mask_t).float().cpu().numpy()
        return out
