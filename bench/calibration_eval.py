"""The confidence per library size and draft length: drafts-dev cut into the drafts and libraries users bring.

    python bench/calibration_eval.py --part train --out bench/out/cal-train.json     # fit on this one only
    python bench/calibration_eval.py --part test --out bench/out/cal-test.json       # report this one
    python bench/calibration_eval.py --report bench/out/cal-test.json [--model FILE] # the table, offline

A drafts-dev paper filled against its own .bib is one case only: a long draft whose library is almost
exactly what it cites. A researcher also brings a few sentences against a library of 45 papers, or a
section against 250. Each paper of the part (bench/drafts_split.json) gives, seeded:

- drafts: ``short`` excerpts (consecutive sentences of draft.txt from a sentence with a marker on, until
  they hold at least 5 markers), one ``medium`` excerpt (at least 18 markers), and the ``long`` whole draft;
- libraries of about 45 (for the short excerpts), 100 (short and medium) and 250 papers (all three):
  every .bib entry those excerpts cite, then entries of the same .bib drawn at random, then (when the .bib
  is smaller) entries of the other papers' .bib files of the SAME part; the whole draft is also filled
  against its own .bib as it is (``natural``).

Every scenario's library is imported once under ``--libraries`` (reused while its .bib is unchanged), the
text filled by the real pipeline and every slot scored by key as bench/drafts_eval.py does; each outcome
keeps its agents' lists, ``library_size`` and ``draft_slots`` so bench/tune.py can fit on them offline.
The report: per library-size band (<= 50, 51-150, > 150 papers) and draft-length band (<= 10, 11-40,
> 40 markers), the top candidate's words (likely right / unsure / unlikely: how many, how many right),
and the threshold rule's fills (how many, how many right).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from outcomes import load_outcomes

ROOT = Path(__file__).resolve().parents[1]
SIZES = (45, 100, 250)
SHORT, MEDIUM, SHORT_EXCERPTS = 5, 18, 3
SEED = 20261127
_ENTRY = re.compile(r"^[ \t]*@(\w+)\s*[{(]\s*([^,\s]+)\s*,", re.MULTILINE)
_HEAD = re.compile(r"^[ \t]*@(\w+)", re.MULTILINE)

SIZE_BANDS = (("<= 50", 0, 50), ("51-150", 51, 150), ("> 150", 151, 10**9))
LENGTH_BANDS = (("<= 10", 0, 10), ("11-40", 11, 40), ("> 40", 41, 10**9))


def band(value: int, bands: tuple[tuple[str, int, int], ...]) -> str:
    return next(name for name, lo, hi in bands if lo <= value <= hi)


def bib_entries(text: str) -> tuple[list[str], dict[str, str]]:
    """A .bib as its @string/@preamble/@comment blocks (kept in every subset) and key -> entry text."""
    keep: list[str] = []
    entries: dict[str, str] = {}
    starts = [m.start() for m in _HEAD.finditer(text)] + [len(text)]
    for a, b in zip(starts, starts[1:], strict=False):
        block = text[a:b]
        m = _ENTRY.match(block)
        kind = _HEAD.match(block).group(1).lower()  # type: ignore[union-attr]
        if kind in ("string", "preamble", "comment") or m is None:
            keep.append(block)
        elif m.group(2) not in entries:
            entries[m.group(2)] = block
    return keep, entries


def excerpts(text: str, rng: random.Random) -> list[tuple[str, int, int]]:
    """(name, start, end) character spans of ``text``: SHORT_EXCERPTS short ones, one medium one, the whole."""
    from citefinder.text.slots import find_slots

    slots = find_slots(text)
    lines, pos = [], 0
    for line in text.splitlines(keepends=True):
        lines.append((pos, pos + len(line), sum(1 for s in slots if pos <= s.start < pos + len(line))))
        pos += len(line)

    def span(first: int, need: int) -> tuple[int, int] | None:
        got, j = 0, first
        while j < len(lines) and got < need:
            got += lines[j][2]
            j += 1
        return (lines[first][0], lines[j - 1][1]) if got >= need else None

    starts = [i for i, (_, _, n) in enumerate(lines) if n]
    out: list[tuple[str, int, int]] = []
    used: list[tuple[int, int]] = []
    for first in rng.sample(starts, len(starts)):
        sp = span(first, SHORT)
        if sp and not any(sp[0] < b and a < sp[1] for a, b in used):
            used.append(sp)
            out.append((f"short{len(out)}", *sp))
        if len(out) == SHORT_EXCERPTS:
            break
    for first in rng.sample(starts, len(starts)):
        sp = span(first, MEDIUM)
        if sp:
            out.append(("medium", *sp))
            break
    out.append(("long", 0, len(text)))
    return out


def scenarios(data: Path, papers: list[str], seed: int = SEED) -> list[dict[str, Any]]:
    """Every (paper, excerpt, library) of the part: its text, gold lines and its library's .bib keys.

    A paper's libraries are shared by its excerpts: about 45 papers (what its short excerpts cite, then
    random entries of its .bib), 100 (what the short and medium excerpts cite, ...), 250 (what the whole
    draft cites, ...), each topped up from the other papers of the part when its .bib is smaller, and
    ``natural`` (its .bib as it is)."""
    from citefinder.text.slots import find_slots

    bibs = {p: bib_entries((data / p / "refs-enriched.bib").read_text(encoding="utf-8")) for p in papers}
    out = []
    for paper in papers:
        rng = random.Random(f"{seed}:{paper}")
        text = (data / paper / "draft.txt").read_text(encoding="utf-8")
        gold = [json.loads(line) for line in (data / paper / "gold.jsonl").read_text().splitlines() if line.strip()]
        slots = find_slots(text)
        own = bibs[paper][1]
        others = [(p, k) for p in papers if p != paper for k in sorted(bibs[p][1]) if k not in own]
        cut = []
        for name, a, b in excerpts(text, rng):
            lines = [g for s, g in zip(slots, gold, strict=True) if a <= s.start < b]
            cut.append((name, text[a:b], lines, {k for g in lines for k in g["keys"] if k in own}))
        needs = {45: ("short",), 100: ("short", "medium"), 250: ("short", "medium", "long")}
        libraries: dict[int | str, tuple[list[str], list[tuple[str, str]]]] = {"natural": (sorted(own), [])}
        for size, kinds in needs.items():
            cited = sorted(set().union(*(keys for name, _, _, keys in cut if name.rstrip("0123456789") in kinds)))
            rest = [k for k in sorted(own) if k not in cited]
            keys = cited + rng.sample(rest, max(0, min(len(rest), size - len(cited))))
            libraries[size] = (keys, rng.sample(others, max(0, min(len(others), size - len(keys)))))
        for name, excerpt, lines, _cited in cut:
            kind = name.rstrip("0123456789")
            for size, (keys, extra) in libraries.items():
                if size == "natural" and kind != "long" or size != "natural" and kind not in needs[size]:
                    continue
                if size == 250 and kind == "long" and len(own) >= 150:
                    continue  # its own .bib is already that large
                out.append({"id": f"{paper}:{name}:{size}", "paper": paper, "excerpt": name, "size": size,
                            "library": f"{paper}_{size}", "text": excerpt, "gold": lines, "keys": keys,
                            "extra": extra})
    return out


def write_bib(sc: dict[str, Any], data: Path, folder: Path) -> Path:
    keep, own = bib_entries((data / sc["paper"] / "refs-enriched.bib").read_text(encoding="utf-8"))
    parts = list(keep) + [own[k] for k in sc["keys"]]
    for paper, key in sc["extra"]:
        ekeep, entries = bib_entries((data / paper / "refs-enriched.bib").read_text(encoding="utf-8"))
        parts += [b for b in ekeep if b.lstrip().lower().startswith("@string")] + [entries[key]]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sc['library']}.bib"
    body = "\n".join(p.rstrip() + "\n" for p in parts)
    if not path.exists() or path.read_text(encoding="utf-8") != body:
        path.write_text(body, encoding="utf-8")
    return path


def run(args: argparse.Namespace) -> dict[str, Any]:
    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import key_to_doc_id, open_draft_library
    from citefinder.evaluate.runner import ItemOutcome, agent_lists, best_gold_rank, stage_runs
    from citefinder.pipeline.pipeline import Pipeline

    offline_environment()
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    papers = args.papers.split(",") if args.papers else split[args.part]
    settings = Settings()
    if args.threshold is not None:
        settings = settings.with_overrides(confidence_threshold=args.threshold)
    todo = scenarios(args.data, split[args.part] if not args.papers else papers)
    todo = [sc for sc in todo if sc["paper"] in papers and (not args.only or sc["excerpt"].rstrip("0123456789")
                                                              in args.only.split(","))
            and not (args.skip_natural and sc["size"] == "natural")]
    outcomes, made, embedder = [], [], None
    t0 = time.perf_counter()
    for n, sc in enumerate(todo, start=1):
        if sc["size"] == "natural":  # the library bench/drafts_eval.py makes (and reuses) of the .bib as it is
            bib = args.data / sc["paper"] / "refs-enriched.bib"
            folder = ROOT / "bench/out/drafts-libs" / f"{sc['paper']}-refs-enriched"
        else:
            bib, folder = write_bib(sc, args.data, args.libraries / "bibs"), args.libraries / sc["library"]
        library = open_draft_library(settings, bib, folder, embedder)
        embedder = library.embedder
        pipeline = Pipeline(library.settings, library)
        doc_of = key_to_doc_id(library, bib)
        results = pipeline.cite_text(sc["text"])
        if len(results) != len(sc["gold"]):
            print(f"skipped {sc['id']}: {len(results)} slots, {len(sc['gold'])} gold lines", file=sys.stderr)
            continue
        size = library.count()
        made.append({k: sc[k] for k in ("id", "paper", "excerpt", "size")} | {"papers": size, "slots": len(results)})
        for result, g in zip(results, sc["gold"], strict=True):
            gold = tuple(dict.fromkeys(doc_of[k] for k in g["keys"] if k in doc_of))
            runs = stage_runs(result, pipeline.fusion)
            sel = result.selection
            o = ItemOutcome(
                id=f"{sc['id']}:{g['slot']}", text=result.slot.sentence if result.slot else "", gold=gold,
                answerable=bool(gold), runs={}, gold_rank={s: best_gold_rank(r, gold) for s, r in runs.items()},
                lists={k: [(h.doc_id, h.rank, round(h.score, 5)) for h in v] for k, v in agent_lists(result).items()},
                selected=sel.paper.doc_id if sel.status == "found" and sel.paper else None,
                selected_all=tuple(p.doc_id for p in sel.papers) if sel.status == "found" else (),
                selected_title=None, status=sel.status, confidence=sel.confidence, method=sel.method,
                elapsed_s=sum(t.elapsed_s for t in result.traces))
            top = result.candidates[0].doc_id if result.candidates else None
            select = result.trace("select")
            conf = {h.doc_id: h.score for h in select.top} if select is not None else {}
            outcomes.append({**asdict(o), "library_size": size, "draft_slots": len(results), "top1": top,
                             "top1_p": conf.get(top, 0.0) if top else 0.0,
                             "sentence_mates": sum(1 for r in results if r.slot and result.slot
                                                   and r.slot.sentence == result.slot.sentence)})
        print(f"[{n}/{len(todo)}] {sc['id']}: {size} papers, {len(results)} slots "
              f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return {"dataset": "drafts-dev scenarios", "part": args.part, "papers": papers, "scenarios": made,
            "settings": settings.model_dump(mode="json", exclude={"llm_api_key", "library"}),
            "wall_s": time.perf_counter() - t0, "outcomes": outcomes}


def table(outcomes: list[dict[str, Any]], probs: list[float], threshold: float,
          words: Any = None) -> list[str]:
    """Markdown rows: per band, the top candidates' words (n, share right) and the threshold rule's fills."""
    from citefinder.rank.calibration import LIKELY, UNLIKELY, UNSURE, confidence_words

    words = words or (lambda p, o: confidence_words(p))
    groups: dict[tuple[str, str], list[tuple[float, dict[str, Any]]]] = {}
    for p, o in zip(probs, outcomes, strict=True):
        for key in ((band(o["library_size"], SIZE_BANDS), "all"), ("all", band(o["draft_slots"], LENGTH_BANDS)),
                    (band(o["library_size"], SIZE_BANDS), band(o["draft_slots"], LENGTH_BANDS)), ("all", "all")):
            groups.setdefault(key, []).append((p, o))
    rows = ["| library | draft | slots | top-1 right | likely right: n (right) | unsure: n (right) | "
            "unlikely: n (right) | filled (right) |", "|---|---|---|---|---|---|---|---|"]

    def cell(items: list[tuple[float, dict[str, Any]]]) -> str:
        right = sum(o["top1"] in o["gold"] for _, o in items)
        return f"{len(items)} ({right / len(items):.0%})" if items else "0"

    order = [n for n, _, _ in SIZE_BANDS] + ["all"]
    lorder = [n for n, _, _ in LENGTH_BANDS] + ["all"]
    for key in sorted(groups, key=lambda k: (order.index(k[0]), lorder.index(k[1]))):
        items = groups[key]
        by = {w: [(p, o) for p, o in items if words(p, o) == w] for w in (LIKELY, UNSURE, UNLIKELY)}
        filled = [(p, o) for p, o in items if p >= threshold]
        right = sum(o["top1"] in o["gold"] for _, o in items)
        rows.append(f"| {key[0]} | {key[1]} | {len(items)} | {right / len(items):.0%} | {cell(by[LIKELY])} | "
                    f"{cell(by[UNSURE])} | {cell(by[UNLIKELY])} | {cell(filled)} |")
    return rows


def report(paths: list[Path], model: Path | None, threshold: float | None, cutoffs: str | None = None) -> None:
    """The table of saved runs: as filled (the live confidence; ``cutoffs`` "LIKELY,UNSURE": the words' cut-offs of
    the code that filled them, default today's), or a confidence model replayed offline."""
    from citefinder.rank.calibration import LIKELY, UNLIKELY, UNSURE, Calibration

    outs = load_outcomes(paths)
    if model is None:
        probs = [o["top1_p"] for o in outs]
        t = threshold if threshold is not None else 0.55
        if cutoffs:
            likely, unsure = (float(x) for x in cutoffs.split(","))
            print("\n".join(table(outs, probs, t, lambda p, o: LIKELY if p >= likely else UNSURE if p >= unsure
                                   else UNLIKELY)))
            return
    else:
        sys.path.insert(0, str(ROOT / "bench"))
        from tune import scenario_rows

        raw = json.loads(model.read_text())
        cal = Calibration.from_dict(raw)
        outs = [o for o in outs if o.get("lists")]
        feats, _ = scenario_rows(outs)
        probs = [cal.probability(f) for f in feats]
        t = threshold if threshold is not None else 0.55
        from citefinder.rank.calibration import LIKELY, LIKELY_AT, UNLIKELY, UNSURE, UNSURE_AT

        # the model's own cut-offs (a model without them: the cut-offs shipped with it, 0.7 and 0.4)
        cut = (raw.get("adjust") or {}).get("words") or {"likely": LIKELY_AT, "unsure": UNSURE_AT}

        def words(p: float, o: dict[str, Any]) -> str:
            return LIKELY if p >= cut["likely"] else UNSURE if p >= cut["unsure"] else UNLIKELY

        print("\n".join(table(outs, probs, t, words)))
        return
    print("\n".join(table(outs, probs, t)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    p.add_argument("--part", choices=("train", "test"), default="train")
    p.add_argument("--papers", help="comma-separated paper names of the part (default: all of it)")
    p.add_argument("--only", help="comma-separated excerpt kinds: short, medium, long")
    p.add_argument("--libraries", type=Path, default=ROOT / "bench/out/cal-libs")
    p.add_argument("--threshold", type=float)
    p.add_argument("--skip-natural", action="store_true", help="leave out the whole drafts against their own .bib "
                   "(bench/drafts_eval.py --traces runs give them: pass those to --report)")
    p.add_argument("--out", type=Path)
    p.add_argument("--report", nargs="+", type=Path, help="print the table of saved runs (no filling)")
    p.add_argument("--model", type=Path, help="with --report: a confidence model to replay instead of the live one")
    p.add_argument("--words", help="with --report and no --model: the cut-offs LIKELY,UNSURE the runs were read with")
    args = p.parse_args()
    if args.report:
        report(args.report, args.model, args.threshold, args.words)
        return 0
    result = run(args)
    print("\n".join(table(result["outcomes"], [o["top1_p"] for o in result["outcomes"]],
                          args.threshold if args.threshold is not None else 0.55)))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
