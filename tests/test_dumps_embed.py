"""Embedding a literature library on the device the machine has (issue 36): ``--device auto|cpu|cuda``, auto
taking the GPU when torch sees one (bigger batches there), int8 on the CPU only, a clear error for cuda without
a GPU; the CPU path end to end (``library embed`` says where it embedded); bench/embed_device.py's JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from citefinder.cli.main import main
from citefinder.errors import ModelLoadError
from citefinder.library.encoders import embedder as embedder_mod
from citefinder.library.encoders.embedder import GPU_BATCH, MINILM, MINILM_INT8, Embedder, resolve_device

ROOT = Path(__file__).resolve().parent.parent
ARXIV = ROOT / "tests" / "data" / "dumps" / "arxiv-metadata-oai-snapshot.json"


@pytest.fixture
def gpu(monkeypatch):
    """What torch says about CUDA, set by the test (this machine has no GPU)."""
    import torch

    def set_gpu(available: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: available)

    return set_gpu


def test_auto_takes_the_gpu_when_torch_sees_one(gpu):
    gpu(True)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda") == "cuda"
    gpu(False)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"


def test_cuda_without_a_gpu_and_int8_on_cuda_are_errors_that_say_what_to_use(gpu):
    gpu(False)
    with pytest.raises(ModelLoadError, match="no CUDA GPU.*--device auto or cpu"):
        resolve_device("cuda")
    gpu(True)
    with pytest.raises(ModelLoadError, match="CPU only"):
        resolve_device("cuda", MINILM_INT8)
    assert resolve_device("auto", MINILM_INT8) == "cpu"  # int8 stays on the CPU, GPU or not
    with pytest.raises(ModelLoadError, match="unknown device"):
        resolve_device("tpu")


def test_a_gpu_embedder_takes_bigger_batches_a_cpu_one_keeps_its_own():
    e = Embedder(MINILM, 256, 32)
    e._on("cuda")
    assert (e.device_used, e.batch_size) == ("cuda", GPU_BATCH)
    e = Embedder(MINILM, 256, 32)
    e._on("cpu")
    assert (e.device_used, e.batch_size) == ("cpu", 32)


@pytest.mark.slow
def test_auto_on_this_cpu_machine_embeds_the_same_vectors_as_cpu(gpu):
    gpu(False)
    texts = ["Attention is all you need.", "Sparse coding with learned dictionaries for image denoising."]
    auto, cpu = Embedder(MINILM, device="auto"), Embedder(MINILM)
    assert np.allclose(auto.encode(texts), cpu.encode(texts), atol=1e-6)
    assert auto.device_used == cpu.device_used == "cpu" and auto.device_label().startswith("cpu (")


@pytest.mark.slow
def test_the_bert_encoder_follows_the_device_it_is_given(monkeypatch):
    """The encoder puts its weights and inputs on its device (checked with the "meta" device, which every torch
    has: the shapes flow through without a GPU)."""
    import torch

    from citefinder.library.encoders import bert

    folder = Path(embedder_mod.resolve_model(MINILM)[0])
    enc = bert.BertEncoder(folder, 64, device="meta")
    assert {t.device.type for t in enc.w.values()} == {"meta"}
    ids = torch.zeros((2, 5), dtype=torch.int64, device="meta")
    out = enc._forward(ids, torch.ones((2, 5), dtype=torch.int64, device="meta"))
    assert out.shape == (2, enc.dim) and out.device.type == "meta"


@pytest.mark.slow
def test_cli_embed_says_which_device_embedded(tmp_path, capsys, gpu, monkeypatch):
    import torch

    gpu(False)
    lib = str(tmp_path / "lib")
    assert main(["--library", lib, "library", "import", str(ARXIV), "--defer-embedding", "--category", "cs.CL"]) == 0
    capsys.readouterr()
    assert main(["--library", lib, "library", "embed", "--device", "auto"]) == 0
    out = capsys.readouterr().out
    assert "embedded 4 papers on cpu (" in out and "papers/s" in out and "4 of 4 papers have dense vectors" in out
    assert main(["--library", lib, "library", "import", str(ARXIV), "--category", "hep-th", "--device", "auto"]) == 0
    assert "embedded on cpu (" in capsys.readouterr().out  # an import that embeds says where too
    for device in ("auto", "cpu"):  # stats says where `library embed` would embed, without loading the model
        assert main(["--library", lib, "library", "stats", "--json", "--device", device]) == 0
        assert json.loads(capsys.readouterr().out)["embedder_device"] == "cpu"
    gpu(True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "Fake GPU 80GB")
    assert main(["--library", lib, "library", "stats"]) == 0
    assert "embedder_device: cuda (Fake GPU 80GB)" in capsys.readouterr().out
    assert main(["--library", lib, "library", "stats", "--device", "cpu"]) == 0
    assert "embedder_device: cpu" in capsys.readouterr().out
    gpu(False)
    for command in (["embed"], ["import", str(ARXIV), "--category", "cs.LG"]):  # said before anything is read
        assert main(["--library", lib, "library", *command, "--device", "cuda"]) == 2
        assert "no CUDA GPU" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_embed_device_prints_rate_and_peak_memory_as_json(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "embed_device.py"), str(ARXIV), "--n", "20",
                           "--device", "cpu", "--out", str(tmp_path / "e.json")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "e.json").read_text())
    assert result["papers"] == 20 and result["device"] == "cpu" and result["papers_per_s"] > 0
    assert result["peak_rss_mb"] > 0 and result["peak_cuda_mb"] is None
