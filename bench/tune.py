"""Tune fusion (per-agent weights and RRF k) and fit the confidence model on TRAINING data only.

    python bench/tune.py fusion bench/out/drafts-train.json                      # citation slots
    python bench/tune.py fusion --kind questions bench/out/autoscholar.json      # free-text search
    python bench/tune.py fusion --dry-run OUT.json                               # a probe: print, write nothing
    python bench/tune.py confidence bench/out/drafts-train.json bench/out/citeme-train.json bench/out/autoscholar.json
    python bench/tune.py report --test bench/out/drafts-test.json bench/out/citeme-test.json
    python bench/tune.py ablate bench/out/drafts-test.json bench/out/citeme-test.json

Inputs are the JSON files written by ``bench/drafts_eval.py`` / ``citefinder eval --out``: every
item keeps each agent's ranked list, so fusion can be re-run offline. ``fusion`` searches weights
by coordinate ascent (grid per agent, then k) maximising the mean over the given files of each
file's MRR of the fused list, and writes ``citefinder/data/fusion.json``. ``confidence`` fuses with
those weights, builds the features of each item's fused top-1 (:mod:`citefinder.rank.calibration`) and
fits a logistic regression (label: the top-1 is a gold paper; unanswerable items are negatives),
writing ``citefinder/data/confidence.json`` with the in-sample reliability table and the threshold
whose picks are >= 75% right on the training items. ``report`` prints AUC and reliability on test files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from common import commands

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "citefinder/data"
WEIGHT_GRID = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0)
K_GRID = (1, 3, 5, 10, 20, 30, 60, 100)
DEPTH = 100
MIN_PRECISION = 0.75


def load(paths: list[Path]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(p.name, json.loads(p.read_text())["outcomes"]) for p in paths]


class Packed:
    """Every item's candidate x agent rank matrix, stacked, for vectorised fusion."""

    def __init__(self, outcomes: list[dict[str, Any]], agents: list[str]) -> None:
        self.agents = agents
        rows, item, gold = [], [], []
        self.n_items = 0
        self.answerable: list[int] = []
        for o in outcomes:
            if not o["answerable"] or not o["gold"]:
                continue
            ranks: dict[str, dict[str, int]] = {}
            for name, hits in (o.get("lists") or {}).items():
                if name in agents:
                    ranks[name] = {d: r for d, r, _ in hits[:DEPTH]}
            docs = sorted({d for r in ranks.values() for d in r})
            if not docs:
                self.n_items += 1
                continue
            for d in docs:
                rows.append([ranks.get(a, {}).get(d, 10**6) for a in agents])
                item.append(self.n_items)
                gold.append(d in o["gold"])
            self.n_items += 1
        self.R = np.asarray(rows, dtype=np.float64).reshape(-1, len(agents))
        self.item = np.asarray(item, dtype=np.int64)
        self.gold = np.asarray(gold, dtype=bool)

    def mrr(self, weights: np.ndarray, k: float) -> float:
        if not len(self.R):
            return 0.0
        score = (weights / (k + self.R)).sum(axis=1)
        # best gold score per item; rank = 1 + rows of that item scoring strictly higher
        gscore = np.full(self.n_items, -1.0)
        np.maximum.at(gscore, self.item[self.gold], score[self.gold])
        higher = score > gscore[self.item]
        ahead = np.bincount(self.item[higher], minlength=self.n_items)
        has_gold = gscore >= 0
        rr = np.where(has_gold & (gscore > 0), 1.0 / (1 + ahead), 0.0)
        return float(rr.sum() / self.n_items)


