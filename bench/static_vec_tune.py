"""The static agents' fusion weights in the literature tier, tuned on drafts-dev's TRAINING slots only (issue 44).

    python bench/literature_eval.py drafts --literature LIB --part train --own-order --removed-only \
        --libraries LIBS --out train.json            # LIB: papers-333k BM25-first + `library embed --static`
    python bench/literature_eval.py drafts ... --part test ... --out test.json
    python bench/static_vec_tune.py prepare train.json --literature LIB --libraries LIBS   # -> train.slots.pkl
    python bench/static_vec_tune.py prepare test.json --literature LIB --libraries LIBS
    python bench/static_vec_tune.py tune train.slots.pkl test.slots.pkl [--write]

(``merge OUT A.json B.json``: one run of a part run in halves, its rows joined.)

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
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

STATIC = ("static", "static-context", "static-draft")


def main() -> int:
    import pickle

    import literature_fusion as lf

    from citefinder.config import offline_environment
    from citefinder.pipeline.literature import Priors

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("merge", "prepare", "tune"))
    p.add_argument("files", type=Path, nargs="+")
    p.add_argument("--literature", type=Path)
    p.add_argument("--libraries", type=Path)
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    offline_environment()

    if args.what == "merge":
        out_path, *parts = args.files
        runs = [json.loads(f.read_text()) for f in parts]
        merged = {**runs[0], "papers": [x for r in runs for x in r["papers"]],
                  "rows": [x for r in runs for x in r["rows"]], "outcomes": [x for r in runs for x in r["outcomes"]],
                  "wall_s": [r["wall_s"] for r in runs], "load": [(r["load_before"], r["load_after"]) for r in runs]}
        out_path.write_text(json.dumps(merged, default=str))
        return 0
    if args.what == "prepare":
        run = json.loads(args.files[0].read_text())
        agents = sorted({a for row in run["rows"] if row["removed"] for a in row["lists"]} | set(STATIC))
        prepared = lf.build(args.files[0], args.literature, args.libraries, "refs.bib", agents)
        args.files[0].with_suffix(".slots.pkl").write_bytes(pickle.dumps((agents, prepared)))
        return 0

    loaded = {part: pickle.loads(f.read_bytes()) for part, f in zip(("train", "test"), args.files, strict=True)}
    agents = sorted(set(loaded["train"][0]) | set(loaded["test"][0]))
    slots = {part: [widen(s, a, agents) for s in sl] for part, (a, sl) in loaded.items()}
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
    for alone in (("static",), STATIC, ("bm25",)):
        w1 = np.array([1.0 if a in alone else 0.0 for a in agents])
        score(f"{'+'.join(alone)} alone, neutral priors", w1, k0, Priors())

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

    tuned_path = Path(str(args.files[0]).replace(".slots.pkl", "-static-tune.json"))
    tuned_path.write_text(json.dumps(out, indent=1, default=str))
    if args.write:
        path = ROOT / "citefinder/data/literature.json"
        data = json.loads(path.read_text())
        data["fusion"]["weights"].update({a: round(x, 3) for a, x in tuned.items()})
        data["fusion"]["static_provenance"] = (
            f"bench/static_vec_tune.py: the static agents' weights alone, the rest as shipped, on {args.files[0].name} "
            f"({len(slots['train'])} removed slots of drafts-dev's training part, papers-333k BM25-first + static "
            f"vectors): R@10 {out[next(iter(k for k in out if k.startswith('static weights')))]['train'][0]:.3f}")
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {path}")
    return 0


def widen(slot: Any, have: list[str], agents: list[str]) -> Any:
    """``slot``'s rank matrix over ``agents`` (an agent its run did not list: never listed)."""
    from dataclasses import replace

    ranks = np.full((slot.ranks.shape[0], len(agents)), 10.0**6)
    for j, a in enumerate(have):
        ranks[:, agents.index(a)] = slot.ranks[:, j]
    return replace(slot, ranks=ranks)


if __name__ == "__main__":
    raise SystemExit(main())
