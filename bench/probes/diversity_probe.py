"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: does diversifying ranks 2..N of the fused list (maximal marginal relevance) raise hit@5?

    python bench/probes/diversity_probe.py bench/out/drafts-train.json

The top-1 stays; ranks 2..N are picked greedily by (fused score / top score) - lam * (highest cosine
to a paper already listed), over the fused top ``POOL`` (the agents' saved lists fused again by the shipped
fusion, :func:`citefinder.rank.fuse.learned_fusion`), using the library's stored MiniLM vectors.
When the top-1 is wrong its near-duplicates usually are too, so a spread-out top 5 may hold the gold
paper more often. Offline from a drafts_eval output (training part only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import drafts  # noqa: E402

from citefinder.rank.fuse import fuse, learned_fusion  # noqa: E402
from citefinder.types import Hit  # noqa: E402

LAMS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
POOLS = (10, 20)


def mmr(order: list[str], score: dict[str, float], vec: dict[str, np.ndarray], lam: float, pool: int) -> list[str]:
    head, rest = order[:1], order[1:pool]
    top = score[order[0]] or 1.0
    while rest and len(head) < pool:

        def value(d: str) -> float:
            sims = [float(vec[d] @ vec[h]) for h in head if d in vec and h in vec]
            return score[d] / top - lam * (max(sims) if sims else 0.0)

        best = max(rest, key=value)
        head.append(best)
        rest.remove(best)
    return head + order[pool:]


def main() -> int:
    result = json.loads(Path(sys.argv[1]).read_text())
    fusion = learned_fusion("slots")
    ranks: dict[tuple[float, int], list[int | None]] = {(lam, p): [] for lam in LAMS for p in POOLS}
    for d in drafts(result):
        vec: dict[str, np.ndarray] = {}
        for ids, vs in d.library.iter_vectors():
            for i, v in zip(ids, vs, strict=True):
                vec[i] = v / (np.linalg.norm(v) or 1.0)
        for o in d.outcomes:
            if not o["answerable"] or not o["gold"]:
                continue
            fused = dict(fuse({n: [Hit(*h) for h in hits] for n, hits in (o.get("lists") or {}).items()}, fusion))
            order = list(fused)  # best first
            for lam in LAMS:
                for p in POOLS:
                    listed = mmr(order, fused, vec, lam, p) if order else []
                    r = next((i + 1 for i, x in enumerate(listed) if x in o["gold"]), None)
                    ranks[(lam, p)].append(r)
    print("| lam | pool | hit@1 | hit@3 | hit@5 | hit@10 | MRR |\n|---|---|---|---|---|---|---|")
    for (lam, p), rs in ranks.items():
        hits = " | ".join(f"{np.mean([r is not None and r <= k for r in rs]):.3f}" for k in (1, 3, 5, 10))
        mrr = float(np.mean([1 / r if r else 0 for r in rs]))
        print(f"| {lam} | {p} | {hits} | {mrr:.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
