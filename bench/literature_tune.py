"""Tune the literature tier's priors (citefinder.pipeline.literature.Priors) on TRAINING slots only.

    python bench/literature_tune.py bench/out/lit-train.json --literature /work/lit/papers-333k [--write]

Input: ``bench/literature_eval.py drafts --part train`` (each removed slot's literature candidates in the
literature's own order, the user's papers already left out). Each candidate's features are computed as the
tier computes them (:class:`~citefinder.pipeline.priors.OwnPapers`: the slot's own library without the removed
entries), a grid of priors is scored by R@10 of the removed slots (ties: MRR), and with ``--write`` the best
goes to ``citefinder/data/literature.json`` with the figure it reached and the data it was tuned on.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/data"
GRID = {"k": (1.0, 3.0, 10.0), "authors": (0.0, 0.25, 0.5, 1.0, 2.0), "topic": (0.0, 0.25, 0.5, 1.0, 2.0, 4.0),
        "newer": (1.0, 0.5, 0.2, 0.0), "slack": (0, 1, 2)}


def features(result_path: Path, literature: Path, libraries: Path, bib: str) -> list[tuple[list[dict], set[str]]]:
    """Per removed slot: its candidates' features (literature order) and its gold doc_ids."""
    from citefinder.config import Settings
    from citefinder.evaluate.drafts import open_draft_library
    from citefinder.library.readonly import ReadOnlyLibrary
    from citefinder.pipeline.priors import OwnPapers

    result = json.loads(result_path.read_text())
    view = ReadOnlyLibrary.open(literature, Settings())
    out: list[tuple[list[dict], set[str]]] = []
    by_paper: dict[str, list[dict]] = {}
    for row in result["rows"]:
        if row["removed"]:
            by_paper.setdefault(row["id"].split(":")[0], []).append(row)
    for name, rows in by_paper.items():
        print(name, len(rows), file=sys.stderr, flush=True)
        library = open_draft_library(Settings(), DATA / "drafts-dev" / name / bib, libraries / f"{name}-{Path(bib).stem}")
        papers = list(library.iter_papers())
        for row in rows:
            own = OwnPapers([p for p in papers if p.doc_id not in row["own_gold"]], library)
            found = {p.doc_id: p for p in view.get([c[0] for c in row["lit"]])}
            feats = [{"doc_id": c[0], **own.features(found[c[0]])} for c in row["lit"] if c[0] in found]
            out.append((feats, set(row["lit_gold"])))
    return out


def score(slots: list[tuple[list[dict], set[str]]], priors: object) -> tuple[float, float, float]:
    from citefinder.pipeline.priors import prior_order  # the tier's own order

    r1 = r10 = mrr = 0.0
    for feats, gold in slots:
        order = prior_order(feats, feats, priors) if feats else []
        ids = [feats[i]["doc_id"] for i in order]
        rank = next((n for n, d in enumerate(ids, 1) if d in gold), None)
        r1 += rank == 1
        r10 += rank is not None and rank <= 10
        mrr += 1 / rank if rank else 0.0
    n = max(1, len(slots))
    return r10 / n, r1 / n, mrr / n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result", type=Path)
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--libraries", type=Path, default=ROOT / "bench/out/drafts-libs")
    p.add_argument("--bib", default="refs.bib")
    p.add_argument("--write", action="store_true")
    args = p.parse_args()

    from citefinder.config import offline_environment
    from citefinder.pipeline.priors import Priors

    offline_environment()
    slots = features(args.result, args.literature, args.libraries, args.bib)
    base = score(slots, Priors())
    print(f"{len(slots)} removed slots; the literature's own order: R@10 {base[0]:.3f} R@1 {base[1]:.3f} "
          f"MRR {base[2]:.3f}")
    best, best_priors = base, Priors()
    for values in itertools.product(*GRID.values()):
        priors = Priors(**dict(zip(GRID, values, strict=True)))
        if priors.neutral and priors != Priors():
            continue
        s = score(slots, priors)
        if (s[0], s[2]) > (best[0], best[2]):
            best, best_priors = s, priors
    print(f"best: {best_priors}: R@10 {best[0]:.3f} R@1 {best[1]:.3f} MRR {best[2]:.3f}")
    for name in ("authors", "topic", "newer"):  # each prior alone, the others neutral
        alone = Priors(k=best_priors.k, slack=best_priors.slack, **{name: getattr(best_priors, name)})
        s = score(slots, alone)
        print(f"  {name} alone ({getattr(best_priors, name)}): R@10 {s[0]:.3f} R@1 {s[1]:.3f} MRR {s[2]:.3f}")
    if args.write:
        path = ROOT / "citefinder/data/literature.json"
        data = json.loads(path.read_text())
        fields = {k: getattr(best_priors, k) for k in GRID}
        data["priors"] = {**fields, "provenance": (
            f"bench/literature_tune.py on {args.result.name} ({len(slots)} removed slots of drafts-dev's training part, "
            f"literature {args.literature.name}): R@10 {best[0]:.3f} / R@1 {best[1]:.3f} / MRR {best[2]:.3f} against "
            f"{base[0]:.3f} / {base[1]:.3f} / {base[2]:.3f} in the literature's own order")}
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
