"""Backs bench/RESULTS.md, section "Import of papers-50k (`bench/bench_import.py`)".

A static embedding tier distilled locally from all-MiniLM-L6-v2 (model2vec's recipe), measured.

Distillation, offline and with the packages we already pin (no `model2vec[distill]`, which would
pull transformers and tokenizers back a major version):

1. every token of MiniLM's vocabulary goes through the transformer alone (``[CLS] token [SEP]``),
   mean-pooled like the sentence model pools;
2. PCA down to ``--dims`` (model2vec's default 256);
3. SIF weighting ``a / (a + p(token))`` with token frequencies counted on papers-50k's titles and
   abstracts (the library's own text; no benchmark query is read).

The result is a sentence-transformers folder (a ``StaticEmbedding`` module) that any library can
use as its embedder (setting ``embedder`` = the folder). It is then measured exactly like
``bench/probes/seq_length.py`` (`bench/probes/sublibrary.py`): every gold paper plus seeded distractors, exact
cosine search, MiniLM at 256 tokens in the same run as the reference.

Usage: python bench/probes/static_tier.py --out-model /work/bench-libs/static-minilm [--distractors 2000]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
from sublibrary import DATA, dense_quality, load_papers, load_sets, sub_library

from citefinder.config import offline_environment
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.records import embedding_text
from citefinder.types import Paper


def distill(out: Path, papers: list[dict], dims: int, sif: float, batch: int = 512) -> dict:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from sklearn.decomposition import PCA

    from citefinder.library.encoders.embedder import MINILM, resolve_model

    t0 = time.perf_counter()
    st = SentenceTransformer(resolve_model(MINILM)[0], device="cpu")
    tok = st.tokenizer
    encoder = st[0].auto_model.eval()
    vocab = len(tok)
    cls, sep = tok.cls_token_id, tok.sep_token_id
    rows = []
    with torch.inference_mode():
        for start in range(0, vocab, batch):
            ids = torch.arange(start, min(vocab, start + batch))
            input_ids = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            hidden = encoder(input_ids=input_ids, attention_mask=torch.ones_like(input_ids)).last_hidden_state
            rows.append(hidden.mean(dim=1).numpy())
    vectors = np.concatenate(rows).astype(np.float32)
    forward_s = time.perf_counter() - t0

    counts: Counter[int] = Counter()
    backend = tok._tokenizer
    texts = [embedding_text(Paper(p["doc_id"], p["title"], abstract=p.get("abstract") or "")) for p in papers]
    for enc in backend.encode_batch(texts, add_special_tokens=False):
        counts.update(enc.ids)
    total = sum(counts.values())
    p = np.array([counts.get(i, 0) / total for i in range(vocab)], dtype=np.float32)

    reduced = PCA(n_components=dims, random_state=0).fit_transform(vectors).astype(np.float32)
    weighted = reduced * (sif / (sif + p))[:, None]
    model = SentenceTransformer(modules=[StaticEmbedding(backend, embedding_weights=weighted)], device="cpu")
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    return {"vocab": vocab, "dims": dims, "sif": sif, "token_forward_s": round(forward_s, 1),
            "distill_s": round(time.perf_counter() - t0, 1), "corpus_tokens": total}


def measure(name: str, emb: Embedder, texts: list[str], ids: list[str], sets: dict) -> dict:
    row = {"embedder": name, **dense_quality(emb, texts, ids, sets)}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-model", type=Path, required=True, help="folder for the distilled model (outside the repo)")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--sif", type=float, default=1e-4)
    ap.add_argument("--distractors", type=int, default=2000)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, help="JSON results")
    ap.add_argument("--skip-distill", action="store_true", help="measure an already distilled --out-model")
    args = ap.parse_args()
    offline_environment()
    sets = load_sets(args.data)
    papers = load_papers(args.data)
    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M")}
    if not args.skip_distill:
        result["distill"] = distill(args.out_model, papers, args.dims, args.sif)
        print(json.dumps(result["distill"]), flush=True)

    ids, texts = sub_library(papers, sets, args.distractors)
    result["sub_library"] = len(ids)
    result["rows"] = [
        measure("static (distilled MiniLM)", Embedder(str(args.out_model), max_seq_length=512), texts, ids, sets),
        measure("minilm, 256 tokens", Embedder("minilm", max_seq_length=256), texts, ids, sets),
    ]
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
