"""Measure `citefinder check` on real drafts (drafts-dev), and fit its model on the TRAINING part only.

    python bench/check_eval.py collect --part train --out bench/out/check-train.json
    python bench/check_eval.py fit bench/out/check-train.json            # writes citefinder/data/check.json
    python bench/check_eval.py measure --part test --against /work/bench-libs/lib50k --out bench/out/check-test.json

Each paper's draft.txt becomes a .tex whose markers are its real citations (``\\citep{gold keys}``), and
its library is its refs.bib as written (what a user has). ``collect`` computes, for every cited key,
the features of the key (label 1) and of a key of the same .bib drawn at random in its place (label
0). ``fit`` fits the logistic fit model on those rows (5 folds grouped by paper for its out-of-fold AUC)
and picks the verdict thresholds from the out-of-fold probabilities. ``measure`` runs the shipped check
end to end on the TEST part, the .tex with 10% of its cited keys swapped for another key of the same
.bib (seeded) and five invented entries added to the .bib and cited once each, and reports the share of
swapped keys flagged, the share of untouched citations flagged, the AUC of the fit probability, the
invented entries ``--against`` a reference library flags, and the time per paper. The split is
bench/drafts_split.json (fixed before any tuning).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from common import commands

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CITEFINDER_SHARED_DATA", ROOT.parent / "shared/data")) / "drafts-dev"
MARKER = re.compile(r"\[CITATION\]")
SEED = 20261124


def gold_tex(paper_dir: Path, bib_keys: set[str]) -> str:
    """draft.txt with its i-th marker written ``\\citep{the keys of gold line i}`` (keys the .bib lacks left
    out; a marker none of whose keys is in the .bib becomes ``\\citep{?}``)."""
    text = (paper_dir / "draft.txt").read_text(encoding="utf-8")
    gold = [json.loads(line) for line in (paper_dir / "gold.jsonl").read_text().splitlines() if line.strip()]
    pieces, pos = [], 0
    for m, g in zip(MARKER.finditer(text), gold, strict=True):
        keys = [k for k in dict.fromkeys(g["keys"]) if k in bib_keys]
        pieces += [text[pos:m.start()], "\\citep{" + (",".join(keys) or "?") + "}"]
        pos = m.end()
    pieces.append(text[pos:])
    return "".join(pieces)


def papers_of(part: str) -> list[str]:
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    return sorted(split["train"] + split["test"]) if part == "all" else split[part]


def open_paper(name: str, bib: Path, libraries: Path, settings: Any, embedder: Any = None) -> tuple[Any, Any, dict]:
    """The paper's library (imported once, reused while the .bib is unchanged), its pipeline, key -> doc_id."""
    from citefinder.evaluate.drafts import key_to_doc_id, open_draft_library
    from citefinder.pipeline.pipeline import Pipeline

    library = open_draft_library(settings, bib, libraries / f"{name}-{bib.stem}", embedder)
    return library, Pipeline(library.settings, library), key_to_doc_id(library, bib)


class CrossScores:
    """A cross-encoder's logit for (the context as the dense agent reads it, the paper's title + abstract): the
    score a candidate feature for the fit model would read (``collect --cross NAME=FOLDER``)."""

    def __init__(self, folder: str) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
        self.seconds, self.pairs = 0.0, 0

    def __call__(self, query: str, docs: list[str]) -> list[float]:
        t0 = time.perf_counter()
        with self.torch.no_grad():
            x = self.tok([query] * len(docs), docs, truncation=True, max_length=256, padding=True,
                         return_tensors="pt")
            out: list[float] = self.model(**x).logits.squeeze(-1).tolist()  # (n, 1) -> n logits
        self.seconds += time.perf_counter() - t0
        self.pairs += len(docs)
        return out


