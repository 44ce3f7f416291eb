"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: does a gradient-boosted pointwise ranker over the agents' lists beat the learned RRF?

    python bench/probes/ltr_probe.py bench/out/drafts-train.json            # grouped 5-fold CV on training data

Candidates are the union of the agents' top 30 per slot; features are each agent's 1/rank, score
relative to the list's best, raw score and presence, plus the learned-RRF score and rank.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def rows(outcomes, fusion, depth=30):
    from citefinder.rank.fuse import fuse, list_features
    from citefinder.types import Hit

    X, y, groups, items = [], [], [], []
    for n, o in enumerate(outcomes):
        if not o["answerable"] or not o["gold"]:
            continue
        lists = {name: [Hit(d, r, sc) for d, r, sc in hits[:depth]] for name, hits in (o.get("lists") or {}).items()}
        feats = list_features(lists)
        fused = fuse({k: v for k, v in lists.items()}, fusion)
        frank = {d: i for i, (d, _s) in enumerate(fused, start=1)}
        fscore = dict(fused)
        top = fused[0][1] if fused else 1.0
        for name, hits in lists.items():
            for h in hits:
                f = feats[h.doc_id]
                f.setdefault(f"raw:{name.split('#')[0]}", h.score)
        for doc, f in feats.items():
            f = dict(f)
            f["rrf"] = fscore.get(doc, 0.0) / top if top else 0.0
            f["rrf_rr"] = 1.0 / frank.get(doc, 1000)
            f["n_in"] = sum(1 for k in f if k.startswith("in:"))
            X.append(f)
            y.append(int(doc in o["gold"]))
            groups.append(o["id"].split(":")[0])
            items.append(n)
    return X, y, groups, items


def item_metrics(scores, y, items):
    from tune import item_ranks

    ranks = item_ranks(scores, y, items)
    return sum(r == 1 for r in ranks) / len(ranks), sum(1.0 / r for r in ranks if r) / len(ranks)


def main() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GroupKFold

    from citefinder.rank.fuse import learned_fusion

    outcomes = [o for p in sys.argv[1:] for o in json.loads(Path(p).read_text())["outcomes"]]
    Xd, y, groups, items = rows(outcomes, learned_fusion("slots"))
    names = sorted({k for f in Xd for k in f})
    X = np.asarray([[f.get(k, np.nan if k.startswith("raw:") else 0.0) for k in names] for f in Xd])
    y_a, g_a, i_a = np.asarray(y), np.asarray(groups), np.asarray(items)
    folds = list(GroupKFold(n_splits=5).split(X, y_a, g_a))
    rrf_col = names.index("rrf")
    base = [item_metrics(X[te, rrf_col], y_a[te], i_a[te]) for _, te in folds]
    print("learned RRF: hit@1 %.4f MRR %.4f" % tuple(np.mean(base, axis=0)))
    for lr, leaves, iters in ((0.05, 15, 200), (0.05, 31, 300), (0.1, 7, 150), (0.03, 15, 400)):
        res = []
        for tr, te in folds:
            m = HistGradientBoostingClassifier(learning_rate=lr, max_leaf_nodes=leaves, max_iter=iters,
                                               l2_regularization=1.0, random_state=0).fit(X[tr], y_a[tr])
            res.append(item_metrics(m.predict_proba(X[te])[:, 1], y_a[te], i_a[te]))
        print(f"GBDT lr={lr} leaves={leaves} iters={iters}: hit@1 %.4f MRR %.4f" % tuple(np.mean(res, axis=0)))


if __name__ == "__main__":
    main()