def cmd_fusion(paths: list[Path], agents: list[str], kind: str = "slots", write: bool = True) -> None:
    sets = [(name, Packed(outs, agents)) for name, outs in load(paths)]

    def objective(w: np.ndarray, k: float) -> float:
        return float(np.mean([p.mrr(w, k) for _, p in sets]))

    w = np.ones(len(agents))
    k = 60.0
    base = objective(w, k)
    print(f"plain RRF k=60, all weights 1: mean MRR {base:.4f} " +
          " ".join(f"{n}={p.mrr(w, k):.4f}" for n, p in sets))
    best_w, best_k, best = _ascend(objective, agents, w, k, base)
    # coordinate ascent is greedy: also start from the shipped weights (new agents at 0) and keep the better
    shipped = json.loads((DATA / "fusion.json").read_text())[kind]
    start = np.asarray([float(shipped["weights"].get(a, 0.0)) for a in agents])
    if start.sum() > 0:
        k0 = float(shipped.get("k", 60))
        w2, k2, v2 = _ascend(objective, agents, start, k0, objective(start, k0))
        print(f"from the shipped weights: mean MRR {v2:.4f} (from all ones: {best:.4f})")
        if v2 > best:
            best_w, best_k, best = w2, k2, v2
    w, k = best_w, best_k
    # normalise so the largest weight is 1 (RRF scores then stay comparable across settings)
    w = w / w.max()
    weights = {a: round(float(x), 3) for a, x in zip(agents, w)}
    per_set = " ".join(f"{n}={p.mrr(w, k):.4f}" for n, p in sets)
    print(f"tuned: k={k:g} weights={weights}: mean MRR {best:.4f} {per_set}")
    out = {"k": int(k), "weights": weights, "default_weight": 0.0,
           "provenance": f"bench/tune.py fusion on {', '.join(n for n, _ in sets)} (training data only): mean MRR "
                         f"{best:.4f} vs {base:.4f} for plain RRF k=60 ({per_set})"}
    if not write:
        print("--dry-run: citefinder/data/fusion.json left as it is")
        return
    shipped_all = json.loads((DATA / "fusion.json").read_text())
    shipped_all[kind] = out
    (DATA / "fusion.json").write_text(json.dumps(shipped_all, indent=1) + "\n")
    print(f"wrote the {kind!r} fusion of {DATA / 'fusion.json'}")


def _ascend(objective: Any, agents: list[str], w: np.ndarray, k: float, best: float) -> tuple[np.ndarray, float, float]:
    """Coordinate ascent (k, then each agent's weight over WEIGHT_GRID), three rounds at most."""
    for _round in range(3):
        improved = False
        for kk in K_GRID:
            v = objective(w, kk)
            if v > best + 1e-6:
                best, k, improved = v, kk, True
        for j in range(len(agents)):
            for x in WEIGHT_GRID:
                trial = w.copy()
                trial[j] = x
                if trial.sum() == 0:
                    continue
                v = objective(trial, k)
                if v > best + 1e-6:
                    best, w, improved = v, trial, True
        if not improved:
            break
    return w, k, best


def top1_rows(outcomes: list[dict[str, Any]], library_size: int,
              groups: list[str] | None = None) -> tuple[list[dict[str, float]], list[int]]:
    """Features of each item's fused top-1 (under the shipped fusion) and whether it is gold."""
    from citefinder.rank.calibration import candidate_features
    from citefinder.rank.fuse import fuse, learned_fusion
    from citefinder.text.slots import MARKER_RE
    from citefinder.types import Candidate, Hit, Paper

    fusions = {kind: learned_fusion(kind) for kind in ("slots", "questions")}
    feats, labels = [], []
    for o in outcomes:
        fusion = fusions["slots" if MARKER_RE.search(o["text"]) else "questions"]
        lists = {name: [Hit(d, r, s) for d, r, s in hits] for name, hits in (o.get("lists") or {}).items()}
        if not lists:
            continue
        fused = fuse(lists, fusion)[:2]
        if not fused:
            continue
        by = {name: {h.doc_id: h for h in hits} for name, hits in lists.items()}
        cands = []
        for rank, (doc, score) in enumerate(fused, start=1):
            c = Candidate(Paper(doc, ""))
            for name, hits in by.items():
                if doc in hits:
                    c = c.with_score(name, hits[doc].rank, hits[doc].score)
            cands.append(c.with_score("fused", rank, score))
        ran = [name for name in lists if "#" not in name]
        size = int(o.get("library_size") or library_size)
        feats.append(candidate_features(cands, 0, ran, size))
        labels.append(int(fused[0][0] in o["gold"]))
        if groups is not None:
            groups.append(o["id"].split(":")[0] if ":" in o["id"] else o["id"])
    return feats, labels


