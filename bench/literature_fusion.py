"""The literature tier's fusion and priors, replayed offline and tuned together on TRAINING slots only.

    python bench/literature_fusion.py tune bench/out/litvec-train.json --literature LIB [--write]
    python bench/literature_fusion.py score bench/out/litvec-test.json --literature LIB [--fusion FILE.json]

Input: ``bench/literature_eval.py drafts --own-order`` (each removed slot's literature agent lists, the literature's
own fused order, the user's papers left out). Every document any agent listed gets what the tier reads of it: is
it the user's (the same work, :meth:`~citefinder.pipeline.priors.OwnPapers.holds`) and the priors' features
(:meth:`~citefinder.pipeline.priors.OwnPapers.features`) over the slot's library without the removed entries. A
setting (fusion ``k`` and weights, the priors) is then replayed as the tier runs: weighted RRF over the lists
(:func:`citefinder.rank.fuse.rrf`'s order and ties), the first ``fused_top_n`` kept, the user's own papers
dropped, the priors' order (:func:`~citefinder.pipeline.literature.prior_order`): R@1 / R@10 / MRR of the gold.
``check`` first: the replay of the run's own setting gives the run's own order.

``tune``: coordinate ascent over the fusion (k, each agent's weight) with the priors fixed, then the priors' grid
with the fusion fixed, twice; objective R@10, ties MRR. ``--write`` puts the fusion and the priors into
``citefinder/data/literature.json`` with what they reached. ``score``: a run scored under the shipped
setting, the run's own and the literature's own order (neutral priors), for the test part.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CITEFINDER_SHARED_DATA", ROOT.parent / "shared/data"))  # as tests/conftest.py
WEIGHT_GRID = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
K_GRID = (1, 3, 5, 10, 20, 30, 60)
# "newer" stays >= 0.2: a paper newer than all the user's is shown lower, never pushed out of view (a library
# that lags the draft is the user's right; drafts-dev's libraries are the finished papers' .bib)
PRIOR_GRID = {"k": (1.0, 3.0, 10.0), "authors": (0.0, 0.5, 1.0), "topic": (0.0, 0.5, 1.0, 2.0),
              "newer": (1.0, 0.5, 0.2), "slack": (0, 1), "cited": (0.0, 0.25, 0.5, 1.0, 2.0, 4.0),
              "saturate": (0.0, 10.0, 100.0)}
KEEP = 50  # the literature pipeline's fused_top_n (max(fused_top_n, rerank_top_n) with the default settings)


@dataclass
class Slot:
    """One removed slot: its documents' ranks per agent (10**6: not listed), best single rank, doc_id order key,
    whether each is the user's, the priors' features, and which are gold."""

    id: str
    ranks: np.ndarray  # (docs, agents)
    best: np.ndarray
    tie: np.ndarray  # position of the doc_id in sorted order (rrf's last tie-break)
    yours: np.ndarray
    shared: np.ndarray
    topic: np.ndarray
    newer: np.ndarray
    cited: np.ndarray  # how often the literature cites each (its own count, else the literature memory's)
    gold: np.ndarray
    doc_ids: list[str]


def build(result_path: Path, literature: Path, libraries: Path, bib: str, agents: list[str]) -> list[Slot]:
    from citefinder.config import Settings
    from citefinder.evaluate.drafts import open_draft_library
    from citefinder.library.readonly import ReadOnlyLibrary
    from citefinder.pipeline.cited import memory_counts
    from citefinder.pipeline.priors import OwnPapers

    result = json.loads(result_path.read_text())
    view = ReadOnlyLibrary.open(literature, Settings())
    counts = memory_counts(view)
    by_paper: dict[str, list[dict]] = {}
    for row in result["rows"]:
        if row["removed"]:
            by_paper.setdefault(row["id"].split(":")[0], []).append(row)
    slots: list[Slot] = []
    for name, rows in by_paper.items():
        print(name, len(rows), file=sys.stderr, flush=True)
        library = open_draft_library(Settings(), DATA / "drafts-dev" / name / bib,
                                     libraries / f"{name}-{Path(bib).stem}")
        papers = list(library.iter_papers())
        for row in rows:
            own = OwnPapers([p for p in papers if p.doc_id not in row["own_gold"]], library)
            lists = {a: {d: r for d, r, _ in hits} for a, hits in row["lists"].items() if a in agents}
            docs = sorted({d for ranks in lists.values() for d in ranks})
            found = {p.doc_id: p for p in view.get(docs)}
            docs = [d for d in docs if d in found]
            feats = [own.features(found[d]) for d in docs]
            ranks = np.array([[lists.get(a, {}).get(d, 10**6) for a in agents] for d in docs], dtype=np.float64)
            slots.append(Slot(row["id"], ranks.reshape(len(docs), len(agents)),
                              ranks.min(axis=1) if len(docs) else np.zeros(0), np.arange(len(docs)),
                              np.array([own.holds(found[d]) for d in docs], dtype=bool),
                              np.array([f["shared"] for f in feats]), np.array([f["topic"] for f in feats]),
                              np.array([f["newer"] for f in feats]),
                              np.array([float(found[d].cited_by if found[d].cited_by is not None
                                              else counts.get(d, 0)) for d in docs]),
                              np.array([d in row["lit_gold"] for d in docs]),
                              docs))
    return slots


def order(slot: Slot, weights: np.ndarray, k: float, priors: Any) -> np.ndarray:
    """The slot's documents as the tier shows them (indexes into the slot's arrays)."""
    if not len(slot.doc_ids):
        return np.zeros(0, dtype=np.int64)
    listed = slot.ranks < 10**6
    score = (np.where(listed, weights / (k + slot.ranks), 0.0)).sum(axis=1)
    fused = np.lexsort((slot.tie, slot.best, -score))
    fused = fused[score[fused] > 0][:KEEP]
    kept = fused[~slot.yours[fused]]
    if priors.neutral or not len(kept):
        return kept
    best_topic = float(slot.topic[kept].max()) or 1.0
    value = 1.0 / (np.arange(len(kept)) + 1 + priors.k) * (1 + priors.authors * slot.shared[kept])
    value = value * (1 + priors.topic * slot.topic[kept] / best_topic)
    value = value * np.where(slot.newer[kept] > priors.slack, priors.newer, 1.0)
    best_cited = float(np.log1p(max(float(slot.cited[kept].max()), priors.saturate))) or 1.0
    value = value * (1 + priors.cited * np.log1p(slot.cited[kept]) / best_cited)
    return kept[np.lexsort((np.arange(len(kept)), -value))]


def evaluate(slots: list[Slot], weights: np.ndarray, k: float, priors: Any) -> tuple[float, float, float]:
    r1 = r10 = mrr = 0.0
    for slot in slots:
        shown = order(slot, weights, k, priors)
        hit = np.flatnonzero(slot.gold[shown])
        if len(hit):
            rank = int(hit[0]) + 1
            r1 += rank == 1
            r10 += rank <= 10
            mrr += 1.0 / rank
    n = max(1, len(slots))
    return r10 / n, r1 / n, mrr / n


def check(result_path: Path, slots: list[Slot], weights: np.ndarray, k: float, priors: Any) -> float:
    """Share of slots whose replayed order (first 10) equals the run's own literature order."""
    rows = {r["id"]: r for r in json.loads(result_path.read_text())["rows"] if r["removed"]}
    same = sum(1 for s in slots if [s.doc_ids[i] for i in order(s, weights, k, priors)[:10]]
               == rows[s.id]["top10_ids"])
    return same / max(1, len(slots))


