"""Backs bench/RESULTS.md, section "The hub check and the names change on real drafts (drafts-dev, by the fixed split)".

A confidence model (citefinder/data/confidence.json, or another file) replayed offline on a saved drafts-dev run
(bench/drafts_eval.py output): at its own threshold, how many slots the threshold rule fills and how many of them
are right. The fused top-1 of each slot is rebuilt from the saved agent lists (bench/tune.py top1_rows), so no
library is opened; the slot-to-slot effects of a live fill (co-cited seeds from earlier picks) are as saved.

    python bench/probes/confidence_offline.py bench/out/drafts-test-before.json [--model FILE] [--threshold T]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from tune import _rows, auc  # noqa: E402

from citefinder.rank.calibration import Calibration  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("--model", type=Path, default=ROOT / "citefinder/data/confidence.json")
    p.add_argument("--threshold", type=float)
    args = p.parse_args()
    raw = json.loads(args.model.read_text())
    model = Calibration.from_dict(raw)
    threshold = args.threshold if args.threshold is not None else float(raw.get("threshold", 0.55))
    X, y = _rows([args.run])
    probs = [model.probability(f) for f in X]
    filled = [label for p, label in zip(probs, y, strict=True) if p >= threshold]
    print(f"{args.run.name} with {args.model.name} (threshold {threshold}): {len(y)} top-1s, AUC {auc(probs, y):.4f}; "
          f"filled {len(filled)}, right {sum(filled)}, precision {sum(filled) / max(1, len(filled)):.3f}")


if __name__ == "__main__":
    main()
