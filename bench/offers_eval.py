"""Issue 50: the literature's offers measured on drafts-dev's missing-paper slots, and their model fit.

    python bench/offers_eval.py collect --literature /work/lit/papers-333k --out /tmp/offers/slots.json
    python bench/offers_eval.py fit /tmp/offers/slots.json --write citefinder/data/offers.json
    python bench/offers_eval.py score /tmp/offers/slots.json            # the shipped model, train and test

``collect``: every drafts-dev paper (bench/drafts_split.json, both parts) with its own refs.bib as its library
(imported BM25-first into --libraries: the offers read its papers, never their vectors); each slot whose cited
paper papers-333k holds is asked of the literature with that paper taken out of the library (the tier's
``exclude``), the tier's pool of 100 given its evidence (pipeline/offers.py) and kept with which one is the
cited paper (the identity rule, bench/literature_eval.py ``GoldWorks``) and whether any is a paper the library
still holds (by the same rule: must be none).

``fit``: a logistic model of "is the cited paper" on the training part's candidates only; ``score``: the offers
in the model's order on each part: the cited paper among the first 1/3/10, the share of offers shown as *unsure*
or better that are the cited paper, and the order of every slot's offers.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from literature_eval import DATA, ROOT, GoldWorks, kept_out, lit_only


def collect(args: argparse.Namespace) -> dict:
    from citefinder.config import Settings
    from citefinder.evaluate.drafts import key_to_doc_id
    from citefinder.library.identity import dedupe_keys, same_work
    from citefinder.library.store import Library
    from citefinder.pipeline.literature import CONSIDERED, LibraryLiterature, LiteratureTier
    from citefinder.retrieve.agents.draft import draft_context
    from citefinder.text.slots import find_slots

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    contexts = {(r["paper"], r["slot"]): r for r in map(json.loads, (DATA / "drafts-dev/contexts.jsonl")
                                                        .read_text().splitlines())}
    settings = Settings()
    search = LibraryLiterature(settings, args.literature)
    gold_works = GoldWorks(args.literature)
    slots: list[dict] = []
    t0 = time.perf_counter()
    for part in args.parts.split(","):
        for name in split[part]:
            print(f"[{part}] {name} {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
            bib = DATA / "drafts-dev" / name / "refs.bib"
            folder = args.libraries / name
            library = Library.open(Settings(library=folder))
            if library.count() == 0:
                library.import_files([bib], defer_embedding=True)
            doc_of = key_to_doc_id(library, bib)
            held = list(library.iter_papers())
            tier = LiteratureTier(search, library, when="always", shown=CONSIDERED)
            text = (DATA / "drafts-dev" / name / "draft.txt").read_text(encoding="utf-8")
            golds = [json.loads(x) for x in (DATA / "drafts-dev" / name / "gold.jsonl").read_text().splitlines() if x]
            draft = draft_context(text)
            for slot, g in zip(find_slots(text, settings.context_sentences), golds, strict=True):
                own_gold = sorted({doc_of[k] for k in g["keys"] if k in doc_of})
                lit_gold = list((contexts.get((name, g["slot"])) or {}).get("doc_ids") or [])
                if not (own_gold and lit_gold):
                    continue
                if part == "train" and not kept_out(f"{name}:{g['slot']}", args.train_share):
                    continue  # a fixed, seeded share of the training slots (a busy machine's time)
                result = tier.extend(lit_only(slot, draft), top_confidence=0.0, exclude=frozenset(own_gold))
                trace = result.trace("literature")
                ev = trace.details.get("evidence", {}) if trace is not None else {}
                still = [p for p in held if p.doc_id not in own_gold]
                keys = {k: p for p in still for k in dedupe_keys(p)}
                cands = []
                for c in result.literature:
                    gold = gold_works.rank([c], lit_gold) == 1
                    yours = any(k in keys and same_work(k, keys[k], c.paper) for k in dedupe_keys(c.paper))
                    cands.append([c.doc_id, ev.get(c.doc_id, {}), gold, yours])
                slots.append({"id": f"{name}:{g['slot']}", "part": part, "cands": cands})
    return {"literature": str(args.literature), "wall_s": time.perf_counter() - t0, "slots": slots,
            "with_static": search.view.settings.agents}


def _with_slot_features(data: dict) -> dict:
    """The collected evidence with the features read against the slot's other candidates (as the tier adds
    them: ``with_slot_features``); a trace's evidence holds them already when collected after they were added."""
    from citefinder.pipeline.offers import with_slot_features

    for s in data["slots"]:
        feats = with_slot_features([c[1] for c in s["cands"]])
        s["cands"] = [[c[0], f, c[2], c[3]] for c, f in zip(s["cands"], feats, strict=True)]
    return data


