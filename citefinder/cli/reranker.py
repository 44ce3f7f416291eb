"""``citefinder reranker``: train our own cross-encoder from labeled citations, and choose a library's default.

    citefinder reranker examples-from-latex paper.tex refs.bib -o examples.jsonl --library DIR
    citefinder reranker train --examples examples.jsonl [more.jsonl] --library DIR [-o DIR]
    citefinder reranker list --library DIR
    citefinder reranker use NAME|FOLDER|none --library DIR
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from citefinder.cli.options import tqdm_bar
from citefinder.cli.outputs import said_backups
from citefinder.cli.report import metrics_table
from citefinder.errors import CitefinderError, InputError

TOP_NS = (20, 50, 100)
MIN_VALIDATION_QUERIES = 20  # fewer held-out queries measure nothing; then all examples train


def _library_args(p: argparse.ArgumentParser) -> None:
    from citefinder.cli.options import add_library_options

    add_library_options(p)


def add_parser(subparsers: Any) -> None:
    """Register ``citefinder reranker ...``."""
    from citefinder.train.rerank.train import TrainConfig

    d = TrainConfig()
    top = subparsers.add_parser("reranker", help="train a cross-encoder reranker on your citations; pick the default")
    sub = top.add_subparsers(dest="reranker_command", required=True)

    p = sub.add_parser(
        "train",
        help="train a cross-encoder on labeled examples (hard negatives mined from the library)",
        description="Train a cross-encoder reranker on (query, title + abstract) pairs: each example's gold "
        "papers are positives, hard negatives come from the library's own BM25 + dense retrieval. The model "
        "is saved into the library (or -o DIR) with a model card and becomes the library's default reranker "
        "(with --default auto: only when it beats the fused order on held-out examples).",
    )
    p.add_argument("--examples", nargs="+", type=Path, required=True, metavar="FILE",
                   help="JSONL examples: {id, text, gold: [doc_id], answerable} (e.g. from examples-from-latex)")
    p.add_argument("-o", "--output", type=Path, metavar="DIR", help="model folder (default <library>/rerankers/NAME)")
    p.add_argument("--name", help="model name (default ce-<base>-<date>)")
    p.add_argument("--base", default=d.base_model, help=f"encoder to start from (default {d.base_model})")
    p.add_argument("--epochs", type=int, default=d.epochs, help=f"default {d.epochs}")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help=f"default {d.batch_size}")
    p.add_argument("--max-length", type=int, default=d.max_length, help=f"tokens per pair (default {d.max_length})")
    p.add_argument("--lr", type=float, default=d.learning_rate, help=f"learning rate (default {d.learning_rate})")
    p.add_argument("--negatives", type=int, default=d.negatives,
                   help=f"hard negatives per positive (default {d.negatives})")
    p.add_argument("--depth", type=int, default=50, help="fused depth negatives are sampled from (default 50)")
    p.add_argument("--seed", type=int, default=d.seed, help=f"default {d.seed}")
    p.add_argument("--validation", nargs="+", type=Path, metavar="FILE", help="held-out JSONL examples to measure on")
    p.add_argument("--val-fraction", type=float, default=0.2,
                   help="without --validation, hold out this share of the examples (by query, seeded; default 0.2)")
    p.add_argument("--default", choices=("auto", "yes", "no"), default="auto",
                   help="make it the library's default reranker: auto = only if it wins on validation (default)")
    _library_args(p)

    p = sub.add_parser("examples-from-latex", help="training examples from a LaTeX paper and its .bib")
    p.add_argument("tex", type=Path, help="the paper (.tex)")
    p.add_argument("bib", nargs="+", type=Path, help="its BibTeX file(s)")
    p.add_argument("-o", "--output", type=Path, help="JSONL to write (default: standard output); never the paper, "
                   "its files or a .bib")
    p.add_argument("--force", action="store_true",
                   help="replace an -o file that is read-only or that CiteFinder did not write for this paper, "
                        "keeping NAME.bak of it (never the paper's files or a .bib)")
    p.add_argument("--context-sentences", type=int, default=1, help="sentences on each side of the cite (default 1)")
    _library_args(p)

    p = sub.add_parser("list", help="the library's trained rerankers and its default")
    p.add_argument("--json", action="store_true")
    _library_args(p)

    p = sub.add_parser("use", help="set the library's default reranker: a trained name, a folder, or none")
    p.add_argument("target", help="name under <library>/rerankers/, a cross-encoder folder, or 'none'")
    _library_args(p)


def run(args: argparse.Namespace, settings: Any) -> int:
    if args.reranker_command == "train":
        return cmd_train(args, settings)
    if args.reranker_command == "examples-from-latex":
        return cmd_examples_from_latex(args, settings)
    if args.reranker_command == "list":
        return cmd_list(args, settings)
    return cmd_use(args, settings)


def split_by_query(items: list, fraction: float, seed: int) -> tuple[list, list]:
    """(train, validation): a seeded share of the queries held out; each query lies in one part only."""
    ids = sorted({i.id for i in items})
    random.Random(seed).shuffle(ids)
    held = set(ids[: int(round(len(ids) * fraction))])
    return [i for i in items if i.id not in held], [i for i in items if i.id in held]


def format_report(report: dict[str, dict[str, float]]) -> str:
    from citefinder.train.rerank.validate import METRICS

    return metrics_table("order", report, METRICS)


def cmd_train(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.cli.outputs import model_folder
    from citefinder.library.store import Library
    from citefinder.rank.cards import rerankers_dir
    from citefinder.rank.rerank import CrossEncoderReranker
    from citefinder.train.examples import load_examples
    from citefinder.train.rerank.card import set_library_default, update_card
    from citefinder.train.rerank.mining import MinedQuery, mine_hard_negatives
    from citefinder.train.rerank.train import TrainConfig, train_cross_encoder
    from citefinder.train.rerank.validate import reranker_wins, validation_report

    config = TrainConfig(
        base_model=args.base, epochs=args.epochs, batch_size=args.batch_size, max_length=args.max_length,
        learning_rate=args.lr, negatives=args.negatives, seed=args.seed,
    )
    name = args.name or f"ce-{Path(config.base_model).name}-{time.strftime('%Y%m%d-%H%M')}"
    # checked before any work: never over an input, the library or a folder CiteFinder did not make
    output = model_folder("-o", args.output or rerankers_dir(Path(settings.library)) / name,
                          inputs=[*args.examples, *(args.validation or [])], library=Path(settings.library),
                          kind="citefinder_reranker")
    items = load_examples(args.examples)
    if not items:
        raise InputError(f"No answerable examples with gold papers in {', '.join(map(str, args.examples))}.")
    if args.validation:
        train_items, val_items = items, load_examples(args.validation)
        overlap = {i.id for i in train_items} & {i.id for i in val_items}
        train_items = [i for i in train_items if i.id not in overlap]  # never train on what is measured
    elif args.val_fraction > 0 and len(items) * args.val_fraction >= MIN_VALIDATION_QUERIES:
        train_items, val_items = split_by_query(items, args.val_fraction, args.seed)
    else:
        train_items, val_items = items, []
    library = Library.open(settings)

    bar = tqdm_bar("mining negatives", "query", len(train_items))
    mined, report = mine_hard_negatives(
        library, train_items, negatives=config.negatives, depth=args.depth, seed=config.seed,
        progress=lambda done, total: bar.update(done - bar.n),
    )
    bar.close()
    print(f"mined {report.negatives} hard negatives for {report.mined} queries in {report.elapsed_s:.0f} s "
          f"(skipped: {report.no_gold_in_library} without gold in the library, {report.empty_query} empty)")
    val_mined: list[MinedQuery] = []
    if val_items:
        bar = tqdm_bar("retrieving validation queries", "query", len(val_items))
        val_mined, _ = mine_hard_negatives(library, val_items, negatives=0, positive_depth=None,
                                           keep_fused=max(TOP_NS), seed=config.seed,
                                           progress=lambda done, total: bar.update(done - bar.n))
        bar.close()

    bar = tqdm_bar("training", "step")

    def on_step(p: Any) -> None:
        bar.total = p.total
        bar.set_postfix(epoch=p.epoch, loss=f"{p.loss:.3f}", refresh=False)
        bar.update(p.step - bar.n)

    card = {"data": {"sources": [str(p) for p in args.examples], "train_queries": report.mined,
                     "validation_queries": len(val_mined)},
            "library": {"path": str(Path(library.path).resolve()), "papers": library.count(),
                        "embedder": library.embedder.name}}
    try:
        result = train_cross_encoder(mined, output, config, card=card, progress=on_step)
    finally:
        bar.close()
    print(f"trained on {result.pairs} pairs ({result.positives} positive) in {result.elapsed_s / 60:.1f} min; "
          f"saved to {result.path}")

    wins = None
    if val_mined:
        reranker = CrossEncoderReranker(str(result.path), label=name, blend=settings.rerank_blend,
                                        blend_k=settings.rrf_k)
        bar = tqdm_bar("validating", "query", len(val_mined))
        metrics = validation_report(reranker, library, val_mined, TOP_NS,
                                    progress=lambda done, total: bar.update(done - bar.n))
        bar.close()
        wins = reranker_wins(metrics, settings.rerank_top_n, settings.rerank_blend)
        update_card(result.path, metrics=metrics, wins_at_top_n={str(settings.rerank_top_n): wins})
        print(f"validation on {len(val_mined)} held-out queries:\n{format_report(metrics)}")
    if args.default == "yes" or (args.default == "auto" and wins is not False):
        chosen = set_library_default(library.path, result.path, name)
        why = {None: " (not validated: too few examples to hold some out)",
               False: " (as asked, although it does not beat the fused order)"}.get(wins, "")
        print(f"{chosen.name} is now the default reranker of {library.path}{why}")
    elif wins is False:
        print(f"kept the library's current reranker: {name} does not beat the fused order at top-N "
              f"{settings.rerank_top_n} (use it anyway: citefinder reranker use {name} --library {library.path})")
    return 0


def cmd_examples_from_latex(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.library.store import Library
    from citefinder.train.examples import examples_from_latex, examples_jsonl

    plan = _examples_plan(args, settings) if args.output else None  # before any work
    library = Library.open(settings)
    found = examples_from_latex(args.tex, args.bib, library, context_sentences=args.context_sentences)
    if plan is not None:
        plan.put(args.output, examples_jsonl(found.records))
        said_backups(plan.commit())
    else:
        for record in found.records:
            print(json.dumps(record, ensure_ascii=False))
    out = sys.stderr if not args.output else sys.stdout
    print(f"{len(found.records)} examples from {found.citations} citations; {len(found.resolved)} keys resolved "
          f"({', '.join(f'{v} by {k}' for k, v in _count(found.resolved_via).items()) or 'none'}), "
          f"{len(found.unresolved)} not resolved" + (f"; written to {args.output}" if args.output else ""), file=out)
    for key, reason in found.unresolved.items():
        print(f"  unresolved {key}: {reason}", file=out)
    if found.dropped:
        print(f"  {found.dropped} citations dropped: none of their keys resolved", file=out)
    return 0 if found.records else 1


def _examples_plan(args: argparse.Namespace, settings: Any) -> Any:
    """Where ``examples-from-latex -o`` may write: never over the paper, the files it reads, its .bib files
    or inside the library."""
    from citefinder.cli.outputs import plan_output

    files = [args.tex]
    if args.tex.is_file():
        from citefinder.text.project import read_project

        try:
            files += [f.path for f in read_project(args.tex).files]
        except CitefinderError:
            pass  # the paper itself stays protected; its reading error is said by the run
    return plan_output("-o", args.output, inputs={"the paper": files, "its bibliography": args.bib}, owner=args.tex,
                       force=args.force, library=Path(settings.library), of="this paper")


def _count(via: dict[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for how in via.values():
        counts[how] = counts.get(how, 0) + 1
    return counts


def cmd_list(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.rank.cards import library_default, list_rerankers
    from citefinder.train.rerank.validate import stage_name

    library = Path(settings.library)
    default = library_default(library)
    models = list_rerankers(library)
    if args.json:
        print(json.dumps({"default": {"name": default.name, "path": str(default.path)} if default else None,
                          "rerankers": [{"path": str(p), **c} for p, c in models]}, indent=2))
        return 0
    print(f"default: {default.name} ({default.path})" if default else "default: none (rerank skipped)")
    if settings.reranker:
        print(f"note: CITEFINDER_RERANKER={settings.reranker} is set and wins over the library default")
    for path, card in models:
        metrics = card.get("metrics") or {}
        table = metrics if "fused" in metrics else next(iter(metrics.values()), {})  # CLI or bench layout
        fused = table.get("fused")
        reranked = table.get(stage_name(settings.rerank_top_n, settings.rerank_blend))
        measured = f"MRR {fused['mrr']:.3f} -> {reranked['mrr']:.3f}" if fused and reranked else "not validated"
        print(f"  {path.name}: base {card.get('base_model')}, {card.get('training', {}).get('queries', '?')} queries, "
              f"{measured}, created {card.get('created', '?')}")
    return 0


def cmd_use(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.rank.cards import check_cross_encoder_folder, rerankers_dir
    from citefinder.train.rerank.card import clear_library_default, set_library_default

    library = Path(settings.library)
    if args.target.strip().lower() == "none":
        cleared = clear_library_default(library)
        print("the library has no default reranker now" if cleared else "the library had no default reranker")
        return 0
    folder = rerankers_dir(library) / args.target
    folder = folder if folder.is_dir() else Path(args.target).expanduser()
    if not folder.is_dir():
        raise CitefinderError(f"No reranker {args.target!r}: not a folder, nor a name under {rerankers_dir(library)}.")
    check_cross_encoder_folder(folder)
    chosen = set_library_default(library, folder)
    print(f"{chosen.name} is now the default reranker of {library}")
    return 0
