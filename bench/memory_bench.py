"""Measurements of the citation-context memory (issue 20). Every memory here is built from the pack's
TRAIN split only (`citefinder contexts import PACK --split train`), so no drafts-dev paper (not in the
pack), no CiteME excerpt (leak-filtered) and no test-split citing paper (split by citing paper) is in it.

    python bench/memory_bench.py packtest --library LIB50K-MEM --out bench/out/packtest.jsonl
        # the pack's test split as a benchmark file: each test sentence whose cited paper is in the 50k
        # library (cited.doc_id), then: citefinder eval --dataset bench/out/packtest.jsonl --library ...
    python bench/memory_bench.py coverage --drafts bench/out/drafts-test-mem.json
        --citeme bench/out/citeme-test-mem.json --library LIB50K-MEM
        --before-drafts bench/out/drafts-test.json --before-citeme bench/out/citeme-test.json
        # share of slots whose gold paper the memory cites at least once; hit@k split by covered / not
    python bench/memory_bench.py learning --libraries DRAFT-LIBS-WITH-MEMORY --out bench/out/learning.json
        # per drafts-dev test paper: accept the gold for the first half of its slots, fill the second half,
        # with and without learning from those picks
    python bench/memory_bench.py import-time --pack PACK --library LIB --copy-to DIR
        # time `contexts import` of the whole pack into a copy of LIB
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/data"
PACK = DATA / "cite-contexts/contexts.jsonl.gz"
sys.path.insert(0, str(ROOT))


def cmd_packtest(args: argparse.Namespace) -> None:
    """The test split as a query file (schema of ../shared/data): gold = cited.doc_id when the library holds it."""
    from citefinder.config import Settings
    from citefinder.library.contexts.memory import FILE
    from citefinder.library.store import Library

    library = Library.open(Settings(library=args.library))
    held = {p.doc_id for p in library.iter_papers()}
    with sqlite3.connect(f"file:{args.library / FILE}?mode=ro", uri=True) as con:
        in_memory = {r[0] for r in con.execute("SELECT DISTINCT citing FROM records")}
        splits = {r[0] for r in con.execute("SELECT DISTINCT split FROM records")}
    rows, leaked = [], 0
    with gzip.open(args.pack, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            doc = r["cited"].get("doc_id")
            if r["split"] != "test" or doc not in held:
                continue
            if r["citing"]["paper"] in in_memory:
                leaked += 1
                continue
            text = " ".join(x for x in (r.get("prev"), r["text"].replace("[OTHER]", " "), r.get("next")) if x)
            rows.append({"id": r["id"], "text": " ".join(text.split()), "gold": [doc],
                         "gold_titles": [r["cited"]["title"]], "answerable": True, "split": "test",
                         "citing": r["citing"]["paper"]})
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} test sentences citing a paper of the library ({len({r['citing'] for r in rows})} citing "
          f"papers); memory splits {sorted(splits, key=str)}; {leaked} skipped because their citing paper is in the "
          f"memory (must be 0)")


def _hits(outcomes: list[dict[str, Any]], stage: str = "fused") -> dict[str, float]:
    n = len(outcomes)
    if not n:
        return {"n": 0}
    ranks = [o["gold_rank"].get(stage) for o in outcomes]
    out: dict[str, float] = {"n": n}
    for k in (1, 5, 10):
        out[f"hit@{k}"] = sum(1 for r in ranks if r and r <= k) / n
    out["mrr"] = sum(1 / r for r in ranks if r) / n
    out["selected_right"] = sum(1 for o in outcomes if o["selected"] and o["selected"] in o["gold"]) / n
    return out


def _covered_drafts(result: dict[str, Any]) -> dict[str, bool]:
    """item id -> whether the memory of its draft's library cites a gold paper of it."""
    from citefinder.library.contexts.memory import FILE

    libs = Path(result.get("libraries") or "")
    covered: dict[str, bool] = {}
    cache: dict[str, set[str]] = {}
    for o in result["outcomes"]:
        paper = o["id"].split(":")[0]
        if paper not in cache:
            db = libs / f"{paper}-{Path(result['bib']).stem}" / FILE
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                cache[paper] = {r[0] for r in con.execute("SELECT DISTINCT m.doc_id FROM matches m JOIN records r "
                                                            "ON r.id = m.record WHERE r.origin = 'pack'")}
        covered[o["id"]] = any(g in cache[paper] for g in o["gold"])
    return covered


def _covered_library(result: dict[str, Any], library: Path) -> dict[str, bool]:
    from citefinder.library.contexts.memory import FILE

    with sqlite3.connect(f"file:{library / FILE}?mode=ro", uri=True) as con:
        cited = {r[0] for r in con.execute("SELECT DISTINCT doc_id FROM matches")}
    return {o["id"]: any(g in cited for g in o["gold"]) for o in result["outcomes"]}