def scenario_rows(outcomes: list[dict[str, Any]],
                  groups: list[str] | None = None) -> tuple[list[dict[str, float]], list[int]]:
    """:func:`top1_rows` of bench/calibration_eval.py outcomes (each with its ``library_size`` and ``draft_slots``):
    the top-1's features, with ``draft_slots`` (what the adjustment of rank/calibration.py reads), and its label."""
    feats: list[dict[str, float]] = []
    labels: list[int] = []
    for o in outcomes:
        f, y = top1_rows([o], int(o["library_size"]), groups)
        for x in f:
            x["draft_slots"] = float(o["draft_slots"])
        feats += f
        labels += y
    return feats, labels


def _rows(paths: list[Path], groups: list[str] | None = None) -> tuple[list[dict[str, float]], list[int]]:
    X: list[dict[str, float]] = []
    y: list[int] = []
    for p in paths:
        data = json.loads(p.read_text())
        sizes = data.get("library_sizes") or {}
        size = int(data.get("library", {}).get("papers", 0))
        outs = data["outcomes"]
        for o in outs:
            o["library_size"] = sizes.get(o["id"].split(":")[0], size)
        f, labels = top1_rows(outs, size, groups)
        X += f
        y += labels
    return X, y


def auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, l in zip(scores, labels) if l]
    neg = [s for s, l in zip(scores, labels) if not l]
    if not pos or not neg:
        return float("nan")
    order = sorted(scores)
    ranks = {}
    for i, s in enumerate(order):
        ranks.setdefault(s, []).append(i + 1)
    avg = {s: sum(r) / len(r) for s, r in ranks.items()}
    return (sum(avg[s] for s in pos) - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def reliability(probs: list[float], labels: list[int], edges=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0001)) -> list[dict[str, Any]]:
    from citefinder.rank.calibration import confidence_words

    rows = []
    for lo, hi in zip(edges, edges[1:]):
        sel = [l for p, l in zip(probs, labels) if lo <= p < hi]
        if sel:
            rows.append({"lo": lo, "hi": min(hi, 1.0), "n": len(sel), "precision": round(sum(sel) / len(sel), 4),
                         "label": f"{lo:.1f}-{min(hi, 1.0):.1f} ({confidence_words(lo)})"})
    return rows


AUC_TIE = 0.002
NOT_FEATURES = ("library", "runner_up")  # read by Calibration.probability, not fit
RUNNER_UP = ("margin", "second_firsts")


