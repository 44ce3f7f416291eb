"""``citefinder embedder``: fine-tune the dense embedder on citing sentences, list the trained ones, and copy a
library onto one.

    citefinder embedder train --contexts contexts.jsonl.gz [--papers papers.jsonl.gz] --library DIR [--into NEWDIR]
    citefinder embedder train --query-only --contexts contexts.jsonl.gz --library DIR
    citefinder embedder list --library DIR
    citefinder embedder use NAME|FOLDER --library DIR --into NEWDIR

A library's vectors and its embedder belong together (opening a library with another embedder is refused),
so a trained embedder never changes a library in place: ``use`` (or ``train --into`` when the new model
beats the library's embedder on held-out citing papers) writes a new library folder holding the same
papers embedded by it, and the old folder stays as it was.

``train --query-only`` trains the other way: only the query side (the top layers of the library's own
embedder) learns, against the frozen vectors the library's embedder gives the cited papers, so the library
is used as it is, with ``CITEFINDER_QUERY_ENCODER=<the model folder>`` (:mod:`citefinder.library.encoders.query_side`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from citefinder.cli.options import tqdm_bar
from citefinder.cli.report import metrics_table
from citefinder.errors import CitefinderError, InputError


def add_parser(subparsers: Any) -> None:
    """Register ``citefinder embedder ...``."""
    from citefinder.cli.options import add_library_options
    from citefinder.train.embedder.query_only import QueryOnlyConfig
    from citefinder.train.embedder.train import TrainConfig

    d, q = TrainConfig(), QueryOnlyConfig()
    top = subparsers.add_parser("embedder", help="fine-tune the dense embedder on citing sentences; use it")
    sub = top.add_subparsers(dest="embedder_command", required=True)

    p = sub.add_parser(
        "train",
        help="fine-tune a sentence embedder on a citation-context pack (CPU; hours for a large pack)",
        description="Fine-tune a bi-encoder on (citing sentence -> cited paper) pairs of a citation-context pack: "
        "in-batch negatives plus one hard negative per sentence (another paper its citing paper cites). A share "
        "of the citing papers is held out; the model is saved with a card giving its held-out recall next to "
        "the library's current embedder, and with --into it becomes the embedder of a new copy of the library "
        "only when it beats the current one (--adopt auto).",
    )
    p.add_argument("--contexts", nargs="+", type=Path, required=True, metavar="FILE",
                   help="citation-context pack(s), JSONL or .jsonl.gz (schema in the README), or your LaTeX "
                        "projects (a folder, a .zip, a .tex with its .bib): every \\cite with its sentence")
    p.add_argument("--papers", type=Path, metavar="FILE",
                   help="JSONL(.gz) of papers (doc_id, title, abstract): abstracts of cited papers known by doc_id")
    p.add_argument("--split", default="train", help="pack split to use ('any' for all records; default train)")
    p.add_argument("--sources", help="comma-separated record sources to keep (e.g. latex,markdown; default all)")
    p.add_argument("--val-fraction", type=float, default=0.05,
                   help="share of citing papers held out for validation (default 0.05)")
    p.add_argument("--val-queries", type=int, default=2000,
                   help="held-out sentences measured (default 2000; 0 skips the measure)")
    p.add_argument("--val-distractors", type=int, default=5000,
                   help="papers cited in the training part added to the held-out corpus (default 5000)")
    p.add_argument("--max-pairs", type=int, help="train on a seeded sample of this many pairs")
    p.add_argument("--max-steps", type=int, help="stop after this many steps")
    p.add_argument("--checkpoint-every", type=int, default=0, metavar="N",
                   help="also save the model every N steps into <output>.checkpoints/step-N")
    p.add_argument("-o", "--output", type=Path, metavar="DIR", help="model folder (default <library>/embedders/NAME)")
    p.add_argument("--name", help="model name (default emb-<base>-<date>)")
    p.add_argument("--base", default=d.base_model, help=f"model to start from (default {d.base_model})")
    p.add_argument("--epochs", type=int, help=f"default {d.epochs} ({q.epochs} with --query-only)")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help=f"sentences per step (default {d.batch_size})")
    p.add_argument("--lr", type=float, help=f"learning rate (default {d.learning_rate}; {q.learning_rate} with "
                   "--query-only)")
    p.add_argument("--doc-max-length", type=int, default=d.doc_max_length,
                   help=f"tokens of a cited paper's text while training (default {d.doc_max_length})")
    p.add_argument("--no-hard-negatives", action="store_true", help="in-batch negatives only")
    p.add_argument("--query-only", action="store_true",
                   help="train only the query side (the top --layers of the library's embedder) against the frozen "
                        "vectors the library's embedder gives every cited paper (all of them negatives): no library "
                        "is re-embedded; use it with CITEFINDER_QUERY_ENCODER=<model folder>")
    p.add_argument("--layers", type=int, default=3,
                   help="with --query-only: top encoder layers trained (default 3; the rest stay the base's)")
    p.add_argument("--threads", type=int, default=0, help="torch compute threads (default: torch's choice)")
    p.add_argument("--seed", type=int, default=d.seed, help=f"default {d.seed}")
    p.add_argument("--into", type=Path, metavar="NEWDIR",
                   help="when it wins (see --adopt), copy the library into this new folder embedded by the model")
    p.add_argument("--adopt", choices=("auto", "yes", "no"), default="auto",
                   help="with --into: auto = only when it beats the library's embedder on held-out data (default)")
    add_library_options(p)

    p = sub.add_parser("list", help="the library's trained embedders and their held-out recall")
    p.add_argument("--json", action="store_true")
    add_library_options(p)

    p = sub.add_parser("use", help="copy the library into a new folder embedded by a trained embedder")
    p.add_argument("target", help="a name under <library>/embedders/, or a sentence-transformers / ONNX folder")
    p.add_argument("--into", type=Path, required=True, metavar="NEWDIR", help="the new library folder (must not exist)")
    add_library_options(p)


def run(args: argparse.Namespace, settings: Any) -> int:
    if args.embedder_command == "train":
        return cmd_train(args, settings)
    if args.embedder_command == "list":
        return cmd_list(args, settings)
    return cmd_use(args, settings)


def _bar(desc: str, unit: str, total: int | None = None) -> Any:
    return tqdm_bar(desc, unit, total, mininterval=2)


def current_embedder(settings: Any) -> tuple[str, int]:
    """The embedder (name, max_seq_length) of the configured library: the one its manifest records, else the setting."""
    from citefinder.library.store.manifest import read_manifest

    saved = read_manifest(Path(settings.library)).get("embedder") or {}
    seq = saved.get("max_seq_length") or settings.embed_max_seq_length
    return str(saved.get("name") or settings.embedder), int(seq)


def format_metrics(metrics: dict[str, dict[str, Any]]) -> str:
    from citefinder.train.embedder.validate import METRICS

    return metrics_table("embedder", metrics, METRICS)


def cmd_train(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.train.embedder.pack import load_pairs, split_by_citing, subsample
    from citefinder.train.embedder.train import TrainConfig, train_embedder

    missing = [str(p) for p in args.contexts if not Path(p).exists()]
    missing += [str(args.papers)] if args.papers and not Path(args.papers).is_file() else []
    if missing:
        raise InputError(f"No such file: {', '.join(missing)}")
    if args.query_only and args.into:
        raise InputError("--query-only trains a query encoder for this library as it is: no new library is made, "
                         "so --into does not apply (use the model with CITEFINDER_QUERY_ENCODER=<model folder>).")
    output, name = _output(args, settings)  # checked before any work, as --into is
    if args.into:
        _check_into(settings, args.into)
    import torch

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    d = TrainConfig()
    config = TrainConfig(base_model=args.base, epochs=args.epochs or d.epochs, batch_size=args.batch_size,
                         doc_max_length=args.doc_max_length, learning_rate=args.lr or d.learning_rate,
                         hard_negatives=not args.no_hard_negatives, seed=args.seed)
    split = None if args.split == "any" else args.split
    bar = _bar("reading contexts", " records")
    sources = [s.strip() for s in args.sources.split(",") if s.strip()] if args.sources else None
    pairs = load_pairs(args.contexts, split=split, sources=sources, papers=args.papers,
                       progress=lambda n: bar.update(n - bar.n))
    bar.close()
    if len(pairs) < 2:
        raise InputError(f"Fewer than 2 usable citing sentences (split {args.split}) in "
                         f"{', '.join(map(str, args.contexts))}.")
    train_pairs, val_pairs = split_by_citing(pairs, args.val_fraction, args.seed)
    if len(train_pairs) < 2:  # a few citing papers, all of them drawn for the held-out part
        print(f"{len({p.citing for p in pairs})} citing papers are too few to hold some out: training on all of "
              "them, not measured")
        train_pairs, val_pairs = pairs, []
    train_pairs = subsample(train_pairs, args.max_pairs, args.seed)
    print(f"{len(pairs)} pairs ({sum(p.has_abstract for p in pairs)} with an abstract); training on "
          f"{len(train_pairs)}, {len(val_pairs)} held out ({len({p.citing for p in val_pairs})} citing papers)")

    current, seq = current_embedder(settings)
    card = {"data": {"sources": [str(p) for p in args.contexts], "papers": str(args.papers or ""),
                     "split": args.split, "record_sources": sources or "all", "val_fraction": args.val_fraction,
                     "held_out_pairs": len(val_pairs)},
            "library": {"path": str(Path(settings.library).resolve()), "embedder": current}}
    if args.query_only:
        return _train_query_only(args, settings, train_pairs, val_pairs, output, card)
    bar, on_step = _training_bar("training")
    try:
        result = train_embedder(train_pairs, output, config, max_steps=args.max_steps,
                                checkpoint_every=args.checkpoint_every, card=card, progress=on_step)
    finally:
        bar.close()
    print(f"trained {result.steps} steps on {len(train_pairs)} pairs in {result.elapsed_s / 60:.1f} min "
          f"({result.pairs_per_s:.2f} pairs/s); saved to {result.path}")
    wins = _measure(args, train_pairs, val_pairs, result.path, current, seq, query_only=False)
    if not args.into:
        verdict = {None: "not measured against", True: "it beats", False: "it does not beat"}[wins]
        target = name if args.output is None else str(result.path)
        print(f"{verdict} the library's embedder {current!r} on held-out citing papers; to use it: "
              f"citefinder embedder use {target} --library {settings.library} --into NEWDIR")
        return 0
    if args.adopt == "yes" or (args.adopt == "auto" and wins):
        return _copy_library(settings, result.path, args.into)
    print(f"kept the library as it is: {name} does not beat {current!r} on held-out citing papers"
          + (" (not measured)" if wins is None else "") + f"; nothing written to {args.into}")
    return 0


def _output(args: argparse.Namespace, settings: Any) -> tuple[Path, str]:
    """The model folder (checked: never over an input, the library or a folder CiteFinder did not make) and the
    model's name."""
    from citefinder.cli.outputs import model_folder
    from citefinder.train.embedder.card import embedders_dir
    from citefinder.train.embedder.train import TrainConfig

    base = current_embedder(settings)[0] if args.query_only else args.base or TrainConfig().base_model
    prefix = "query" if args.query_only else "emb"
    name = args.name or (args.output.name if args.output else
                         f"{prefix}-{Path(base).name}-{time.strftime('%Y%m%d-%H%M')}")
    inputs = [*args.contexts, *([args.papers] if args.papers else [])]
    output = model_folder("-o", args.output or embedders_dir(Path(settings.library)) / name, inputs=inputs,
                          library=Path(settings.library), kind="citefinder_embedder")
    return output, name