def _split_table(name: str, covered: dict[str, bool], runs: dict[str, dict[str, Any]]) -> list[str]:
    ans = {label: [o for o in r["outcomes"] if o["answerable"] and o["gold"]] for label, r in runs.items()}
    first = next(iter(ans.values()))
    n_cov = sum(covered.get(o["id"], False) for o in first)
    lines = [f"\n### {name}: {n_cov} of {len(first)} answerable items ({n_cov / max(1, len(first)):.1%}) have a gold "
             "paper the memory cites\n",
             "| part | run | items | fused hit@1 | hit@5 | hit@10 | MRR | selector right |",
             "|---|---|---|---|---|---|---|---|"]
    for part, want in (("covered", True), ("not covered", False), ("all", None)):
        for label, outs in ans.items():
            sel = [o for o in outs if want is None or covered.get(o["id"], False) == want]
            m = _hits(sel)
            if m["n"]:
                lines.append(f"| {part} | {label} | {m['n']:.0f} | {m['hit@1']:.3f} | {m['hit@5']:.3f} | "
                             f"{m['hit@10']:.3f} | {m['mrr']:.3f} | {m['selected_right']:.3f} |")
    return lines


def cmd_coverage(args: argparse.Namespace) -> None:
    lines: list[str] = []
    if args.drafts:
        after = json.loads(args.drafts.read_text())
        runs = {"with memory": after}
        if args.before_drafts:
            runs = {"without": json.loads(args.before_drafts.read_text()), **runs}
        lines += _split_table(f"drafts-dev ({args.drafts.name})", _covered_drafts(after), runs)
    if args.citeme:
        after = json.loads(args.citeme.read_text())
        runs = {"with memory": after}
        if args.before_citeme:
            runs = {"without": json.loads(args.before_citeme.read_text()), **runs}
        lines += _split_table(f"CiteME ({args.citeme.name})", _covered_library(after, args.library), runs)
    print("\n".join(lines))


def cmd_learning(args: argparse.Namespace) -> None:
    """Accept the gold of each test paper's first half of slots (text order), then fill the second half,
    without and with those picks learned; the picks are co-citation seeds of the second half in both runs."""
    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import key_to_doc_id
    from citefinder.library.contexts import api
    from citefinder.library.store import Library
    from citefinder.retrieve.agents.draft import draft_context
    from citefinder.retrieve.query.cocite import picks_near
    from citefinder.text.slots import find_slots
    from citefinder.types import Paper, Query, Selection, SlotResult

    offline_environment()
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    rows: list[dict[str, Any]] = []
    learned_lists: list[dict[str, Any]] = []
    embedder = None
    for paper in split[args.part]:
        folder = args.libraries / f"{paper}-{Path(args.bib).stem}"
        library = Library.open(Settings(library=folder), embedder=embedder)
        embedder = library.embedder
        api.forget(library, ["user"])
        src = args.data / paper
        text = (src / "draft.txt").read_text(encoding="utf-8")
        gold_lines = [json.loads(x) for x in (src / "gold.jsonl").read_text().splitlines() if x.strip()]
        doc_of = key_to_doc_id(library, src / args.bib)
        slots = find_slots(text, library.settings.context_sentences)
        gold = [tuple(dict.fromkeys(doc_of[k] for k in g["keys"] if k in doc_of)) for g in gold_lines]
        half = len(slots) // 2
        first, second = slots[:half], slots[half:]
        accepted = [SlotResult(s, Query(""), (), Selection("found", Paper(g[0], ""), 1.0, "manual"), ())
                    for s, g in zip(first, gold[:half], strict=True) if g]
        s = library.settings
        seeds = {slot.index: picks_near(slot, accepted, s.cocited_chars, s.confidence_threshold) for slot in second}
        draft = draft_context(text)

        without = _fill(library, second, gold[half:], draft, seeds)
        t0 = time.perf_counter()
        learned = api.learn_picks(library, [(sl.focus or sl.sentence, g[0]) for sl, g in zip(first, gold[:half],
                                                                                             strict=True) if g],
                                  citing=f"draft:{paper}")
        learn_s = time.perf_counter() - t0
        with_learning = _fill(library, second, gold[half:], draft, seeds, learned_lists, paper)
        api.forget(library, ["user"])
        n = sum(1 for g in gold[half:] if g)
        r1 = [sum(1 for r in ranks if r == 1) / max(1, n) for ranks in (without, with_learning)]
        again = sum(1 for g in gold[half:] if g and any(d in {x[0] for x in gold[:half] if x} for d in g))
        rows.append({"paper": paper, "second_half": n, "learned": learned, "learn_s": round(learn_s, 2),
                     "cited_again": again, "r1_without": r1[0], "r1_with": r1[1], "ranks_without": without,
                     "ranks_with": with_learning})
        print(f"{paper}: {n} slots, {learned} picks learned ({learn_s:.1f} s), {again} cite a first-half paper "
              f"again; R@1 {r1[0]:.3f} -> {r1[1]:.3f}", flush=True)
    total = sum(r["second_half"] for r in rows)
    micro = [sum(r[k] * r["second_half"] for r in rows) / max(1, total) for k in ("r1_without", "r1_with")]
    print(f"all {len(rows)} papers, {total} second-half slots: R@1 without learning {micro[0]:.3f}, "
          f"with {micro[1]:.3f} ({(micro[1] - micro[0]) * 100:+.1f} points)")
    if args.out:
        args.out.write_text(json.dumps({"papers": rows, "r1_without": micro[0], "r1_with": micro[1]}, indent=1))
    if args.lists:  # the second halves filled with learning, for bench/tune.py (training part only)
        args.lists.write_text(json.dumps({"dataset": f"learning:{args.part}", "outcomes": learned_lists}))


