"""The plain-torch BERT encoder gives sentence-transformers' vectors for the default MiniLM, and an
embedding process never imports sentence-transformers for it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from citefinder.library.encoders import bert
from citefinder.library.encoders.embedder import MINILM, Embedder, resolve_model

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    "",
    "   surrounding spaces are stripped   ",
    "Attention is all you need [CITATION].",
    "Ünïcödé — naïve café 東京 😀 ∑ x_i",
    "long " * 700,  # truncated at max_seq_length
    "Sequence transduction models are based on complex recurrent or convolutional neural networks.",
]


def minilm_folder() -> Path:
    return Path(resolve_model(MINILM)[0])


def minilm_copy(dest: Path) -> Path:
    """The MiniLM folder copied (its weights linked), so a test can change one of its config files."""
    shutil.copytree(minilm_folder(), dest, ignore=shutil.ignore_patterns("model.safetensors"))
    (dest / "model.safetensors").symlink_to(minilm_folder() / "model.safetensors")
    return dest


@pytest.mark.slow
@pytest.mark.parametrize("max_seq_length", [256, 128])
def test_same_vectors_as_sentence_transformers(max_seq_length: int) -> None:
    from sentence_transformers import SentenceTransformer

    texts = TEXTS + [f"Paper {i}: " + "graph neural networks for molecules " * (i % 9) for i in range(40)]
    ours = bert.BertEncoder(minilm_folder(), max_seq_length).encode(texts, batch_size=16)
    model = SentenceTransformer(str(minilm_folder()), device="cpu")
    model.max_seq_length = max_seq_length
    theirs = model.encode(texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_supports_only_the_shape_it_reproduces(tmp_path: Path) -> None:
    assert bert.supports(minilm_folder())
    assert not bert.supports(tmp_path)  # not a model folder
    for name, change in [("config.json", {"model_type": "mpnet"}),
                         ("1_Pooling/config.json", {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}),
                         ("sentence_bert_config.json", {"do_lower_case": True})]:
        copy = minilm_copy(tmp_path / name.replace("/", "-"))
        assert bert.supports(copy)
        path = copy / name
        path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
        assert not bert.supports(copy), name


def test_default_embedder_runs_without_importing_sentence_transformers() -> None:
    code = ("import sys; from citefinder.library.encoders.embedder import Embedder; e = Embedder(); "
            "v = e.encode(['a sentence', 'another one']); assert v.shape == (2, 384), v.shape; "
            "bad = sorted(m for m in ('sentence_transformers', 'transformers') if m in sys.modules); "
            "print('imported:', bad)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "imported: []" in done.stdout


def test_other_models_still_load_through_sentence_transformers(tmp_path: Path) -> None:
    copy = minilm_copy(tmp_path / "cls-pooled")
    pooling = copy / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "pooling_mode_mean_tokens": False,
                                   "pooling_mode_cls_token": True}))
    embedder = Embedder(str(copy))
    vecs = embedder.encode(["a sentence", "another one"])
    assert vecs.shape == (2, 384) and embedder.dimension == 384
    assert not isinstance(embedder._load(), bert.BertEncoder)
    assert not np.allclose(vecs, Embedder().encode(["a sentence", "another one"]), atol=1e-3)  # CLS, not mean
