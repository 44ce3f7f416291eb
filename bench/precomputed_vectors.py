"""Store dense vectors computed on another machine (a GPU: bench/gpu/run333.py) into a library through
``library embed``'s own code path: the queue and the store move together, the exact-search index is rebuilt as
after any embed; only the encoder is replaced by a lookup of the given vectors by the paper's embedding text.

    python bench/precomputed_vectors.py --library LIBCOPY --texts part0.jsonl part1.jsonl part2.jsonl \
        --vectors DIR   # DIR: q*.npy (int8 rows, in the texts' order) + scales.npy (float32, one per row)

The texts files are JSON lines ``[doc_id, embedding_text]`` in the vectors' row order (bench/gpu/prep333.py). Rows
are dequantized and set to unit length; each stored paper takes the vector of its doc_id (the dump's text of it),
and a paper with none stops the run (the library's embedder would have to run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def load(texts: list[Path], vectors: Path) -> dict[str, np.ndarray]:
    """doc_id -> its unit vector (the texts files give the rows' doc_ids, in order)."""
    parts = sorted(vectors.glob("q*.npy"), key=lambda p: int(p.stem[1:]))
    q = np.concatenate([np.load(p) for p in parts]).astype(np.float32)
    scales = np.load(vectors / "scales.npy").astype(np.float32)
    matrix = q * scales[:, None]
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    by_id: dict[str, np.ndarray] = {}
    row = 0
    for path in texts:
        with open(path, encoding="utf-8") as f:
            for line in f:
                doc_id, _text = json.loads(line)
                by_id[doc_id] = matrix[row]
                row += 1
    if row != len(matrix):
        sys.exit(f"{row} texts but {len(matrix)} vectors")
    return by_id


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, required=True)
    ap.add_argument("--texts", type=Path, nargs="+", required=True)
    ap.add_argument("--vectors", type=Path, required=True)
    args = ap.parse_args()
    from citefinder.config import Settings, offline_environment
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.library.store import Library

    offline_environment()
    t0 = time.perf_counter()
    by_id = load(args.texts, args.vectors)
    settings = Settings(library=args.library)
    # the vectors were computed from the dump's records; the library embeds its stored papers' text (cleaned on
    # import), so each stored text is mapped to its paper's vector by doc_id (a text that was cleaned differently
    # gets the vector of the record it came from: measured below, how many)
    from citefinder.library.records import embedding_text
    from citefinder.library.reference import stored_papers

    by_text: dict[str, np.ndarray] = {}
    for paper in stored_papers(args.library):
        if paper.doc_id in by_id:
            by_text[embedding_text(paper)] = by_id[paper.doc_id]
    print(f"{len(by_id)} vectors read, {len(by_text)} stored texts mapped in {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)

    class Lookup(Embedder):
        def encode(self, texts, *a, **k):  # type: ignore[no-untyped-def, override]
            missing = [t for t in texts if t not in by_text]
            if missing:
                raise KeyError(f"no vector for {missing[0][:80]!r}")
            return np.stack([by_text[t] for t in texts]).astype(np.float32)

    lib = Library.open(settings, embedder=Lookup("minilm"))
    t1 = time.perf_counter()
    n = lib.embed_pending(progress=lambda done, total: print(f"\r{done}/{total}", end="", file=sys.stderr))
    print(f"\nembedded {n} in {time.perf_counter() - t1:.0f} s; {lib.embedded_count()} of {lib.count()} have vectors",
          file=sys.stderr)


if __name__ == "__main__":
    main()