def _fill(library: Any, slots: list[Any], gold: list[tuple[str, ...]], draft: str,
          seeds: dict[int, tuple[str, ...]], lists: list[dict[str, Any]] | None = None,
          paper: str = "") -> list[int | None]:
    """Fill ``slots`` one after another; each slot's rank of its first gold paper (-1: no gold, None: not
    found). ``lists`` collects each slot's agent lists (the shape bench/tune.py reads)."""
    from citefinder.evaluate.runner import agent_lists
    from citefinder.pipeline.concurrency import cite_slots
    from citefinder.pipeline.pipeline import Pipeline

    results = cite_slots(Pipeline(library.settings, library), slots, draft=draft, seeds=seeds)
    ranks: list[int | None] = []
    for r, g in zip(results, gold, strict=True):
        order = [c.doc_id for c in r.candidates]
        ranks.append(min((order.index(d) + 1 for d in g if d in order), default=None) if g else -1)
        if lists is not None and r.slot is not None:
            lists.append({"id": f"{paper}:{r.slot.index}", "text": r.slot.sentence, "gold": list(g),
                          "answerable": bool(g), "library_size": library.count(),
                          "lists": {k: [(h.doc_id, h.rank, round(h.score, 5)) for h in v]
                                    for k, v in agent_lists(r).items()}})
    return ranks


def cmd_import_time(args: argparse.Namespace) -> None:
    """Copy the library (never write the original), then time `citefinder contexts import` of the pack."""
    import subprocess

    if args.copy_to.exists():
        shutil.rmtree(args.copy_to)
    shutil.copytree(args.library, args.copy_to, symlinks=True)
    cmd = [sys.executable, "-m", "citefinder.cli.main", "--library", str(args.copy_to), "contexts", "import",
           str(args.pack), *args.extra]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    print(out.stdout.strip().splitlines()[0])
    print(f"wall {wall:.1f} s (process start, model load and index builds included); load average before: "
          f"{' '.join(load)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("packtest")
    a.add_argument("--library", type=Path, required=True)
    a.add_argument("--pack", type=Path, default=PACK)
    a.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("coverage")
    c.add_argument("--drafts", type=Path)
    c.add_argument("--before-drafts", type=Path)
    c.add_argument("--citeme", type=Path)
    c.add_argument("--before-citeme", type=Path)
    c.add_argument("--library", type=Path, help="the library (with memory) the CiteME run used")
    lr = sub.add_parser("learning")
    lr.add_argument("--libraries", type=Path, required=True, help="the drafts' libraries, each with its memory")
    lr.add_argument("--data", type=Path, default=DATA / "drafts-dev")
    lr.add_argument("--bib", default="refs-enriched.bib")
    lr.add_argument("--part", default="test", choices=("train", "test"))
    lr.add_argument("--out", type=Path)
    lr.add_argument("--lists", type=Path, help="write the learned fills' agent lists (bench/tune.py input)")
    t = sub.add_parser("import-time")
    t.add_argument("--library", type=Path, required=True)
    t.add_argument("--copy-to", type=Path, required=True)
    t.add_argument("--pack", type=Path, default=PACK)
    t.add_argument("extra", nargs="*", help="more arguments of contexts import (after --)")
    args = p.parse_args()
    {"packtest": cmd_packtest, "coverage": cmd_coverage, "learning": cmd_learning,
     "import-time": cmd_import_time}[args.cmd](args)


if __name__ == "__main__":
    main()