def cmd_confidence(paths: list[Path], min_precision: float = MIN_PRECISION) -> None:
    """Fit the logistic confidence; C and the threshold come from out-of-fold predictions (5 folds
    grouped by paper), so the threshold's precision is what unseen drafts can expect."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    groups: list[str] = []
    X, y = _rows(paths, groups)
    names = [n for n in sorted(X[0]) if n not in NOT_FEATURES]
    A = np.asarray([[f[n] for n in names] for f in X])
    # a top-1 with no runner-up has no margin: impute the mean, as Calibration.probability does
    alone = np.asarray([f.get("runner_up", 1.0) == 0.0 for f in X])
    for j, n in enumerate(names):
        if n in RUNNER_UP and alone.any():
            A[alone, j] = A[~alone, j].mean()
    mean, scale = A.mean(axis=0), A.std(axis=0)
    scale[scale == 0] = 1.0
    Z, y_a = (A - mean) / scale, np.asarray(y)
    folds = list(GroupKFold(n_splits=5).split(Z, y_a, np.asarray(groups)))
    fits = []
    for C in (0.01, 0.03, 0.1, 0.3, 1.0):
        oof = np.zeros(len(y_a))
        for tr, te in folds:
            oof[te] = LogisticRegression(C=C, max_iter=2000).fit(Z[tr], y_a[tr]).predict_proba(Z[te])[:, 1]
        a = auc(oof.tolist(), y)
        print(f"C={C}: out-of-fold AUC {a:.4f}")
        fits.append((a, C, oof))
    # the strongest regularisation whose AUC is within AUC_TIE of the best: a weaker one bought no
    # separation and extrapolates further from the training libraries (a vague sentence over the
    # 170-paper sample library scored 0.59 "found" with C=1 at AUC 0.7852, 0.38 with C=0.3 at 0.7848)
    top = max(a for a, _, _ in fits)
    cv_auc, C, oof = next(f for f in fits if f[0] >= top - AUC_TIE)
    model = LogisticRegression(C=C, max_iter=2000).fit(Z, y_a)
    threshold = pick_threshold(oof.tolist(), y, min_precision)
    out = {"features": names, "coef": [round(float(c), 5) for c in model.coef_[0]],
           "intercept": round(float(model.intercept_[0]), 5), "mean": [round(float(m), 6) for m in mean],
           "scale": [round(float(s), 6) for s in scale],
           "provenance": f"bench/tune.py confidence on {', '.join(p.name for p in paths)} ({len(y)} top-1s, "
                         f"{sum(y)} right; training data only); out-of-fold AUC {cv_auc:.3f} (5 folds by paper), "
                         f"C={C}",
           "reliability": reliability(oof.tolist(), y),  # the fill threshold is adjust.threshold (bench/autofill.py)
           # below the smallest training library, rank and agreement count less (rank/calibration.py)
           "min_library": int(min(f["library"] for f in X))}
    (DATA / "confidence.json").write_text(json.dumps(out, indent=1) + "\n")
    print(out["provenance"])
    print(f"threshold for >= {min_precision:.0%} right picks out of fold: {threshold}")
    for r in out["reliability"]:
        print(r)


ADJUST_TERMS = "logit,log_library,log_slots"
SIZE_BANDS = ((0, 50), (51, 150), (151, 10**9))


def cmd_adjust(paths: list[Path], terms: list[str], write: bool = True) -> None:
    """Fit the adjustment of the shipped confidence to the library's size and the draft's length
    (rank/calibration.py ``Calibration.adjusted``) on bench/calibration_eval.py runs of the TRAINING part (and
    bench/drafts_eval.py --traces runs of it: the whole drafts against their own .bib): a logistic model of
    "the top-1 is right" over :func:`~citefinder.rank.calibration.adjust_terms` of the shipped model's
    probability, C chosen by out-of-fold log loss (5 folds by paper). Prints the out-of-fold reliability per
    library-size band before and after, and writes the "adjust" block of citefinder/data/confidence.json."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    sys.path.insert(0, str(ROOT / "bench"))
    from outcomes import load_outcomes

    from citefinder.rank.calibration import adjust_terms, default_calibration

    base = default_calibration()
    raw = json.loads((DATA / "confidence.json").read_text())
    base = type(base).from_dict({**raw, "adjust": {}})
    groups: list[str] = []
    feats, y = scenario_rows(load_outcomes(paths), groups)
    p0 = np.asarray([base.probability(f) for f in feats])
    A = np.asarray([[adjust_terms(p, f)[t] for t in terms] for p, f in zip(p0, feats, strict=True)])
    y_a, g_a = np.asarray(y), np.asarray(groups)
    folds = list(GroupKFold(n_splits=5).split(A, y_a, g_a))
    best = None
    for C in (0.01, 0.1, 1.0, 10.0, 100.0):
        oof = np.zeros(len(y_a))
        for tr, te in folds:
            oof[te] = LogisticRegression(C=C, max_iter=5000).fit(A[tr], y_a[tr]).predict_proba(A[te])[:, 1]
        loss = float(-np.mean(y_a * np.log(np.clip(oof, 1e-6, 1)) + (1 - y_a) * np.log(np.clip(1 - oof, 1e-6, 1))))
        print(f"C={C}: out-of-fold log loss {loss:.4f}, AUC {auc(oof.tolist(), y):.4f}")
        if best is None or loss < best[0] - 1e-4:
            best = (loss, C, oof)
    assert best is not None
    loss, C, oof = best
    base_loss = float(-np.mean(y_a * np.log(np.clip(p0, 1e-6, 1)) + (1 - y_a) * np.log(np.clip(1 - p0, 1e-6, 1))))
    model = LogisticRegression(C=C, max_iter=5000).fit(A, y_a)
    libs = np.asarray([f["library"] for f in feats])
    print(f"{len(y)} top-1s, {sum(y)} right; shipped model's log loss {base_loss:.4f} (AUC {auc(p0.tolist(), y):.4f}),"
          f" adjusted out of fold {loss:.4f} (C={C})")
    for lo, hi in SIZE_BANDS:
        sel = (libs >= lo) & (libs <= hi)
        if sel.any():
            print(f"library {lo}-{hi}: {int(sel.sum())} top-1s, right {y_a[sel].mean():.0%}, mean p shipped "
                  f"{p0[sel].mean():.2f}, adjusted (out of fold) {oof[sel].mean():.2f}")
    words = pick_words(oof, y_a, libs)
    print(f"words out of fold: {words}")
    out = {"terms": terms, "coef": [round(float(c), 5) for c in model.coef_[0]],
           "intercept": round(float(model.intercept_[0]), 5), "max_library": int(libs.max()), "min_library": int(libs.min()),
           "min_slots": int(min(f["draft_slots"] for f in feats)),
           "provenance": f"bench/tune.py adjust on {', '.join(p.name for p in paths)} ({len(y)} top-1s, {sum(y)} "
                         f"right; training part only): out-of-fold log loss {loss:.4f} vs {base_loss:.4f} unadjusted "
                         f"(5 folds by paper), C={C}",
           "threshold": pick_threshold(oof.tolist(), y), "words": words,
           "reliability": [{**r, "label": f"{r['lo']:.1f}-{r['hi']:.1f} ({word(r['lo'], words)})"}
                           for r in reliability(oof.tolist(), y)]}
    for r in out["reliability"]:
        print(r)
    if write:
        raw["adjust"] = out
        (DATA / "confidence.json").write_text(json.dumps(raw, indent=1) + "\n")
        print("wrote the adjustment into citefinder/data/confidence.json")


