"""Probe (issue 43 item 4): a per-draft hub correction replayed from saved runs: each slot's fused score of an entry
minus alpha x its mean fused score over the draft's slots (CSLS-like); per paper hit@1 before/after enrichment.

    python bench/tilt_hub.py   # reads bench/out/{train,test}-{plain,enr}.json (bench/RESULTS.md (section 43, tilt))
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from citefinder.rank.fuse import learned_fusion  # noqa: E402

Slot = tuple[str, dict[str, float], set[str]]


def load(path: Path) -> list[Slot]:
    """Each answerable slot's paper, fused scores (the shipped slots fusion) and gold."""
    fusion = learned_fusion()
    out = []
    for o in json.loads(path.read_text())["outcomes"]:
        if not o["answerable"]:
            continue
        scores: dict[str, float] = defaultdict(float)
        for name, hits in (o.get("lists") or {}).items():
            w = fusion.weight(name)
            if not w:
                continue
            best: dict[str, int] = {}
            for doc, rank, _ in hits:
                best[doc] = min(best.get(doc, rank), rank)
            for doc, rank in best.items():
                scores[doc] += w / (fusion.k + rank)
        out.append((o["id"].split(":")[0], dict(scores), set(o["gold"])))
    return out


def hit1(slots: list[Slot], alpha: float) -> dict[str, float]:
    """Per paper hit@1 with each entry's mean fused score over its draft's slots, times alpha, subtracted."""
    total: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    n: dict[str, int] = defaultdict(int)
    for paper, scores, _ in slots:
        n[paper] += 1
        for doc, s in scores.items():
            total[paper][doc] += s
    hits: dict[str, list[bool]] = defaultdict(list)
    for paper, scores, gold in slots:
        adjusted = {d: s - alpha * total[paper][d] / n[paper] for d, s in scores.items()}
        top = max(adjusted, key=lambda d: (adjusted[d], d)) if adjusted else None
        hits[paper].append(top in gold)
    return {p: sum(v) / len(v) for p, v in hits.items()}


def main() -> int:
    for part in ("train", "test"):
        before, after = (load(ROOT / f"bench/out/{part}-{kind}.json") for kind in ("plain", "enr"))
        sizes = {p: sum(1 for s in before if s[0] == p) for p in {s[0] for s in before}}
        n = sum(sizes.values())
        for alpha in (0.0, 0.5, 1.0, 2.0):
            hb, ha = hit1(before, alpha), hit1(after, alpha)
            pooled_b = sum(hb[p] * sizes[p] for p in sizes) / n
            pooled_a = sum(ha[p] * sizes[p] for p in sizes) / n
            losers = {p: round(100 * (ha[p] - hb[p]), 1) for p in sizes if 100 * (ha[p] - hb[p]) < -1}
            print(f"{part} alpha {alpha}: hit@1 {pooled_b:.3f} -> {pooled_a:.3f}; losing > 1 point: {losers}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
