"""Named slots on drafts-dev (issue 49 item 1): the named paper first, and a named work with its entry removed.

    python bench/names_eval.py detect --part train --out /tmp/names/named-train.json
    python bench/names_eval.py run /tmp/names/named-train.json --out /tmp/names/run-train.json \
        [--memory LIB/contexts.sqlite] [--removed] [--literature /work/lit/papers-333k]

``detect`` (this branch's detector, :func:`citefinder.retrieve.query.naming.mention_in` with each library's authors'
surnames): every slot whose sentence names a work at its marker, with its gold doc_ids and whether the gold paper is
the named work (:func:`~citefinder.retrieve.query.naming.relation` "same": a *named-gold* slot). ``run`` cites only
those slots with the engine on PYTHONPATH (run it with a main checkout's PYTHONPATH for the "before" figures: it
needs nothing of this branch), each draft's own .bib as its library (under --libraries, reused). Without
``--removed``: the gold's rank among the candidates (hit@1: the named paper first). With ``--removed``: the
named-gold slots cited with their gold left out of the library (the pipeline's ``exclude``): how many are
auto-filled (all wrong), and with ``--literature`` (asked for every such slot) whether the literature's first
paper is the cited one (the papers-333k doc_ids of drafts-dev/contexts.jsonl, or the same work by identity).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/data/drafts-dev"


def _libraries(args: argparse.Namespace, name: str) -> Any:
    from citefinder.config import Settings
    from citefinder.evaluate.drafts import open_draft_library

    folder = args.libraries / f"{name}-{Path(args.bib).stem}{'-mem' if getattr(args, 'memory', None) else ''}"
    library = open_draft_library(Settings(), DATA / name / args.bib, folder)
    if getattr(args, "memory", None):
        from citefinder.library.contexts.api import adopt_memory
        from citefinder.library.contexts.memory import memory_of

        if not memory_of(library).exists():
            adopt_memory(library, args.memory)
    return library


def _slots(library: Any, name: str) -> list[tuple[Any, dict]]:
    from citefinder.text.slots import find_slots

    text = (DATA / name / "draft.txt").read_text(encoding="utf-8")
    gold = [json.loads(x) for x in (DATA / name / "gold.jsonl").read_text().splitlines() if x]
    return list(zip(find_slots(text, library.settings.context_sentences), gold, strict=True))


def detect(args: argparse.Namespace) -> dict:
    from citefinder.evaluate.drafts import key_to_doc_id
    from citefinder.index.authors import AUTHORS
    from citefinder.index.base import derived
    from citefinder.retrieve.query.naming import mention_in, names_of, relation

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    rows = []
    for name in args.papers.split(",") if args.papers else split[args.part]:
        library = _libraries(args, name)
        doc_of = key_to_doc_id(library, DATA / name / args.bib)
        surnames = frozenset(derived(library, AUTHORS).postings)
        for slot, g in _slots(library, name):
            mention = mention_in(slot.focus or slot.sentence, surnames=surnames)
            gold = sorted({doc_of[k] for k in g["keys"] if k in doc_of})
            if mention is None or mention.reading == "person" or not gold:
                continue
            rels = [relation(mention, names_of(p)) for p in library.get(gold)]
            rows.append({"paper": name, "slot": g["slot"], "name": mention.written, "reading": mention.reading,
                         "gold": gold, "named_gold": "same" in rels, "focus": slot.focus})
    named = sum(r["named_gold"] for r in rows)
    print(f"{len(rows)} slots name a work (answerable); {named} cite the named work", file=sys.stderr)
    return {"part": args.part, "papers": args.papers, "bib": args.bib, "rows": rows}


def run(args: argparse.Namespace) -> dict:
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.retrieve.agents.draft import draft_context

    found = json.loads(args.slots.read_text())
    args.bib = found["bib"]
    want: dict[str, dict[int, dict]] = {}
    for r in found["rows"]:
        if r["named_gold"] or not args.removed:
            want.setdefault(r["paper"], {})[r["slot"]] = r
    gold_works = None
    out = []
    for n, (name, rows) in enumerate(sorted(want.items()), 1):
        print(f"[{n}/{len(want)}] {name}", file=sys.stderr, flush=True)
        library = _libraries(args, name)
        tier = None
        if args.literature:
            from citefinder.pipeline.literature import LibraryLiterature, LiteratureTier

            sys.path.insert(0, str(ROOT / "bench"))
            from literature_eval import GoldWorks

            search = LibraryLiterature(library.settings, args.literature, embedder=library.embedder)
            tier = LiteratureTier(search, library, when="always", threshold=library.settings.confidence_threshold)
            gold_works = gold_works or GoldWorks(args.literature)
        pipeline = Pipeline(library.settings, library, literature=tier)
        text = (DATA / name / "draft.txt").read_text(encoding="utf-8")
        lit_gold = {}
        for line in (DATA / "contexts.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row["paper"] == name:
                lit_gold[row["slot"]] = list(row.get("doc_ids") or [])
        base = pipeline.exclude
        slots = _slots(library, name)
        for slot, g in slots:
            r = rows.get(g["slot"])
            if r is None:
                continue
            pipeline.exclude = base | frozenset(r["gold"]) if args.removed else base
            res = pipeline.cite_slot(slot, draft=draft_context(text), draft_slots=len(slots))
            rank = next((i for i, c in enumerate(res.candidates, 1) if c.doc_id in r["gold"]), None)
            sel = res.selection
            lit = list(res.literature)
            picked = sel.paper.doc_id if sel.status == "found" and sel.paper else None
            out.append({**r, "rank": rank, "selected": picked,
                        "confidence": round(sel.confidence, 4), "lit_gold": lit_gold.get(g["slot"], []),
                        "lit_first_gold": bool(lit and gold_works and lit_gold.get(g["slot"])
                                               and gold_works.rank(lit[:1], lit_gold[g["slot"]]) == 1),
                        "lit_rank": gold_works.rank(lit, lit_gold[g["slot"]]) if lit and gold_works
                        and lit_gold.get(g["slot"]) else None,
                        "first": res.candidates[0].doc_id if res.candidates else None,
                        "withdrawn": ((res.trace("select").details or {}).get("open_world") or {}).get("withdrawn")})
        pipeline.exclude = base
    return {"removed": args.removed, "memory": str(args.memory) if args.memory else None,
            "literature": str(args.literature) if args.literature else None, "rows": out, "summary": summary(out)}


def summary(rows: list[dict]) -> dict:
    named = [r for r in rows if r["named_gold"]]
    held = [r for r in named if r["lit_gold"]]
    return {"slots": len(rows), "hit@1": sum(r["rank"] == 1 for r in rows) / max(1, len(rows)),
            "named_gold": len(named), "named_first": sum(r["rank"] == 1 for r in named) / max(1, len(named)),
            "filled": sum(bool(r["selected"]) for r in named),
            "filled_wrong": sum(bool(r["selected"]) and r["selected"] not in r["gold"] for r in named),
            "literature_holds": len(held), "literature_first": sum(r["lit_first_gold"] for r in held)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("detect")
    d.add_argument("--part", choices=("train", "test"), default="train")
    d.add_argument("--papers")
    d.add_argument("--bib", default="refs.bib")
    r = sub.add_parser("run")
    r.add_argument("slots", type=Path)
    r.add_argument("--memory", type=Path)
    r.add_argument("--removed", action="store_true")
    r.add_argument("--literature", type=Path)
    for q in (d, r):
        q.add_argument("--libraries", type=Path, default=Path("/tmp/names/libs"))
        q.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    from citefinder.config import offline_environment

    offline_environment()
    result = detect(args) if args.cmd == "detect" else run(args)
    if "summary" in result:
        print(json.dumps(result["summary"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
