"""The static agents' fusion weights in the literature tier, tuned on drafts-dev's TRAINING slots only (issue 44).

    python bench/literature_eval.py drafts --literature LIB --part train --own-order --removed-only \
        --libraries LIBS --out train.json            # LIB: papers-333k BM25-first + `library embed --static`
    python bench/literature_eval.py drafts ... --part test ... --out test.json
    python bench/static_vec_tune.py train.json test.json --literature LIB --libraries LIBS [--write]

Replays each run's saved agent lists as the tier fuses them (:mod:`bench.literature_fusion`). The shipped fusion
and priors (``citefinder/data/literature.json``, tuned with MiniLM vectors) stay as they are; only the weights of
the static agents are chosen, by coordinate ascent on the training part (objective R@10, ties MRR), then the test
part is scored once. Reported beside: BM25-first (static weights 0) and a full retune of the fusion and priors
on the same training slots (for comparison, not shipped). ``--write`` adds the static weights to literature.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

STATIC = ("static", "static-context", "static-draft")


def main() -> int:
    import literature_fusion as lf

    from citefinder.config import offline_environment
    from citefinder.pipeline.literature import Priors

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("train", type=Path)
    p.add_argument("test", type=Path)
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--libraries", type=Path, required=True)
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    offline_environment()

    runs = {part: json.loads(path.read_text()) for part, path in (("train", args.train), ("test", args.test))}
    agents = sorted({a for r in runs.values() for row in r["rows"] if row["removed"] for a in row["lists"]}
                    | set(STATIC))
    slots = {part: lf.build(path, args.literature, args.libraries, "refs.bib", agents)
             for part, path in (("train", args.train), ("test", args.test))}
    w0, k0, pr0 = lf.shipped(agents)
    static = [agents.index(a) for a in STATIC]
    out: dict = {"agents": agents, "slots": {part: len(s) for part, s in slots.items()}}

    def score(name: str, w: np.ndarray, k: float, pr: Priors) -> None:
        out[name] = {part: lf.evaluate(s, w, k, pr) for part, s in slots.items()}
        print(f"{name}: " + "; ".join(lf.line(part, v) for part, v in out[name].items()), flush=True)

    bm25_first = w0.copy()
    bm25_first[static] = 0.0
    score("BM25-first, shipped fusion and priors", bm25_first, k0, pr0)
    score("with static, untuned weights (0.2)", w0, k0, pr0)

    # coordinate ascent over the static agents' weights alone, the rest as shipped, on training slots only
    w, best = w0.copy(), lf.evaluate(slots["train"], w0, k0, pr0)
    for _round in range(3):
        improved = False
        for j in static:
            for x in lf.WEIGHT_GRID:
                trial = w.copy()
                trial[j] = x
                v = lf.evaluate(slots["train"], trial, k0, pr0)
                if (v[0], v[2]) > (best[0], best[2]):
                    best, w, improved = v, trial, True
        if not improved:
            break
    tuned = {a: float(w[agents.index(a)]) for a in STATIC}
    out["static_weights"] = tuned
    score(f"static weights tuned on train {tuned}", w, k0, pr0)

    # for comparison only: the whole fusion and the priors retuned on the same training slots
    wf, kf, pf = w.copy(), k0, pr0
    for _ in range(2):
        wf, kf = lf.ascend(slots["train"], agents, wf, kf, pf)
        pf = lf.grid_priors(slots["train"], wf, kf, pf)
    out["full_retune"] = {"k": kf, "weights": dict(zip(agents, wf.tolist(), strict=True)), "priors": str(pf)}
    score(f"full retune on train (not shipped): k={kf:g} {out['full_retune']['weights']} {pf}", wf, kf, pf)

    Path(str(args.train).replace(".json", "-static-tune.json")).write_text(json.dumps(out, indent=1, default=str))
    if args.write:
        path = ROOT / "citefinder/data/literature.json"
        data = json.loads(path.read_text())
        data["fusion"]["weights"].update({a: round(x, 3) for a, x in tuned.items()})
        data["fusion"]["static_provenance"] = (
            f"bench/static_vec_tune.py: the static agents' weights alone, the rest as shipped, on {args.train.name} "
            f"({len(slots['train'])} removed slots of drafts-dev's training part, papers-333k BM25-first + static "
            f"vectors): R@10 {out[next(iter(k for k in out if k.startswith('static weights')))]['train'][0]:.3f}")
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
