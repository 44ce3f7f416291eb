"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: does a draft-wide hubness correction help the fused ranking?

    python bench/probes/hubness_probe.py bench/out/drafts-train.json

In a whole draft every slot is known at once, so a paper that ranks high for many slots (a "hub")
can be marked down, as in CSLS / the inverted softmax: score'(s, p) = score(s, p) - lam * hub(p),
hub(p) the mean of p's top-k scores over the draft's slots. Tried on the shipped learned-RRF fused
scores and on the dense cosines, offline from a drafts_eval output (training part only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import by_draft  # noqa: E402


def main() -> int:
    result = json.loads(Path(sys.argv[1]).read_text())
    fusion = json.loads((ROOT / "citefinder/data/fusion.json").read_text())["slots"]
    weights, k = fusion["weights"], fusion["k"]
    drafts = by_draft(result["outcomes"])

    def matrices(outs: list[dict]) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
        docs = sorted({d for o in outs for a, hits in o["lists"].items() for d, _r, _s in hits})
        pos = {d: j for j, d in enumerate(docs)}
        fused = np.zeros((len(outs), len(docs)))
        dense = np.full((len(outs), len(docs)), np.nan)
        for i, o in enumerate(outs):
            for agent, hits in o["lists"].items():
                for d, r, s in hits:
                    if agent in weights:
                        fused[i, pos[d]] += weights[agent] / (k + r)
                    if agent == "dense":
                        dense[i, pos[d]] = s
        gold = [[pos[g] for g in o["gold"] if g in pos] if o["answerable"] else [] for o in outs]
        return fused, np.nan_to_num(dense, nan=np.nanmin(dense)), gold

    def score(mode: str, lam: float, top: int) -> tuple[float, float, float]:
        ranks = []
        for outs in drafts.values():
            fused, dense, gold = matrices(outs)
            base = fused if mode == "fused" else dense
            hub = -np.sort(-base, axis=0)[:top].mean(axis=0)
            adj = fused - lam * hub
            for i, o in enumerate(outs):
                if not o["answerable"]:
                    continue
                row = np.where(fused[i] > 0, adj[i], -np.inf)
                best = max((row[j] for j in gold[i]), default=-np.inf)
                ranks.append(None if best == -np.inf else 1 + int((row > best).sum()))
        hit1 = np.mean([r == 1 for r in ranks])
        hit5 = np.mean([r is not None and r <= 5 for r in ranks])
        mrr = np.mean([1 / r if r else 0.0 for r in ranks])
        return float(hit1), float(hit5), float(mrr)

    print("shipped fusion: hit@1 %.4f hit@5 %.4f MRR %.4f" % score("fused", 0.0, 1))
    for mode, lams in (("fused", (0.1, 0.25, 0.5, 1.0)), ("dense", (0.05, 0.1, 0.2, 0.4))):
        for top in (1, 3, 5, 10):
            for lam in lams:
                print(f"{mode} hub, top {top}, lam {lam}: hit@1 %.4f hit@5 %.4f MRR %.4f" % score(mode, lam, top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