LIKELY_PRECISION, UNLIKELY_PRECISION = 0.85, 0.15


def word(p: float, words: dict[str, float]) -> str:
    from citefinder.rank.calibration import LIKELY, UNLIKELY, UNSURE

    return LIKELY if p >= words["likely"] else UNSURE if p >= words["unsure"] else UNLIKELY


def pick_words(probs: np.ndarray, labels: np.ndarray, libs: np.ndarray) -> dict[str, float]:
    """The words' cut-offs from out-of-fold probabilities: "likely right" from the lowest 0.05 step whose top-1s
    are right >= LIKELY_PRECISION in every library-size band; "unlikely" below the highest step whose top-1s
    under it are right < UNLIKELY_PRECISION in every band."""
    steps = [x / 100 for x in range(5, 100, 5)]

    def bands(sel_of: Any) -> list[float]:
        out = []
        for lo, hi in SIZE_BANDS:
            sel = sel_of & (libs >= lo) & (libs <= hi)
            if sel.sum() >= 5:
                out.append(float(labels[sel].mean()))
        return out

    likely = next((t for t in steps if min(bands(probs >= t), default=0.0) >= LIKELY_PRECISION), 0.95)
    unsure = max((t for t in steps if max(bands(probs < t), default=1.0) < UNLIKELY_PRECISION), default=0.05)
    return {"likely": likely, "unsure": unsure}


def pick_threshold(probs: list[float], labels: list[int], min_precision: float = MIN_PRECISION) -> float:
    """The lowest threshold (0.05 steps) whose picks are >= ``min_precision`` right in training."""
    for t in [x / 100 for x in range(5, 96, 5)]:
        picked = [l for p, l in zip(probs, labels) if p >= t]
        if picked and sum(picked) / len(picked) >= min_precision:
            return t
    return 0.95


def cmd_report(paths: list[Path]) -> None:
    from citefinder.rank.calibration import default_calibration

    cal = default_calibration()
    for p in paths:
        X, y = _rows([p])
        probs = [cal.probability(f) for f in X]
        print(f"## {p.name}: {len(y)} top-1s, {sum(y)} right, AUC {auc(probs, y):.3f}")
        print("| confidence | slots | share right |\n|---|---|---|")
        for r in reliability(probs, y):
            print(f"| {r['label']} | {r['n']} | {r['precision']:.1%} |")


