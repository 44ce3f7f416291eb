"""Backs bench/RESULTS.md, section "Import of papers-50k (`bench/bench_import.py`)".

Dense recall vs. embedding speed at max_seq_length 256 and 128 (all-MiniLM-L6-v2).

The sub-library of `bench/probes/sublibrary.py` (every gold paper + seeded distractors) is embedded at both
settings; queries are scored by exact cosine search.
Usage: python bench/probes/seq_length.py [--distractors 2000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sublibrary import DATA, dense_quality, load_papers, load_sets, sub_library

from citefinder.config import offline_environment
from citefinder.library.encoders.embedder import Embedder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--distractors", type=int, default=2000)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    offline_environment()
    sets = load_sets(args.data)
    ids, texts = sub_library(load_papers(args.data), sets, args.distractors)
    print(f"sub-library: {len(ids)} papers ({len(ids) - args.distractors} gold)")
    for seq in (256, 128):
        row = dense_quality(Embedder("minilm", max_seq_length=seq), texts, ids, sets)
        print(f"max_seq_length={seq}: {row.pop('papers_per_s')} papers/s")
        for name, m in row.items():
            print(f"  {name:<12} " + "  ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "queries")
                  + f"  (n={int(m['queries'])})")


if __name__ == "__main__":
    main()
