"""Preprint -> published on drafts-dev (issue 51): the works one paper's .bib cites as a preprint and another's as
published, found again from a literature library of the published entries.

Gold: a work cited as a preprint (:func:`citefinder.library.published.preprint_form`) in one paper and as a
published version (:func:`citefinder.library.published.published_of`) in another, the two entries sharing their
title key (normalised title) or arXiv id; nothing else (no author, no year) is asked of the gold, so the rule
under test may miss a pair. The literature: a library built from a .bib of those published entries and of
``--distractors`` other published entries of drafts-dev (BM25-first: no vectors), searched in place by
:class:`citefinder.sources.local.LocalLiterature`. Every preprint entry of every paper is asked
(:func:`citefinder.sources.published.find_published`): a found version is right when it is a gold published entry
of the same work (same title key or arXiv id), wrong otherwise; preprints whose work the literature does not hold
must find nothing (each found is wrong).

    python bench/published_eval.py [--data ../shared/data/drafts-dev] [--distractors 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from citefinder.config import Settings
from citefinder.library.formats.bib import read_bib
from citefinder.library.identity import normalize_arxiv_id, normalize_title
from citefinder.library.published import preprint_form, published_of
from citefinder.library.store import Library
from citefinder.sources.local import LocalLiterature
from citefinder.sources.published import find_published
from citefinder.types import Paper


def entries(data: Path) -> dict[str, list[Paper]]:
    out = {}
    for bib in sorted(data.glob("*/refs.bib")):
        out[bib.parent.name] = [p for p in read_bib(bib) if isinstance(p, Paper) and p.key]
    return out


def work_keys(p: Paper) -> set[str]:
    keys = {f"t:{t}"} if (t := normalize_title(p.title)) else set()
    if a := normalize_arxiv_id(p.arxiv_id):
        keys.add(f"a:{a}")
    return keys


def gold_pairs(by_paper: dict[str, list[Paper]]) -> dict[str, tuple[list[tuple[str, Paper]], list[tuple[str, Paper]]]]:
    """work -> (its preprint entries, its published entries), for works cited both ways by different papers."""
    pre: dict[str, list[tuple[str, Paper]]] = defaultdict(list)
    pub: dict[str, list[tuple[str, Paper]]] = defaultdict(list)
    for name, papers in by_paper.items():
        for p in papers:
            if preprint_form(p) is not None:
                for k in work_keys(p):
                    pre[k].append((name, p))
            elif published_of(p) is not None:
                for k in work_keys(p):
                    pub[k].append((name, p))
    works: dict[str, tuple[list, list]] = {}
    seen: set[int] = set()
    for k in sorted(pre):
        if k not in pub or id(pre[k][0][1]) in seen:
            continue
        papers_pre, papers_pub = {n for n, _ in pre[k]}, {n for n, _ in pub[k]}
        if papers_pre - papers_pub or papers_pub - papers_pre:  # cited both ways by different papers
            works[k] = (pre[k], pub[k])
            seen.update(id(p) for _, p in pre[k])
    return works


def build_literature(folder: Path, published: list[Paper]) -> None:
    bib = folder.parent / "published.bib"
    bib.write_text("\n\n".join(p.bibtex or "" for p in published), encoding="utf-8")
    Library.open(Settings(library=folder)).import_files([bib], defer_embedding=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "../shared/data/drafts-dev")
    ap.add_argument("--distractors", type=int, default=300)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    by_paper = entries(args.data)
    works = gold_pairs(by_paper)
    gold_pub = {id(p): p for _, pubs in works.values() for _, p in pubs}
    others = sorted((p for ps in by_paper.values() for p in ps if id(p) not in gold_pub and preprint_form(p) is None
                     and published_of(p) is not None), key=lambda p: (p.key or "", p.title))
    literature = list(gold_pub.values()) + others[:args.distractors]
    preprints = [(n, p) for n, ps in by_paper.items() for p in ps if preprint_form(p) is not None]
    with tempfile.TemporaryDirectory(prefix="published-eval-") as tmp:
        folder = Path(tmp) / "literature"
        t0 = time.perf_counter()
        build_literature(folder, literature)
        built = time.perf_counter() - t0
        source = LocalLiterature.open(folder)
        t0 = time.perf_counter()
        found = {}
        for name in by_paper:
            mine = [p for n, p in preprints if n == name]
            for v in find_published(source, mine):
                found[(name, v.key)] = v
        asked = time.perf_counter() - t0
    work_of = {id(p): k for k, (pres, _) in works.items() for _, p in pres}
    right_works, wrong = set(), []
    for name, p in preprints:
        v = found.get((name, p.key))
        if v is None:
            continue
        work = work_of.get(id(p))
        gold = works[work][1] if work else []
        if work and any(v.published.source_id == g.doc_id or v.published.venue in (g.venue or "") for _, g in gold):
            right_works.add(work)
        else:
            wrong.append((name, p.key, p.title, v.published.line()))
    missed = sorted(set(works) - right_works)
    out = {"works": len(works), "found": len(right_works), "wrong": len(wrong), "preprint_entries": len(preprints),
           "literature_papers": len(literature), "build_s": round(built, 1), "lookup_s": round(asked, 2),
           "missed": [works[k][0][0][1].title for k in missed], "wrong_list": wrong}
    print(json.dumps(out, indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