def _metrics(outcomes: list[dict[str, Any]], fusion: Any, agents: list[str] | None) -> dict[str, float]:
    from citefinder.evaluate.metrics import evaluate_run
    from citefinder.rank.fuse import fuse
    from citefinder.types import Hit

    qrels = {o["id"]: {g: 1 for g in o["gold"]} for o in outcomes if o["answerable"] and o["gold"]}
    run = {}
    for o in outcomes:
        lists = {n: [Hit(d, r, sc) for d, r, sc in hits] for n, hits in (o.get("lists") or {}).items()
                 if agents is None or n in agents}
        run[o["id"]] = {d: 1.0 / i for i, (d, _s) in enumerate(fuse(lists, fusion), start=1)}
    return evaluate_run(qrels, run)


def cmd_ablate(paths: list[Path]) -> None:
    """Each agent alone, the learned fusion, the learned fusion without each agent, and plain RRF."""
    from dataclasses import replace

    from citefinder.rank.fuse import Fusion, learned_fusion
    from citefinder.text.slots import MARKER_RE

    for name, outs in load(paths):
        learned = learned_fusion("slots" if any(MARKER_RE.search(o["text"]) for o in outs[:20]) else "questions")
        agents = sorted({n for o in outs for n in (o.get("lists") or {}) if "#" not in n})
        rows: list[tuple[str, dict[str, float]]] = []
        rows.append(("learned fusion (shipped)", _metrics(outs, learned, None)))
        rows.append(("plain RRF k=60, all agents", _metrics(outs, Fusion("rrf", 60), None)))
        rows.append(("plain RRF k=60, bm25 + dense (before)", _metrics(outs, Fusion("rrf", 60), ["bm25", "dense"])))
        for a in agents:
            rows.append((f"{a} alone", _metrics(outs, Fusion("rrf", 60), [a])))
        for a in agents:
            rows.append((f"learned without {a}", _metrics(outs, replace(learned, weights={**learned.weights, a: 0.0}),
                                                          None)))
        print(f"\n### {name} ({len(outs)} items)\n")
        print("| fusion | hit@1 | hit@5 | hit@10 | MRR | slots |\n|---|---|---|---|---|---|")
        for label, m in rows:
            print(f"| {label} | {m.get('hit@1', 0):.3f} | {m.get('hit@5', 0):.3f} | {m.get('hit@10', 0):.3f} | "
                  f"{m.get('mrr', 0):.3f} | {m.get('queries', 0):.0f} |")


def main() -> None:
    p, sub = commands(__doc__)
    f = sub.add_parser("fusion")
    f.add_argument("files", nargs="+", type=Path)
    f.add_argument("--agents", help="comma-separated (default: every agent with a list in the files)")
    f.add_argument("--kind", choices=("slots", "questions"), default="slots",
                   help="which fusion to write: citation slots (default) or free-text questions (search)")
    f.add_argument("--dry-run", action="store_true",
                   help="tune and print, but do not write the shipped fusion (for probes of new lists)")
    c = sub.add_parser("confidence")
    c.add_argument("files", nargs="+", type=Path)
    c.add_argument("--min-precision", type=float, default=MIN_PRECISION,
                   help="the threshold: the lowest whose out-of-fold picks are this often right")
    a = sub.add_parser("ablate")
    a.add_argument("files", nargs="+", type=Path)
    r = sub.add_parser("report")
    r.add_argument("--test", nargs="+", type=Path, required=True)
    ad = sub.add_parser("adjust", help="fit the confidence's adjustment to library size and draft length")
    ad.add_argument("files", nargs="+", type=Path)
    ad.add_argument("--terms", default=ADJUST_TERMS)
    ad.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    if args.cmd == "fusion":
        agents = args.agents.split(",") if args.agents else sorted(
            {n for _, outs in load(args.files) for o in outs for n in (o.get("lists") or {}) if "#" not in n})
        cmd_fusion(args.files, agents, args.kind, write=not args.dry_run)
    elif args.cmd == "confidence":
        cmd_confidence(args.files, args.min_precision)
    elif args.cmd == "ablate":
        cmd_ablate(args.files)
    elif args.cmd == "adjust":
        cmd_adjust(args.files, args.terms.split(","), write=not args.dry_run)
    else:
        cmd_report(args.test)


if __name__ == "__main__":
    main()
