"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: would an mpnet agent (exact cosine with all-mpnet-base-v2 over a small library) help?

    python bench/probes/mpnet_probe.py bench/out/drafts-train.json bench/out/drafts-train+mpnet.json

Reads a drafts_eval output, embeds every paper of each draft's library with mpnet (cached under
bench/out/mpnet-cache/), embeds each slot's dense query, and writes a copy of the output with an
extra "mpnet" ranked list per slot, so ``bench/tune.py`` can fuse and ablate it offline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import by_draft, drafts  # noqa: E402


def main() -> int:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    from citefinder.config import offline_environment
    from citefinder.library.embedder import MPNET, Embedder
    from citefinder.library.records import embedding_text
    from citefinder.retrieve.agents.dense import dense_text

    offline_environment()
    result = json.loads(src.read_text())
    mp = Embedder(MPNET, 256, 16)
    cache = ROOT / "bench/out/mpnet-cache"
    cache.mkdir(parents=True, exist_ok=True)
    groups = by_draft(result["outcomes"])
    for n, draft in enumerate(drafts(result), start=1):
        papers = list(draft.library.iter_papers())
        ids = [p.doc_id for p in papers]
        f = cache / f"{draft.name}.npz"
        if f.exists() and list(np.load(f)["ids"]) == ids:
            docs = np.load(f)["vecs"]
        else:
            docs = np.asarray(mp.encode([embedding_text(p) for p in papers]), dtype=np.float32)
            np.savez(f, ids=np.array(ids), vecs=docs)
        queries = [dense_text(r.query) for r in draft.fill()]
        qv = np.asarray(mp.encode(queries), dtype=np.float32)
        sims = qv @ docs.T
        for o, row in zip(draft.outcomes, sims, strict=True):
            order = np.argsort(-row)[:100]
            o["lists"]["mpnet"] = [[ids[i], r, round(float(row[i]), 5)] for r, i in enumerate(order, start=1)]
        print(f"[{n}/{len(groups)}] {draft.name}: {len(papers)} papers, {len(draft.outcomes)} slots",
              file=sys.stderr, flush=True)
    dst.write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