def _p(weights: dict, bias: float, feats: dict) -> float:
    z = bias + sum(w * feats.get(k, 0.0) for k, w in weights.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def fit(args: argparse.Namespace) -> dict:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    data = _with_slot_features(json.loads(args.slots.read_text()))
    train = [s for s in data["slots"] if s["part"] == "train"]
    names = sorted({k for s in train for _, f, _, _ in s["cands"] for k in f})
    x = np.array([[f.get(k, 0.0) for k in names] for s in train for _, f, _, _ in s["cands"]])
    y = np.array([g for s in train for _, _, g, _ in s["cands"]], dtype=int)
    model = LogisticRegression(C=args.c, max_iter=5000).fit(x, y)
    weights = {k: round(float(w), 4) for k, w in zip(names, model.coef_[0], strict=True) if abs(w) > 1e-4}
    bias = round(float(model.intercept_[0]), 4)
    out = {"_about": "The literature's offers (citefinder/pipeline/offers.py): p(the slot's cited paper | evidence), "
                     "a logistic model fit by bench/offers_eval.py fit on drafts-dev's training part only.",
           "weights": weights, "bias": bias, "floor": args.floor,
           "provenance": f"bench/offers_eval.py fit C={args.c} on {len(train)} training slots "
                         f"({int(y.sum())} cited of {len(y)} candidates), {data['literature']}"}
    out["scores"] = {part: score_part(data, part, weights, bias, args.floor) for part in ("train", "test")}
    if args.write:
        args.write.write_text(json.dumps({k: v for k, v in out.items() if k != "scores"}, indent=1) + "\n")
    return out


def score_part(data: dict, part: str, weights: dict, bias: float, floor: float, unsure: float | None = None) -> dict:
    from citefinder.rank.calibration import word_cutoffs

    unsure = word_cutoffs()[1] if unsure is None else unsure
    slots = [s for s in data["slots"] if s["part"] == part]
    at = {1: 0, 3: 0, 10: 0}
    shown = right = yours = 0
    for s in slots:
        ranked = sorted(s["cands"], key=lambda c: -_p(weights, bias, c[1]))[:10]
        ps = [_p(weights, bias, c[1]) for c in ranked]
        first = next((n for n, c in enumerate(ranked, 1) if c[2]), None)
        for k in at:
            at[k] += first is not None and first <= k
        shown += sum(p >= unsure for p in ps)
        right += sum(p >= unsure and c[2] for p, c in zip(ps, ranked, strict=True))
        yours += sum(c[3] for c in ranked)
    n = max(1, len(slots))
    return {"slots": len(slots), "R@1": at[1] / n, "R@3": at[3] / n, "R@10": at[10] / n,
            "unsure_or_better_offers": shown, "of_them_cited": right / max(1, shown),
            "slots_with_nothing_above_floor": sum(1 for s in slots if not any(
                _p(weights, bias, c[1]) >= floor for c in s["cands"][:10])) / n,
            "offers_of_papers_held": yours, "pool_R@100": sum(any(c[2] for c in s["cands"]) for s in slots) / n}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("collect", "fit", "score"))
    p.add_argument("slots", type=Path, nargs="?")
    p.add_argument("--literature", type=Path)
    p.add_argument("--libraries", type=Path, default=Path("/tmp/offers/libs"))
    p.add_argument("--out", type=Path)
    p.add_argument("--write", type=Path)
    p.add_argument("--c", type=float, default=1.0)
    p.add_argument("--train-share", type=float, default=1.0, help="collect: this seeded share of training slots")
    p.add_argument("--parts", default="train,test", help="collect: the parts, in order")
    p.add_argument("--floor", type=float, default=0.1)
    args = p.parse_args()
    from citefinder.config import offline_environment

    offline_environment()
    if args.what == "collect":
        result = collect(args)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result))
        print(json.dumps({"slots": len(result["slots"]), "wall_s": result["wall_s"]}))
    elif args.what == "fit":
        print(json.dumps(fit(args), indent=1))
    else:
        from citefinder.pipeline.offers import OfferModel

        m = OfferModel.shipped()
        data = _with_slot_features(json.loads(args.slots.read_text()))
        print(json.dumps({part: score_part(data, part, dict(m.weights), m.bias, m.floor)
                          for part in ("train", "test")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
