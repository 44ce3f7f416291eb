"""The auto-fill rule fit so that its precision holds on every paper, not only pooled (issue 43 item 3).

    python bench/autofill.py fit TRAIN.json [TRAIN2.json ...]            # writes the "adjust" block of confidence.json
    python bench/autofill.py fit --dry-run TRAIN.json ...                 # print, write nothing
    python bench/autofill.py report TEST.json [...] [--model FILE]       # per-paper tables: as filled / replayed

Inputs are ``bench/drafts_eval.py`` runs (each slot keeps its agents' lists; ``abstracts`` says which papers of
each draft's library have an abstract) of the TRAINING part, as many conditions as are given (``refs.bib`` as
written, after ``--enrich-from``, with and without ``--memory``): the rule must hold for each.

``fit``: the shipped logistic confidence (rank/calibration.py, unchanged) is recalibrated by a second logistic
model over its log-odds, the library's size, the draft's length and features of the top candidate that transfer
from paper to paper (:data:`citefinder.rank.calibration.TRANSFER`: the margin over the runner-up, the agents'
agreement, a name next to the marker naming the top candidate, whether the top and the runner-up have an
abstract), C chosen by out-of-fold log loss (folds by paper: a paper's every condition in one fold). The
threshold is chosen with risk control over the training papers on the out-of-fold probabilities: the lowest
(most filling) threshold whose fills are right >= ``--pooled`` pooled AND >= ``--per-paper`` on the worst
training paper (each paper of each condition with ``--min-fills`` fills or more counted); the words' cut-offs
come from the same probabilities (*likely right* from the threshold: every auto-fill reads likely right;
*unlikely* below the highest step under which top-1s are right < 15%). Written into ``citefinder/data/
confidence.json`` ("adjust": the recalibration, its threshold, its words), which the selector and the pages read.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from common import commands

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "citefinder/data"
# the terms the shipped fit reads: on drafts-dev's training part the transferable features (margin, agreement,
# abstracts of the top two, names: --terms) did not lower the out-of-fold log loss (0.4875-0.4929 against 0.4808)
TERMS = ("logit", "log_library", "log_slots")
ALL_TERMS = ("logit", "log_library", "log_slots", "margin", "first_share", "second_firsts", "abstract",
             "abstract_diff", "rr_names", "rr_names-weak", "rr_title", "rr_keys", "cousin", "cousin_name", "tell_top",
             "tell_runner", "cousin_untold", "cousin_x_margin", "cousin_x_logit", "untold_x_logit")
POOLED, PER_PAPER, MIN_FILLS = 0.90, 0.85, 5
UNLIKELY_PRECISION = 0.15


def rows(path: Path) -> list[dict[str, Any]]:
    """One row per slot of a bench/drafts_eval.py run: the replayed fused top-1's features (with its and the
    runner-up's abstract), whether it is gold, its paper and condition, and the run's own fill."""
    from citefinder.rank.calibration import candidate_features
    from citefinder.rank.fuse import fuse, learned_fusion
    from citefinder.types import Candidate, Hit, Paper

    data = json.loads(path.read_text())
    # the libraries' papers (bench/cousins.py papers RUN.json writes RUN.papers.json): with them and the slot's
    # sentence the replay reads the cousin features too (rank/relatives.py)
    side = path.with_suffix(".papers.json")
    known: dict[str, dict[str, Any]] = json.loads(side.read_text()) if side.exists() else {}
    fusion = learned_fusion("slots")
    sizes = data.get("library_sizes") or {}
    abstracts = {k: set(v) for k, v in (data.get("abstracts") or {}).items()}
    slots: dict[str, int] = defaultdict(int)
    for o in data["outcomes"]:
        slots[o["id"].split(":")[0]] += 1
    out = []
    for o in data["outcomes"]:
        paper = o["id"].split(":")[0]
        lists = {name: [Hit(d, r, s) for d, r, s in hits] for name, hits in (o.get("lists") or {}).items()}
        fused = fuse(lists, fusion)[:2] if lists else []
        row = {"paper": paper, "run": path.stem, "gold": list(o["gold"]), "selected": o["selected"],
               "top1": fused[0][0] if fused else None, "feats": None}
        if fused:
            by = {name: {h.doc_id: h for h in hits} for name, hits in lists.items()}
            cands = []
            for rank, (doc, score) in enumerate(fused, start=1):
                rec = known.get(paper, {}).get(doc)
                c = Candidate(Paper(doc, rec["title"], tuple(rec["authors"]), rec["year"], abstract=rec["abstract"])
                              if rec else Paper(doc, "", abstract="a" if doc in abstracts.get(paper, ()) else ""))
                for name, hits in by.items():
                    if doc in hits:
                        c = c.with_score(name, hits[doc].rank, hits[doc].score)
                cands.append(c.with_score("fused", rank, score))
            ran = [name for name in lists if "#" not in name]
            row["feats"] = candidate_features(cands, 0, ran, int(sizes.get(paper, 0)), draft_slots=slots[paper],
                                              text=o.get("text", "") if known else "")
        out.append(row)
    return out


def _base():  # noqa: ANN202 - the shipped logistic model without its adjustment
    from citefinder.rank.calibration import Calibration

    raw = json.loads((DATA / "confidence.json").read_text())
    return Calibration.from_dict({**raw, "adjust": {}}), raw


def design(rs: list[dict[str, Any]], terms: tuple[str, ...]) -> np.ndarray:
    from citefinder.rank.calibration import adjust_terms

    base, _ = _base()
    return np.asarray([[adjust_terms(base.probability(r["feats"]), r["feats"])[t] for t in terms] for r in rs])


def risk_threshold(probs: np.ndarray, right: np.ndarray, units: list[str], pooled: float, per_paper: float,
                   min_fills: int) -> tuple[float, dict[str, Any]]:
    """The lowest threshold (0.01 steps) whose fills are right >= ``pooled`` over all and >= ``per_paper`` on every
    unit (a paper in one condition) with ``min_fills`` fills or more; and what it gives."""
    u = np.asarray(units)
    for t in [x / 100 for x in range(20, 100)]:
        fill = probs >= t
        if not fill.any():
            continue
        prec = float(right[fill].mean())
        worst, worst_unit = 1.0, ""
        for unit in sorted(set(units)):
            sel = fill & (u == unit)
            if sel.sum() >= min_fills and right[sel].mean() < worst:
                worst, worst_unit = float(right[sel].mean()), unit
        if prec >= pooled and worst >= per_paper:
            return t, {"pooled": round(prec, 4), "worst": round(worst, 4), "worst_unit": worst_unit,
                       "filled": int(fill.sum()), "right": int(right[fill].sum()), "slots": len(probs)}
    return 0.99, {}


def cmd_fit(paths: list[Path], pooled: float, per_paper: float, min_fills: int, write: bool,
            terms: tuple[str, ...] = TERMS, keep: float | None = None) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    rs = [r for p in paths for r in rows(p) if r["feats"] is not None]
    y = np.asarray([int(r["top1"] in r["gold"]) for r in rs])
    groups = np.asarray([r["paper"] for r in rs])
    A = design(rs, terms)
    mean, scale = A.mean(axis=0), A.std(axis=0)
    scale[scale == 0] = 1.0
    Z = (A - mean) / scale
    folds = list(GroupKFold(n_splits=min(5, len(set(groups)))).split(Z, y, groups))
    best = None
    for C in (0.01, 0.03, 0.1, 0.3, 1.0, 10.0):
        oof = np.zeros(len(y))
        for tr, te in folds:
            oof[te] = LogisticRegression(C=C, max_iter=5000).fit(Z[tr], y[tr]).predict_proba(Z[te])[:, 1]
        loss = float(-np.mean(y * np.log(np.clip(oof, 1e-6, 1)) + (1 - y) * np.log(np.clip(1 - oof, 1e-6, 1))))
        print(f"C={C}: out-of-fold log loss {loss:.4f}")
        if best is None or loss < best[0] - 1e-4:
            best = (loss, C, oof)
    assert best is not None
    loss, C, oof = best
    base, raw = _base()
    p0 = np.asarray([base.probability(r["feats"]) for r in rs])
    base_loss = float(-np.mean(y * np.log(np.clip(p0, 1e-6, 1)) + (1 - y) * np.log(np.clip(1 - p0, 1e-6, 1))))
    model = LogisticRegression(C=C, max_iter=5000).fit(Z, y)
    units = [f"{r['run']}/{r['paper']}" for r in rs]
    t, got = risk_threshold(oof, y, units, pooled, per_paper, min_fills)
    print(f"{len(y)} slots, {int(y.sum())} top-1s right; log loss {base_loss:.4f} shipped unadjusted, "
          f"{loss:.4f} out of fold (C={C}); threshold {t} out of fold: {got}")
    if keep is not None:  # the threshold kept (the risk control's own is printed above and kept in the provenance)
        fill = oof >= keep
        print(f"kept threshold {keep}: out of fold {int(fill.sum())} fills, {int(y[fill].sum())} right")
        got = {"risk_controlled": t, **got, f"at_{keep}": {"filled": int(fill.sum()), "right": int(y[fill].sum())}}
        t = keep
    unsure = max((s / 100 for s in range(5, 100, 5) if (oof < s / 100).any() and y[oof < s / 100].mean()
                  < UNLIKELY_PRECISION), default=0.05)
    words = {"likely": t, "unsure": min(unsure, t)}
    # the coefficients on the raw terms (what Calibration.adjusted reads): fold the standardisation in
    coef = model.coef_[0] / scale
    intercept = float(model.intercept_[0] - (model.coef_[0] * mean / scale).sum())
    feats = [r["feats"] for r in rs]
    from citefinder.rank.calibration import LIKELY, UNLIKELY, UNSURE

    def label(lo: float) -> str:
        return LIKELY if lo >= words["likely"] else UNSURE if lo >= words["unsure"] else UNLIKELY

    edges = sorted({0.0, words["unsure"], 0.4, words["likely"], 1.0001})
    reliability = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        sel = (oof >= lo) & (oof < hi)
        if sel.any():
            reliability.append({"lo": lo, "hi": min(hi, 1.0), "n": int(sel.sum()),
                                "precision": round(float(y[sel].mean()), 4),
                                "label": f"{lo:.2f}-{min(hi, 1.0):.2f} ({label(lo)})"})
    names = ", ".join(p.name for p in paths)
    adjust = {"terms": list(terms), "coef": [round(float(c), 5) for c in coef], "intercept": round(intercept, 5),
              "max_library": int(max(f["library"] for f in feats)),
              "min_library": int(min(f["library"] for f in feats)),
              "min_slots": int(min(f["draft_slots"] for f in feats)),  # shorter drafts: outside what it was fit on
              "provenance": f"bench/autofill.py fit on {names} ({len(y)} slots, {int(y.sum())} top-1s right; "
                            f"drafts-dev training part only): out-of-fold log loss {loss:.4f} vs {base_loss:.4f} "
                            f"unadjusted (5 folds by paper), C={C}; threshold {t}: out of fold {got}; risk control: "
                            f">= {pooled:.0%} pooled and >= {per_paper:.0%} on every training paper with >= "
                            f"{min_fills} fills",
              "threshold": t, "words": words, "reliability": reliability}
    for r in reliability:
        print(r)
    if write:
        raw["adjust"] = adjust
        (DATA / "confidence.json").write_text(json.dumps(raw, indent=1) + "\n")
        print("wrote the adjustment, its threshold and its words into citefinder/data/confidence.json")


def cmd_report(paths: list[Path], model: Path | None, threshold: float | None) -> None:
    """Per paper and pooled: the run as it filled (live), and the top-1 replayed under ``model`` (default the
    shipped confidence.json) filled at its threshold."""
    from citefinder.rank.calibration import Calibration

    raw = json.loads((model or DATA / "confidence.json").read_text())
    cal = Calibration.from_dict(raw)
    t = threshold if threshold is not None else float((raw.get("adjust") or {}).get("threshold", 0.55))
    likely = float(((raw.get("adjust") or {}).get("words") or {}).get("likely", 0.7))
    for path in paths:
        rs = rows(path)
        print(f"\n### {path.name}: live fills vs the replayed rule (threshold {t}, likely right from {likely})\n")
        print("| paper | slots | live: filled / right (precision) | replayed: filled / right (precision) | "
              "likely right: n (right) |")
        print("|---|---|---|---|---|")
        by: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rs:
            by[r["paper"]].append(r)
        for paper in sorted(by) + ["all"]:
            group = rs if paper == "all" else by[paper]
            live = [r for r in group if r["selected"]]
            live_right = sum(r["selected"] in r["gold"] for r in live)
            ps = [(cal.probability(r["feats"]) if r["feats"] else 0.0, r) for r in group]
            fills = [r for p, r in ps if p >= t]
            right = sum(r["top1"] in r["gold"] for r in fills)
            lk = [r for p, r in ps if p >= likely]
            lk_right = sum(r["top1"] in r["gold"] for r in lk)
            name = f"**{paper}**" if paper == "all" else paper
            print(f"| {name} | {len(group)} | {len(live)} / {live_right} ({_pct(live_right, len(live))}) | "
                  f"{len(fills)} / {right} ({_pct(right, len(fills))}) | {len(lk)} ({_pct(lk_right, len(lk))}) |")
        n = len(rs)
        live_right = sum(1 for r in rs if r["selected"] and r["selected"] in r["gold"])
        replayed = sum(1 for r in rs if r["feats"] and cal.probability(r["feats"]) >= t and r["top1"] in r["gold"])
        print(f"\ncorrect fills, share of slots: live {live_right / n:.1%}, replayed {replayed / n:.1%}")


def _pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "-"


def main() -> int:
    p, sub = commands(__doc__)
    f = sub.add_parser("fit")
    f.add_argument("files", nargs="+", type=Path)
    f.add_argument("--pooled", type=float, default=POOLED)
    f.add_argument("--per-paper", type=float, default=PER_PAPER)
    f.add_argument("--min-fills", type=int, default=MIN_FILLS)
    f.add_argument("--dry-run", action="store_true")
    f.add_argument("--keep-threshold", type=float, help="ship this threshold instead of the risk control's (printed "
                   "and recorded in the provenance)")
    f.add_argument("--terms", default=",".join(TERMS), help=f"comma-separated, of {', '.join(ALL_TERMS)}")
    r = sub.add_parser("report")
    r.add_argument("files", nargs="+", type=Path)
    r.add_argument("--model", type=Path)
    r.add_argument("--threshold", type=float)
    args = p.parse_args()
    if args.cmd == "fit":
        cmd_fit(args.files, args.pooled, args.per_paper, args.min_fills, write=not args.dry_run,
                terms=tuple(args.terms.split(",")), keep=args.keep_threshold)
    else:
        cmd_report(args.files, args.model, args.threshold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