def _check_into(settings: Any, into: Path) -> Path:
    """``--into NEWDIR``: a new (or empty) folder, never a file, the library or a folder holding or inside it."""
    from citefinder.text.safewrite import WritePlan

    plan = WritePlan()
    plan.protect_folder("the library folder", Path(settings.library))
    return plan.target_folder("--into", into, ours=lambda _folder: False)  # a library is never overwritten


def _train_query_only(args: argparse.Namespace, settings: Any, train_pairs: list, val_pairs: list, output: Path,
                      card: dict[str, Any]) -> int:
    """``train --query-only``: the query side against the library embedder's frozen document vectors, measured
    on held-out citing papers against the library's own query side (same documents, same vectors)."""
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.train.embedder.query_only import QueryOnlyConfig, document_pool, train_query_encoder

    current, seq = current_embedder(settings)
    q = QueryOnlyConfig()
    config = QueryOnlyConfig(base_model=current, layers=args.layers, epochs=args.epochs or q.epochs,
                             batch_size=args.batch_size, learning_rate=args.lr or q.learning_rate, seed=args.seed)
    library_side = Embedder(current, seq)
    print(f"embedding the {len({p.doc for p in train_pairs})} cited papers once, as the library's embedder "
          f"{current!r} does (their vectors stay frozen)")
    pool = document_pool(train_pairs, library_side.encode)
    bar, on_step = _training_bar("training the query side")
    try:
        result = train_query_encoder(train_pairs, output, pool, config, max_steps=args.max_steps, card=card,
                                     progress=on_step)
    except ValueError as e:
        raise InputError(str(e)) from e
    finally:
        bar.close()
    print(f"trained {result.steps} steps on {len(train_pairs)} pairs in {result.elapsed_s / 60:.1f} min "
          f"({result.pairs_per_s:.2f} pairs/s, top {config.layers} layers); saved to {result.path}")
    wins = _measure(args, train_pairs, val_pairs, result.path, current, seq, query_only=True)
    verdict = {None: "not measured against", True: "it beats", False: "it does not beat"}[wins]
    print(f"{verdict} the library's own query side on held-out citing papers; the library is unchanged. To use it: "
          f"CITEFINDER_QUERY_ENCODER={result.path} (papers keep the vectors {current!r} gave them)")
    return 0


