"""Off-topic slots: how often the engine auto-fills a slot whose sentence cites nothing in the library.

    python bench/offtopic.py generate                                 # bench/offtopic/random-words.txt (seeded)
    python bench/offtopic.py run --library sample --out bench/out/offtopic-sample.json
    python bench/offtopic.py run --library drafts-test --out bench/out/offtopic-drafts.json
    python bench/offtopic.py run --library bench/out/drafts-libs/PAPER --out ...   # one paper's own library

Two sets (issue 29): 300 sentences of random dictionary words with a [CITATION] marker (generated once from
Debian's /usr/share/dict/words with a fixed seed and committed, so a rerun needs no dictionary), and 100
sentences of other fields (ecology, medicine, history, cooking, ...; bench/offtopic/other-field.txt). Each set
is filled as one draft (the draft-level checks see all its slots) at the default threshold, without an LLM.
Libraries: ``sample`` (assets/sample-library.bib) and ``drafts-test`` (the refs-enriched.bib of every
drafts-dev test paper in one library: real abstracts, none from the sentences' fields). Goal: <= 2% of the
slots auto-filled and no paper auto-filled more than 3 times.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

from common import commands

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "bench/offtopic"
SEED = 20261126


def cmd_generate(words_file: Path, n: int = 300) -> None:
    words = [w for w in words_file.read_text(errors="replace").split() if re.fullmatch(r"[A-Za-z]{3,}", w)]
    rng = random.Random(SEED)
    lines = ["# random dictionary words with a marker (bench/offtopic.py generate; seed %d)" % SEED]
    for _ in range(n):
        k = rng.randint(8, 16)
        picked = rng.sample(words, k)
        at = rng.randint(2, k - 1)
        sentence = " ".join(picked[:at]) + " [CITATION] " + " ".join(picked[at:])
        lines.append(sentence[0].upper() + sentence[1:] + ".")
    (HERE / "random-words.txt").write_text("\n".join(lines) + "\n")
    print(f"wrote {n} sentences to {HERE / 'random-words.txt'}")


def sentences(name: str) -> list[str]:
    return [s for s in (HERE / f"{name}.txt").read_text().splitlines() if s.strip() and not s.startswith("#")]


def library_folder(kind: str, out: Path, data: Path) -> Path:
    from citefinder.config import Settings
    from citefinder.library.store import Library

    folder = out / f"offtopic-lib-{kind}"
    if (folder / "library.json").exists():
        return folder
    if kind == "sample":
        files = [ROOT / "assets/sample-library.bib"]
    else:
        split = json.loads((ROOT / "bench/drafts_split.json").read_text())
        files = [data / paper / "refs-enriched.bib" for paper in split["test"]]
    Library.open(Settings(library=folder)).import_files(files)
    return folder


def fill(folder: Path, texts: list[str], threshold: float | None) -> dict:
    from citefinder.config import Settings
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    settings = Settings(library=folder)
    if threshold is not None:
        settings = settings.with_overrides(confidence_threshold=threshold)
    library = Library.open(settings)
    pipeline = Pipeline(settings, library)
    start = time.perf_counter()
    results = pipeline.cite_text("\n\n".join(texts))
    found = [r for r in results if r.selection.status == "found" and r.selection.paper is not None]
    per_paper = Counter(r.selection.paper.title for r in found if r.selection.paper is not None)
    tops = [r.trace("select").details.get("confidence_basis", {}).get("probability", 0.0)  # type: ignore[union-attr]
            for r in results if r.trace("select") is not None]
    return {"slots": len(results), "filled": len(found), "filled_share": round(len(found) / max(1, len(results)), 4),
            "max_per_paper": max(per_paper.values(), default=0), "papers": per_paper.most_common(10),
            "top_confidence_mean": round(sum(tops) / max(1, len(tops)), 4),
            "top_confidence_over_0.5": sum(1 for t in tops if t >= 0.5),
            "held_back": sum(1 for r in results if "hub" in (r.selection.reasoning or "")),
            "library": library.count(), "threshold": settings.confidence_threshold,
            "elapsed_s": round(time.perf_counter() - start, 1)}


def cmd_run(kind: str, out_file: Path, data: Path, threshold: float | None) -> None:
    from citefinder.config import offline_environment

    offline_environment()
    folder = Path(kind) if Path(kind).is_dir() else library_folder(kind, ROOT / "bench/out", data)
    report = {name: fill(folder, sentences(name), threshold) for name in ("random-words", "other-field")}
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(json.dumps(report, indent=1) + "\n")
    for name, r in report.items():
        print(f"{folder.name} / {name}: {r['filled']} of {r['slots']} auto-filled ({r['filled_share']:.1%}), "
              f"most per paper {r['max_per_paper']}, held back as a hub {r['held_back']}, {r['elapsed_s']} s")


def main() -> int:
    p, sub = commands(__doc__)
    g = sub.add_parser("generate")
    g.add_argument("--words", type=Path, default=Path("/usr/share/dict/words"))
    r = sub.add_parser("run")
    r.add_argument("--library", default="sample", help="sample, drafts-test (every test paper's .bib in one "
                   "library) or a library folder (e.g. bench/out/drafts-libs/PAPER, one drafts-dev paper's .bib)")
    r.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    r.add_argument("--threshold", type=float)
    r.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    if args.cmd == "generate":
        cmd_generate(args.words)
    else:
        cmd_run(args.library, args.out, args.data, args.threshold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