def ascend(slots: list[Slot], agents: list[str], w: np.ndarray, k: float, priors: Any,
           free: set[str] | None = None, fix_k: bool = False) -> tuple[np.ndarray, float]:
    """Coordinate ascent over k and the weights of the agents in ``free`` (every agent when None)."""
    best = evaluate(slots, w, k, priors)
    for _round in range(3):
        improved = False
        for kk in () if fix_k else K_GRID:
            v = evaluate(slots, w, kk, priors)
            if (v[0], v[2]) > (best[0], best[2]) and v != best:
                best, k, improved = v, kk, True
        for j in range(len(agents)):
            if free is not None and agents[j] not in free:
                continue
            for x in WEIGHT_GRID:
                trial = w.copy()
                trial[j] = x
                if trial.sum() == 0:
                    continue
                v = evaluate(slots, trial, k, priors)
                if (v[0], v[2]) > (best[0], best[2]):
                    best, w, improved = v, trial, True
        if not improved:
            break
    return w, k


def grid_priors(slots: list[Slot], w: np.ndarray, k: float, start: Any, free: set[str] | None = None) -> Any:
    """The best priors over the grid of the fields in ``free`` (every field when None; the others kept)."""
    from citefinder.pipeline.priors import Priors

    best, best_p = evaluate(slots, w, k, start), start
    grid = {f: (v if free is None or f in free else (getattr(start, f),)) for f, v in PRIOR_GRID.items()}
    for values in itertools.product(*grid.values()):
        p = Priors(**dict(zip(grid, values, strict=True)))
        v = evaluate(slots, w, k, p)
        if (v[0], v[2]) > (best[0], best[2]):
            best, best_p = v, p
    return best_p


def setting_of(result: dict, agents: list[str]) -> tuple[np.ndarray, float]:
    fusion = result["literature_fusion"]
    default = float(fusion.get("default_weight", 0.0))
    return np.array([float(fusion["weights"].get(a, default)) for a in agents]), float(fusion["k"])


def shipped(agents: list[str]) -> tuple[np.ndarray, float, Any]:
    from citefinder.config import Settings
    from citefinder.pipeline.literature import literature_fusion, literature_settings
    from citefinder.pipeline.priors import Priors

    fusion = literature_fusion(literature_settings(Settings()))
    return (np.array([fusion.weight(a) for a in agents]), float(fusion.k), Priors.shipped())