def _training_bar(desc: str) -> tuple[Any, Any]:
    """A progress bar of training steps, and the callback that moves it."""
    bar = _bar(desc, "step")

    def on_step(p: Any) -> None:
        bar.total = p.total
        bar.set_postfix(epoch=p.epoch, loss=f"{p.loss:.3f}", pairs_s=f"{p.pairs_per_s:.1f}", refresh=False)
        bar.update(p.step - bar.n)

    return bar, on_step


def _measure(args: argparse.Namespace, train_pairs: list, val_pairs: list, model: Path, current: str, seq: int, *,
             query_only: bool) -> bool | None:
    """The trained model against the library's embedder on held-out citing papers (written into its card and
    printed); None when nothing is held out. ``query_only``: the model embeds only the queries, the papers keep
    the library embedder's vectors (made once for both)."""
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.train.embedder.card import update_card
    from citefinder.train.embedder.validate import dense_metrics, embedder_wins, held_out_set

    if not val_pairs or args.val_queries <= 0:
        return None
    data = held_out_set(val_pairs, train_pairs, max_queries=args.val_queries, distractors=args.val_distractors,
                        seed=args.seed)
    print(f"measuring on {len(data.queries)} held-out sentences against {len(data.corpus_ids)} papers")
    library_side, trained = Embedder(current, seq), Embedder(str(model), seq)
    if query_only:
        docs = library_side.encode(list(data.corpus_texts))
        metrics = {f"{current} (library)": dense_metrics(library_side.encode, data, docs=docs),
                   model.name: dense_metrics(library_side.encode, data, docs=docs, encode_queries=trained.encode)}
    else:
        metrics = {f"{current} (library)": dense_metrics(library_side.encode, data),
                   model.name: dense_metrics(trained.encode, data)}
    wins = embedder_wins(*metrics.values())
    update_card(model, metrics=metrics, held_out=data.to_dict(), wins=wins)
    print(format_metrics(metrics))
    return wins