def add_cross(rows: list[dict[str, Any]], ranked: dict, library: Any, doc_of: dict[str, str],
              scorers: dict[str, "CrossScores"]) -> None:
    """``f["cross_<name>"]`` for each row of one paper: one batch per cite command (its rows' papers)."""
    from citefinder.library.records import embedding_text
    from citefinder.retrieve.agents.dense import dense_text

    papers = {p.doc_id: p for p in library.get(sorted({doc_of[r["key"]] for r in rows}))}
    by_group: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_group.setdefault(r["group"], []).append(r)
    for group, rs in by_group.items():
        query = dense_text(ranked[group].query)
        for name, scorer in scorers.items():
            for r, x in zip(rs, scorer(query, [embedding_text(papers[doc_of[r["key"]]]) for r in rs]), strict=True):
                r["f"][f"cross_{name}"] = x


def cmd_collect(args: argparse.Namespace) -> None:
    """Features of every cited key (label 1) and of a random other key of the .bib in its place (label 0)."""
    from citefinder.check.features import NEARBY, Contexts, Vectors, fit_features, rank_context
    from citefinder.check.run import name_verdict
    from citefinder.config import Settings
    from citefinder.retrieve.agents.draft import draft_context
    from citefinder.select.named import Owners
    from citefinder.text.citations import find_citations

    settings = Settings()
    rows: list[dict[str, Any]] = []
    embedder = None
    rng = random.Random(SEED)
    scorers = {spec.split("=", 1)[0]: CrossScores(spec.split("=", 1)[1]) for spec in args.cross}
    for n, name in enumerate(args.papers.split(",") if args.papers else papers_of(args.part), start=1):
        first_row = len(rows)
        bib = DATA / name / "refs.bib"
        library, pipeline, doc_of = open_paper(name, bib, args.libraries, settings, embedder)
        embedder = library.embedder
        tex = gold_tex(DATA / name, set(doc_of))
        citations = [c for c in find_citations(tex, settings.context_sentences) if c.key in doc_of]
        draft = draft_context(tex)
        keys = sorted(doc_of)
        t0 = time.perf_counter()
        vectors = Vectors(library, settings.exact_dense_max)
        groups = sorted({c.group for c in citations})
        ranked = {g: rank_context(pipeline, next(c for c in citations if c.group == g).slot, vectors, draft=draft)
                  for g in groups}
        contexts = Contexts.of([ranked[g] for g in groups])
        cited_in: dict[str, list[int]] = {}
        for c in citations:
            cited_in.setdefault(c.key, []).append(c.group)
        docs_in = {g: [doc_of[c.key] for c in citations if c.group == g] for g in groups}
        uncited = frozenset(doc_of.values()) - {doc_of[c.key] for c in citations}
        owners = Owners(library)
        paper_of = {p.doc_id: p for p in library.iter_papers()}
        for n_g, group in enumerate(groups):
            cites = [c for c in citations if c.group == group]
            docs = {c.key: doc_of[c.key] for c in cites}
            nearby = [d for g in groups[max(0, n_g - NEARBY):n_g] + groups[n_g + 1:n_g + 1 + NEARBY] for d in docs_in[g]]
            together = [d for g in groups if ranked[g].slot.sentence == ranked[group].slot.sentence for d in docs_in[g]]
            for c in cites:
                others = frozenset(d for d in [*(d for k, d in docs.items() if k != c.key), *together]
                                   if d != docs[c.key])
                rows.append({"paper": name, "group": group, "key": c.key, "label": 1, "kind": "cited",
                             "others": sorted(others), "f": fit_features(
                    ranked[group], docs[c.key], exclude=others, key=c.key, vectors=vectors, contexts=contexts,
                    nearby=nearby, uncited=uncited,
                    elsewhere=[ranked[g].vector for g in dict.fromkeys(cited_in[c.key])
                               if ranked[g].slot.sentence != ranked[group].slot.sentence])})
                pool = [k for k in keys if doc_of[k] not in docs.values()]
                for swap in rng.sample(pool, min(args.negatives, len(pool))):
                    # the text with the swap: the key replaced may be left uncited, the swapped-in one is cited
                    left = uncited | ({docs[c.key]} if len(cited_in[c.key]) == 1 else set())
                    rows.append(swap_row(name, group, swap, "random", ranked, doc_of, others, vectors, contexts,
                                         nearby, left, cited_in))
                # the cousin swap: the slot's best-ranked wrong paper of the .bib in the key's place (issue 49)
                key_of = {d: k for k, d in doc_of.items()}
                cousin = next((cand.doc_id for cand in ranked[group].candidates
                               if cand.doc_id not in docs.values() and cand.doc_id not in others
                               and cand.doc_id in key_of), None)
                if args.cousins and cousin is not None:
                    left = uncited | ({docs[c.key]} if len(cited_in[c.key]) == 1 else set())
                    rows.append(swap_row(name, group, key_of[cousin], "cousin", ranked, doc_of, others, vectors,
                                         contexts, nearby, left, cited_in))
        for r in rows[first_row:]:  # what the name rule of the check says of the key there (check/run.py)
            rk = ranked[r["group"]]
            cited_here = set(r.pop("others"))
            r["named_flag"] = name_verdict(rk.slot.focus or rk.slot.sentence, paper_of.get(doc_of[r["key"]]),
                                           rk.candidates, owners, cited_here) is not None
        if scorers:
            add_cross(rows[first_row:], ranked, library, doc_of, scorers)
        print(f"[{n}] {name}: {len(citations)} cited keys, {library.count()} papers, "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        # written after every paper: a long collect stopped early still leaves the papers it did
        args.out.parent.mkdir(parents=True, exist_ok=True)
        cross = {k: {"pairs": v.pairs, "pairs_per_s": round(v.pairs / max(v.seconds, 1e-9), 1)}
                 for k, v in scorers.items()}
        args.out.write_text(json.dumps({"part": args.part, "seed": SEED, "cross": cross, "rows": rows}))


def swap_row(name: str, group: int, swap: str, kind: str, ranked: dict, doc_of: dict[str, str], others: frozenset,
             vectors: Any, contexts: Any, nearby: list[str], left: set[str], cited_in: dict[str, list[int]]
             ) -> dict[str, Any]:
    """A row of a key of the .bib written in place of the cited one (label 0): "random" or "cousin"."""
    from citefinder.check.features import fit_features

    return {"paper": name, "group": group, "key": swap, "label": 0, "kind": kind, "others": sorted(others),
            "f": fit_features(
        ranked[group], doc_of[swap], exclude=others, key=swap, vectors=vectors, contexts=contexts,
        nearby=nearby, uncited=frozenset(left - {doc_of[swap]}),
        elsewhere=[ranked[g].vector for g in dict.fromkeys(cited_in.get(swap, ()))
                   if ranked[g].slot.sentence != ranked[group].slot.sentence])}


def auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def cmd_fit(args: argparse.Namespace) -> None:
    """Fit the fit model on training rows; thresholds from out-of-fold probabilities (folds by paper)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    from citefinder.check.model import FIT_FEATURES, PRIOR_WRONG

    data = json.loads(args.rows.read_text())
    assert data["part"] == "train", "fit on the training part only"
    rows = data["rows"]
    drop = set((args.drop or "").split(","))
    features = [f for f in FIT_FEATURES if f not in drop] + [f for f in (args.extra or "").split(",") if f]
    X = np.asarray([[r["f"][k] for k in features] for r in rows])
    y = np.asarray([r["label"] for r in rows])
    groups = np.asarray([r["paper"] for r in rows])
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    Z = (X - mean) / scale
    # weights: wrong keys count as PRIOR_WRONG of all citations (the benchmark's swap rate)
    w = np.where(y == 1, 1.0, PRIOR_WRONG / (1 - PRIOR_WRONG) * (y == 1).sum() / max(1, (y == 0).sum()))
    cousin_rows = np.asarray([r.get("kind") == "cousin" for r in rows])
    w = np.where(cousin_rows, w * args.cousin_weight, w)  # how much a cousin swap counts against a random one
    best = None
    for C in (0.01, 0.1, 1.0, 10.0):
        oof = np.zeros(len(y))
        for tr, te in GroupKFold(n_splits=5).split(Z, y, groups):
            m = LogisticRegression(C=C, max_iter=5000).fit(Z[tr], y[tr], sample_weight=w[tr])
            oof[te] = m.predict_proba(Z[te])[:, 1]
        a = auc(oof.tolist(), y.tolist())
        print(f"C={C}: out-of-fold AUC {a:.4f}")
        if best is None or a > best[0] + 0.002:
            best = (a, C, oof)
    assert best is not None
    cv_auc, C, oof = best
    model = LogisticRegression(C=C, max_iter=5000).fit(Z, y, sample_weight=w)
    correct = np.sort(oof[y == 1])
    doubtful = float(np.quantile(correct, args.doubtful_rate))
    wrong = float(np.quantile(correct, args.wrong_rate))
    if args.wrong_odds:
        # "likely wrong": the highest cut-off under which a key is at least as likely wrong as right when one key in
        # ten is wrong (PRIOR_WRONG): swapped keys below it >= (1 - prior) / prior times as often as correct ones
        need = (1 - PRIOR_WRONG) / PRIOR_WRONG
        swapped_oof = oof[y == 0]
        steps = [t / 100 for t in range(5, int(doubtful * 100) + 1)]
        ok = [t for t in steps if np.mean(swapped_oof < t) >= need * max(np.mean(oof[y == 1] < t), 1e-9)]
        wrong = max(ok, default=wrong)
    swapped = oof[y == 0]
    print(f"thresholds: doubtful below {doubtful:.4f} ({args.doubtful_rate:.0%} of correct keys out of fold), "
          f"likely wrong below {wrong:.4f} ({np.mean(oof[y == 1] < wrong):.1%} of correct keys)")
    print(f"out of fold on train: swapped keys flagged {np.mean(swapped < doubtful):.1%} "
          f"(likely wrong {np.mean(swapped < wrong):.1%}); correct keys flagged {np.mean(oof[y == 1] < doubtful):.1%}")
    kinds = np.asarray([r.get("kind", "cited" if r["label"] else "random") for r in rows])
    for kind in ("random", "cousin"):
        sel = kinds == kind
        if sel.any():
            print(f"  {kind} swaps ({int(sel.sum())}): flagged {np.mean(oof[sel] < doubtful):.1%} "
                  f"(likely wrong {np.mean(oof[sel] < wrong):.1%}), AUC against cited keys "
                  f"{auc(oof[sel | (y == 1)].tolist(), y[sel | (y == 1)].tolist()):.3f}")
    named = np.asarray([r["f"].get("other_named", 0.0) >= 1.0 for r in rows])  # another paper named: the
    if named.any():  # right one of a swapped key, or a name the sentence writes for a paper beside the cited one
        print(f"  random keys where another paper is the name the sentence writes ({int((named & (y == 0)).sum())}):"
              f" flagged {np.mean(oof[named & (y == 0)] < doubtful):.1%} (likely wrong "
              f"{np.mean(oof[named & (y == 0)] < wrong):.1%}); cited keys there ({int((named & (y == 1)).sum())}) "
              f"flagged {np.mean(oof[named & (y == 1)] < doubtful):.1%}")
    if args.dry_run:
        return
    out = {"features": features, "coef": [round(float(c), 5) for c in model.coef_[0]],
           "intercept": round(float(model.intercept_[0]), 5), "mean": [round(float(m), 6) for m in mean],
           "scale": [round(float(s), 6) for s in scale],
           "doubtful_below": round(doubtful, 4), "wrong_below": round(wrong, 4),
           "provenance": f"bench/check_eval.py fit on {args.rows.name} (drafts-dev train part, "
                         f"{len(set(groups))} papers, {len(y)} rows: "
                         f"{int(y.sum())} cited keys, {int((kinds == 'random').sum())} random other keys of the same "
                         f".bib, {int((kinds == 'cousin').sum())} cousin swaps: the slot's best-ranked wrong key); "
                         f"out-of-fold AUC {cv_auc:.3f} (5 folds by paper), C={C}; thresholds: doubtful below "
                         f"{args.doubtful_rate:.0%} of correct keys out of fold; likely wrong "
                         + (f"below the highest cut-off where a key is at least as likely wrong as right at a "
                            f"{PRIOR_WRONG:.0%} prior of wrong keys, out of fold ({np.mean(oof[y == 1] < wrong):.1%} "
                            f"of correct keys)" if args.wrong_odds else f"{args.wrong_rate:.0%} of correct keys")}
    (ROOT / "citefinder/data/check.json").write_text(json.dumps(out, indent=1) + "\n")
    print(out["provenance"])


def cmd_replay(args: argparse.Namespace) -> None:
    """A fit model (default the shipped one) read on collected rows (``collect --part test``): each cited key and
    the random other keys put in its place; swapped keys flagged (doubtful or likely wrong) and correct keys
    flagged, by paper and over all."""
    from citefinder.check.model import DOUBTFUL, WRONG, FitModel, default_model

    model = FitModel.from_dict(json.loads(args.model.read_text())) if args.model else default_model()
    rows = json.loads(args.rows.read_text())["rows"]
    print(f"{args.model or 'shipped'}: doubtful below {model.doubtful_below:.2f}, likely wrong below "
          f"{model.wrong_below:.2f}\n")
    print("| paper | cited keys | swapped keys | swapped flagged (likely wrong) | correct flagged (likely wrong) | "
          "random swaps flagged | cousin swaps flagged |")
    print("|---|---|---|---|---|---|---|")
    papers = sorted({r["paper"] for r in rows})
    for paper in [*papers, "all"]:
        group = [r for r in rows if paper in ("all", r["paper"])]
        verdicts = [(r["label"], WRONG if r.get("named_flag") and args.names
                     else model.verdict(model.probability(r["f"]))) for r in group]
        sw = [v for label, v in verdicts if label == 0]
        ok = [v for label, v in verdicts if label == 1]
        by_kind = {k: [v for r, (_, v) in zip(group, verdicts, strict=True) if r.get("kind") == k]
                   for k in ("random", "cousin")}

        def share(vs: list[str], words: tuple[str, ...]) -> str:
            return f"{sum(v in words for v in vs) / max(1, len(vs)):.1%}"

        name = f"**{paper}**" if paper == "all" else paper
        print(f"| {name} | {len(ok)} | {len(sw)} | {share(sw, (DOUBTFUL, WRONG))} ({share(sw, (WRONG,))}) | "
              f"{share(ok, (DOUBTFUL, WRONG))} ({share(ok, (WRONG,))}) | "
              f"{share(by_kind['random'], (DOUBTFUL, WRONG))} ({len(by_kind['random'])}) | "
              f"{share(by_kind['cousin'], (DOUBTFUL, WRONG))} ({len(by_kind['cousin'])}) |")


def main() -> None:
    p, sub = commands(__doc__)
    c = sub.add_parser("collect")
    c.add_argument("--part", choices=("train", "test", "all"), default="train")
    c.add_argument("--libraries", type=Path, default=ROOT / "bench/out/check-libs")
    c.add_argument("--negatives", type=int, default=2, help="random other keys per cited key")
    c.add_argument("--cousins", action="store_true", help="also a cousin swap per cited key: the slot's best-ranked "
                   "wrong paper of the .bib (issue 49)")
    c.add_argument("--papers", help="comma-separated papers of the part, in this order (default: all of it)")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--cross", action="append", default=[], metavar="NAME=FOLDER",
                   help="also the logit of this cross-encoder, as feature cross_NAME (a probe: the shipped check "
                        "reads none)")
    f = sub.add_parser("fit")
    f.add_argument("rows", type=Path)
    f.add_argument("--extra", help="comma-separated features beyond the shipped ones (e.g. cross_v1)")
    f.add_argument("--dry-run", action="store_true", help="print the fit's figures, write nothing")
    f.add_argument("--drop", help="comma-separated features of FIT_FEATURES left out of the fit")
    f.add_argument("--cousin-weight", type=float, default=1.0, help="weight of a cousin swap row (collect --cousins) "
                   "against a random one")
    f.add_argument("--doubtful-rate", type=float, default=0.08, help="share of correct keys below 'doubtful'")
    f.add_argument("--wrong-rate", type=float, default=0.02, help="share of correct keys below 'likely wrong'")
    f.add_argument("--wrong-odds", action="store_true",
                   help="'likely wrong' below the highest cut-off where a key is at least as likely wrong as right "
                        "at the prior of wrong keys (instead of --wrong-rate)")
    m = sub.add_parser("measure")
    m.add_argument("--part", choices=("train", "test"), default="test")
    m.add_argument("--libraries", type=Path, default=ROOT / "bench/out/check-libs")
    m.add_argument("--against", type=Path)
    m.add_argument("--out", type=Path)
    rp = sub.add_parser("replay", help="a fit model read on collected rows (before/after on the same rows)")
    rp.add_argument("rows", type=Path)
    rp.add_argument("--model", type=Path, help="a check.json (default: the shipped one)")
    rp.add_argument("--names", action="store_true", help="a key the check's name rule overrules is likely wrong "
                    "(check/run.py name_verdict, recorded by collect as named_flag), as the check shows it")
    a = sub.add_parser("against", help="only the invented-entry part of measure: the .bib files measure wrote, "
                                       "checked against a reference library")
    a.add_argument("--part", choices=("train", "test"), default="test")
    a.add_argument("--libraries", type=Path, default=ROOT / "bench/out/check-libs")
    a.add_argument("--against", type=Path, required=True)
    args = p.parse_args()
    from citefinder.config import offline_environment

    offline_environment()
    if args.cmd == "collect":
        cmd_collect(args)
    elif args.cmd == "fit":
        cmd_fit(args)
    elif args.cmd == "replay":
        cmd_replay(args)
    elif args.cmd == "against":
        cmd_against(args)
    else:
        cmd_measure(args)


ADJ = ("Contrastive", "Hierarchical", "Sparse", "Adaptive", "Robust", "Latent", "Modular", "Calibrated",
       "Recursive", "Federated", "Symbolic", "Equivariant", "Counterfactual", "Lightweight", "Multiscale")
NOUN = ("Distillation", "Attention Routing", "Prototype Alignment", "Graph Priors", "Memory Replay",
        "Token Pruning", "Policy Shaping", "Kernel Mixing", "Curriculum Sampling", "Spectral Pooling")
TASK = ("Low-Resource Entity Linking", "Open-Domain Table Reasoning", "Few-Shot Scene Parsing",
        "Streaming Speech Translation", "Offline Reinforcement Learning", "Cross-Lingual Summarization",
        "Point Cloud Completion", "Molecular Property Prediction", "Long-Horizon Planning", "Code Retrieval")
NAMES = ("Alvarez", "Brennan", "Chowdhury", "Dimitrov", "Eklund", "Fujimoto", "Gallardo", "Haddad", "Ivanova",
         "Jaramillo", "Kowalczyk", "Lindqvist", "Moreau", "Nakashima", "Okafor", "Petrenko", "Quintero", "Rasmussen")


def invented_entries(rng: random.Random, known_titles: set[str], n: int = 5) -> list[tuple[str, str, str]]:
    """``n`` plausible entries no library holds: (key, title, BibTeX text)."""
    from citefinder.library.identity import normalize_title

    out: list[tuple[str, str, str]] = []
    while len(out) < n:
        title = f"{rng.choice(ADJ)} {rng.choice(NOUN)} for {rng.choice(TASK)}"
        if normalize_title(title) in known_titles or any(t == title for _, t, _ in out):
            continue
        authors = " and ".join(f"{rng.choice(NAMES)}, {rng.choice('ABCDEFGHJKLMNPRST')}." for _ in range(3))
        year = rng.randint(2016, 2022)
        key = f"{authors.split(',')[0].lower()}{year}{title.split()[0].lower()}"
        entry = (f"@inproceedings{{{key},\n  title = {{{title}}},\n  author = {{{authors}}},\n"
                 f"  booktitle = {{Proceedings of the {rng.choice(['AAAI', 'EMNLP', 'ICLR', 'CVPR'])} Conference}},\n"
                 f"  year = {{{year}}}\n}}\n")
        out.append((key, title, entry))
    return out


def known_titles() -> set[str]:
    """Normalised titles of papers-333k (the invented entries must match none)."""
    import gzip

    from citefinder.library.identity import normalize_title

    with gzip.open(ROOT.parent / "shared/data/papers-333k.jsonl.gz", "rt", encoding="utf-8") as f:
        return {normalize_title(json.loads(line)["title"]) for line in f}


def cmd_measure(args: argparse.Namespace) -> None:
    """The shipped check end to end on the TEST part: 10% of cited keys swapped, five invented entries."""
    from citefinder.check.draft import check_project
    from citefinder.check.model import FITS
    from citefinder.config import Settings
    from citefinder.evaluate.drafts import key_to_doc_id, open_draft_library
    from citefinder.library.readers import read_papers
    from citefinder.library.reference import ReferenceLibrary
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.text.citations import find_citations, replace_keys
    from citefinder.text.project import read_project
    from citefinder.types import Paper

    settings = Settings()
    reference = ReferenceLibrary.open(args.against) if args.against else None
    titles = known_titles()
    rng = random.Random(SEED)
    work = args.libraries.parent / "check-measure"
    records: list[dict[str, Any]] = []
    papers: list[dict[str, Any]] = []
    embedder = None
    for name in papers_of(args.part):
        bib_text = (DATA / name / "refs.bib").read_text(encoding="utf-8", errors="replace")
        bib_keys = sorted({p.key for p in read_papers(DATA / name / "refs.bib") if isinstance(p, Paper) and p.key})
        invented = invented_entries(rng, titles)
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        bib = folder / "refs.bib"
        bib.write_text(bib_text + "\n" + "".join(e for _, _, e in invented), encoding="utf-8")
        tex = gold_tex(DATA / name, set(bib_keys))
        cites = find_citations(tex)
        n_swap = round(0.1 * len(cites))
        swapped: dict[int, str] = {}
        for i in sorted(rng.sample(range(len(cites)), n_swap)):
            taken = {cites[i].key, *cites[i].others}
            swapped[i] = rng.choice([k for k in bib_keys if k not in taken])
        tex = replace_keys(tex, cites, swapped)
        # each invented entry cited once, in a command of its own after a random existing one
        after = sorted(rng.sample(sorted({c.end for c in find_citations(tex)}), len(invented)), reverse=True)
        for pos, (key, _, _) in zip(after, invented, strict=True):
            close = tex.index("}", pos - 1) + 1
            tex = tex[:close] + f" \\citep{{{key}}}" + tex[close:]
        (folder / "main.tex").write_text(tex, encoding="utf-8")
        (folder / "invented.json").write_text(json.dumps([k for k, _, _ in invented]))
        library = open_draft_library(settings, bib, args.libraries / f"{name}-measure", embedder)
        embedder = library.embedder
        pipeline = Pipeline(library.settings, library)
        project = read_project(folder / "main.tex")
        doc_of = key_to_doc_id(library, bib)
        t0 = time.perf_counter()
        report = check_project(pipeline, project, [bib], reference=reference)
        elapsed = time.perf_counter() - t0
        fake = {k for k, _, _ in invented}
        swapped_at = {cites[i].start for i in swapped}  # positions shift: match by order instead
        now = find_citations(tex)
        order = [c for c in now if c.key not in fake]
        kinds = []
        for c, orig in zip(order, cites, strict=True):
            kinds.append("swapped" if orig.start in swapped_at else "untouched")
        it = iter(kinds)
        gold = iter(orig.key for orig in cites)
        for r, c in zip(report.citations, now, strict=True):
            kind = "invented" if c.key in fake else next(it)
            was = None if c.key in fake else next(gold)
            records.append({"paper": name, "key": r.key, "kind": kind, "verdict": r.verdict,
                            "probability": r.probability, "gold": was,
                            "gold_named": named_rank(library, c, doc_of.get(was)) if kind == "swapped" else None,
                            "offered": {a.key: a.probability for a in r.alternatives if a.key}})
        flagged_bib = {k for p in report.problems if p.kind == "not in the reference library" for k in p.keys}
        papers.append({"paper": name, "citations": len(report.citations), "library": library.count(),
                       "check_s": round(elapsed, 2), "invented_flagged_against": len(fake & flagged_bib),
                       "real_entries_unknown_to_reference": len(flagged_bib - fake),
                       "entries": library.count()})
        print(f"{name}: {len(report.citations)} citations, {len(swapped)} swapped, check {elapsed:.1f} s, "
              f"invented flagged {len(fake & flagged_bib)}/5", file=sys.stderr, flush=True)
    sw = [r for r in records if r["kind"] == "swapped"]
    ok = [r for r in records if r["kind"] == "untouched"]
    inv = [r for r in records if r["kind"] == "invented"]
    result = {
        "part": args.part, "seed": SEED, "papers": papers, "records": records,
        "swapped_flagged": sum(r["verdict"] != FITS for r in sw) / max(1, len(sw)),
        "swapped_likely_wrong": sum(r["verdict"] == "likely wrong" for r in sw) / max(1, len(sw)),
        "untouched_flagged": sum(r["verdict"] != FITS for r in ok) / max(1, len(ok)),
        "untouched_likely_wrong": sum(r["verdict"] == "likely wrong" for r in ok) / max(1, len(ok)),
        "auc": auc([r["probability"] for r in ok + sw], [1] * len(ok) + [0] * len(sw)),
        "invented_cites_flagged": sum(r["verdict"] != FITS for r in inv) / max(1, len(inv)),
        "invented_entries_flagged_against": sum(p["invented_flagged_against"] for p in papers),
        "invented_entries": 5 * len(papers),
        "n_swapped": len(sw), "n_untouched": len(ok),
        "named": named_summary(sw),
    }
    print(json.dumps({k: v for k, v in result.items() if k not in ("records", "papers")}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))


def named_rank(library: Any, citation: Any, doc_id: str | None) -> int | None:
    """Where the "names" agent (strong, clear name matches) puts ``doc_id`` for this citation's sentence: a swapped
    key whose right paper the sentence names ("Fast R-CNN [CITATION]") is the case issue 37 (item 3) measures."""
    from citefinder.retrieve.agents.names import NamesAgent
    from citefinder.retrieve.query.reformulate import reformulate

    if doc_id is None:
        return None
    query, _ = reformulate(citation.slot)
    if not query.names:
        return None
    hits = NamesAgent(library.settings, library).search(query)
    return next((h.rank for h in hits if h.doc_id == doc_id), None)


def named_summary(swapped: list[dict[str, Any]]) -> dict[str, Any]:
    """Swapped keys whose right paper the sentence names (the names agent's first): how many are flagged, how
    often the right key is offered, and at what probability."""
    named = [r for r in swapped if r.get("gold_named") == 1]
    offered = [r["offered"][r["gold"]] for r in named if r["gold"] in r.get("offered", {})]
    return {"n": len(named), "flagged": sum(r["verdict"] != "fits" for r in named),
            "likely_wrong": sum(r["verdict"] == "likely wrong" for r in named),
            "right_key_offered": len(offered), "offered_p": sorted(round(p, 2) for p in offered),
            "offered_p_median": sorted(offered)[len(offered) // 2] if offered else None,
            "fit_p_of_swapped": sorted(round(r["probability"], 2) for r in named)}


def cmd_against(args: argparse.Namespace) -> None:
    """Every entry of the .bib files ``measure`` wrote, matched against the reference library: the invented
    ones should match nothing; how many real ones the reference lacks is said too."""
    from citefinder.check.bib import UNKNOWN, bib_problems
    from citefinder.check.draft import bib_entries
    from citefinder.library.reference import ReferenceLibrary

    t0 = time.perf_counter()
    reference = ReferenceLibrary.open(args.against)
    print(f"reference: {reference.count} papers read in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    flagged = invented_total = real_unknown = real_total = 0
    for name in papers_of(args.part):
        bib = args.libraries.parent / "check-measure" / name / "refs.bib"
        entries, _ = bib_entries([bib])
        fake = set(json.loads((bib.parent / "invented.json").read_text()))
        unknown = {k for p in bib_problems(entries, [], {}, {}, nocite_all=True, reference=reference)
                   if p.kind == UNKNOWN for k in p.keys}
        flagged += len(fake & unknown)
        invented_total += len(fake)
        real_unknown += len(unknown - fake)
        real_total += len(entries) - len(fake)
        print(f"{name}: invented flagged {len(fake & unknown)}/{len(fake)}; real entries unknown to the reference "
              f"{len(unknown - fake)}/{len(entries) - len(fake)}", file=sys.stderr)
    print(json.dumps({"invented_flagged": flagged, "invented": invented_total, "real_unknown": real_unknown,
                      "real_entries": real_total}))


if __name__ == "__main__":
    main()