def line(name: str, v: tuple[float, float, float]) -> str:
    return f"{name}: R@10 {v[0]:.3f} R@1 {v[1]:.3f} MRR {v[2]:.3f}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("tune", "score"))
    p.add_argument("result", type=Path)
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--libraries", type=Path, default=ROOT / "bench/out/drafts-libs")
    p.add_argument("--bib", default="refs.bib")
    p.add_argument("--setting", type=Path, help="a literature.json whose fusion and priors are scored too")
    p.add_argument("--write", action="store_true")
    p.add_argument("--agents", help="tune only these agents' weights (comma-separated; the others and k are kept)")
    p.add_argument("--priors", help="tune only these priors (comma-separated; the others are kept)")
    args = p.parse_args()

    from citefinder.config import offline_environment
    from citefinder.pipeline.priors import Priors

    offline_environment()
    result = json.loads(args.result.read_text())
    agents = sorted({a for r in result["rows"] if r["removed"] for a in r["lists"]})
    slots = build(args.result, args.literature, args.libraries, args.bib, agents)
    run_w, run_k = setting_of(result, agents)
    run_p = Priors(**{k: v for k, v in result["priors"].items() if k != "provenance"})
    print(f"{len(slots)} removed slots, agents {agents}; the replay of the run's own setting matches its top 10 on "
          f"{check(args.result, slots, run_w, run_k, run_p):.3f} of the slots")
    out: dict[str, Any] = {"slots": len(slots), "agents": agents}
    for name, (w, k, pr) in {"literature's own order (run fusion, neutral priors)": (run_w, run_k, Priors()),
                             "run fusion, shipped priors": (run_w, run_k, Priors.shipped()),
                             "shipped fusion and priors": shipped(agents)}.items():
        out[name] = evaluate(slots, w, k, pr)
        print(line(name, out[name]))
    if args.setting:
        data = json.loads(args.setting.read_text())
        fusion = data.get("fusion") or {}
        w = np.array([float(fusion.get("weights", {}).get(a, run_w[j])) for j, a in enumerate(agents)])
        pr = Priors(**{k: v for k, v in data["priors"].items() if k != "provenance"})
        out[str(args.setting)] = evaluate(slots, w, float(fusion.get("k", run_k)), pr)
        print(line(str(args.setting), out[str(args.setting)]))
    if args.what == "tune":
        w, k, pr = run_w.copy(), run_k, Priors.shipped()
        free_agents = set(args.agents.split(",")) if args.agents else None
        free_priors = set(args.priors.split(",")) if args.priors else None
        w, k = shipped(agents)[:2] if free_agents else (w, k)
        for _ in range(2):
            w, k = ascend(slots, agents, w, k, pr, free_agents, fix_k=free_agents is not None)
            pr = grid_priors(slots, w, k, pr, free_priors)
            print(line(f"k={k:g} {dict(zip(agents, w.tolist(), strict=True))} {pr}", evaluate(slots, w, k, pr)), flush=True)
        best = evaluate(slots, w, k, pr)
        for name in ("authors", "topic", "newer", "cited"):
            alone = Priors(k=pr.k, slack=pr.slack, saturate=pr.saturate, **{name: getattr(pr, name)})
            print(line(f"  {name} alone", evaluate(slots, w, k, alone)))
        print(line("  tuned fusion, neutral priors", evaluate(slots, w, k, Priors())))
        out["tuned"] = {"k": k, "weights": dict(zip(agents, w.tolist(), strict=True)), "priors": asdict(pr), "figures": best}
        if args.write:
            own = out["literature's own order (run fusion, neutral priors)"]
            write(args.result, len(slots), agents, w, k, pr, best, own)
    Path(str(args.result).replace(".json", f"-{args.what}.json")).write_text(json.dumps(out, indent=1, default=str))
    return 0


def write(result: Path, n: int, agents: list[str], w: np.ndarray, k: float, pr: Any, best: tuple, base: tuple) -> None:
    path = ROOT / "citefinder/data/literature.json"
    data = json.loads(path.read_text())
    kept = (data.get("fusion") or {}).get("weights", {})  # agents the run did not list (the dense ones BM25-first)
    data["fusion"] = {"k": int(k), "weights": {**kept, **{a: round(float(x), 3) for a, x in zip(agents, w, strict=True)}},
                      "provenance": f"bench/literature_fusion.py tune on {result.name} ({n} removed slots of "
                                    "drafts-dev's "
                                    "training part), with the priors below"}
    data["priors"] = {**{f: getattr(pr, f) for f in PRIOR_GRID}, "provenance": (
        f"bench/literature_fusion.py tune on {result.name} ({n} removed slots of drafts-dev's training part): R@10 "
        f"{best[0]:.3f} / R@1 {best[1]:.3f} / MRR {best[2]:.3f} against {base[0]:.3f} / {base[1]:.3f} / {base[2]:.3f} "
        "in the literature's own order")}
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    raise SystemExit(main())
