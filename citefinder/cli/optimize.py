"""``citefinder optimize``: compile the LLM picker for a library from labeled excerpts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None] | None = None) -> None:
    p = sub.add_parser(
        "optimize",
        help="compile (optimise) the LLM picker from labeled excerpts; the selector then uses it",
        description="Build training examples from labeled [CITATION] excerpts (JSONL: id, text, gold doc_ids; "
        "e.g. CiteME with --split train), compile the picker with DSPy, and save it in <library>/programs/ "
        "where the LLM selector loads the newest one. Needs an LLM (--llm-model / CITEFINDER_LLM_MODEL).",
    )
    p.add_argument("--examples", type=Path, required=True, help="labeled excerpts (JSONL)")
    p.add_argument("--split", help="keep one split (e.g. train) where the file has them")
    p.add_argument("--limit", type=int, help="use the first N excerpts only")
    p.add_argument("--optimizer", choices=("bootstrap", "mipro"), default="bootstrap",
                   help="dspy.BootstrapFewShot (default) or dspy.MIPROv2 (needs optuna; many more LLM calls)")
    p.add_argument("--demos", type=int, default=3, help="few-shot demos in the compiled prompt (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the candidate shuffle and the optimizer")
    p.add_argument("-o", "--output", type=Path, help="also write the program to this .json file (never over the "
                   "examples, a .bib or inside the library)")
    p.add_argument("--force", action="store_true",
                   help="replace an -o file that is read-only or that CiteFinder did not write for these examples, "
                        "keeping NAME.bak of it (never an input or a .bib)")
    if common is not None:
        common(p)


def run(args: argparse.Namespace, settings: Any) -> int:
    from tqdm import tqdm

    from citefinder.evaluate.dataset import load_items
    from citefinder.library.store import Library
    from citefinder.train.optimize import optimize

    plan = None
    if args.output is not None:  # before any work: never over the examples, a .bib, or inside the library
        from citefinder.cli.outputs import plan_output

        plan = plan_output("-o", args.output, inputs={"the examples": [args.examples]}, owner=args.examples,
                           force=args.force, library=Path(settings.library), of="these examples", parents=True)
    items = load_items(args.examples, split=args.split, limit=args.limit)
    library = Library.open(settings)
    bars: dict[str, tqdm] = {}

    def progress(done: int, total: int | None, stage: str) -> None:
        if stage == "saved":
            return
        bar = bars.get(stage)
        if bar is None:
            for old in bars.values():
                old.close()
            label = "building examples" if stage == "examples" else f"compiling ({args.optimizer})"
            bar = bars[stage] = tqdm(total=total, desc=label, unit="step", file=sys.stderr, dynamic_ncols=True)
        bar.update(done - bar.n)

    try:
        report = optimize(settings, items, library, optimizer=args.optimizer, demos=args.demos, seed=args.seed,
                          source=args.examples.name, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    print(f"{report.examples} training examples ({report.abstain_examples} abstentions), "
          f"{len(report.skipped)} excerpts skipped; {report.demos} demos "
          f"({report.bootstrapped_demos} bootstrapped) after {report.metric_calls} scored answers "
          f"in {report.elapsed_s:.1f} s")
    for reason in report.skipped[:20]:
        print(f"  skipped {reason}")
    print(f"program saved: {report.program} (the LLM selector now uses it)")
    if plan is not None:
        from citefinder.cli.outputs import said_backups

        plan.put(args.output, report.program.read_bytes())
        said_backups(plan.commit())
        print(f"copy written to {args.output}")
    return 0