def _resolve_target(settings: Any, target: str) -> Path:
    from citefinder.train.embedder.card import embedders_dir

    folder = embedders_dir(Path(settings.library)) / target
    folder = folder if folder.is_dir() else Path(target).expanduser()
    if not folder.is_dir():
        raise CitefinderError(f"No embedder {target!r}: not a folder, nor a name under "
                              f"{embedders_dir(Path(settings.library))}.")
    return folder.resolve()


def _copy_library(settings: Any, model: Path, into: Path) -> int:
    from citefinder.cli.options import progress_bar
    from citefinder.library.store import Library

    _check_into(settings, into)
    current, seq = current_embedder(settings)
    source = Library.open(settings.with_overrides(embedder=current, embed_max_seq_length=seq))
    target = Library.open(settings.with_overrides(library=into, embedder=str(model)))
    update, close = progress_bar("embedding", "papers")
    try:
        report = target.add_papers(source.iter_papers(), total=source.count(), progress=update)
    finally:
        close()
    print(f"{into}: {report.added} papers embedded by {model} ({report.elapsed_s:.0f} s). Open it with "
          f"--library {into} --embedder {model} (or CITEFINDER_EMBEDDER={model}).")
    return 0


def cmd_use(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.rank.cards import read_card

    folder = _resolve_target(settings, args.target)
    if (read_card(folder) or {}).get("query_only"):
        raise InputError(f"{folder.name} is a query encoder (trained with --query-only): it embeds queries against "
                         "this library's vectors as they are, so no copy is needed. Use it with "
                         f"CITEFINDER_QUERY_ENCODER={folder}")
    return _copy_library(settings, folder, args.into)


def cmd_list(args: argparse.Namespace, settings: Any) -> int:
    import json

    from citefinder.train.embedder.card import list_embedders

    models = list_embedders(Path(settings.library))
    current, _ = current_embedder(settings)
    if args.json:
        print(json.dumps({"current": current, "embedders": [{"path": str(p), **c} for p, c in models]}, indent=2))
        return 0
    print(f"the library's embedder: {current}")
    if not models:
        print("no trained embedders (citefinder embedder train --contexts PACK)")
    for path, card in models:
        metrics = list((card.get("metrics") or {}).values())
        measured = (f"held-out MRR {metrics[0]['mrr']:.3f} -> {metrics[1]['mrr']:.3f} "
                    f"({'wins' if card.get('wins') else 'does not win'})") if len(metrics) == 2 else "not measured"
        t = card.get("training", {})
        kind = " (query side only: CITEFINDER_QUERY_ENCODER)" if card.get("query_only") else ""
        print(f"  {path.name}{kind}: base {card.get('base_model')}, {t.get('pairs_seen', '?')} pairs in "
              f"{t.get('train_seconds', '?')} s, {measured}, created {card.get('created', '?')}")
    return 0
