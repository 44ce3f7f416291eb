"""Training only the query side (``citefinder embedder train --query-only``, issue 28): the library embedder's
document vectors stay frozen, only the top layers learn, the library is used as it is through
``query_encoder``, and a query encoder is never mistaken for a library's embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_embedder_train import _real_pairs, _write_jsonl

from citefinder.config import Settings
from citefinder.library.encoders.embedder import MINILM, MPNET, Embedder
from citefinder.library.encoders.query_side import SAME, query_side
from citefinder.rank.cards import read_card
from citefinder.train.embedder.pack import load_pairs
from citefinder.train.embedder.query_only import QueryOnlyConfig, document_pool, train_query_encoder
from citefinder.train.embedder.validate import dense_metrics, held_out_set

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def query_training(tmp_path_factory):
    """24 real pairs, the top 2 layers trained for 4 short epochs against MiniLM's frozen paper vectors."""
    root = tmp_path_factory.mktemp("query-only")
    pairs = load_pairs([_write_jsonl(root / "pack.jsonl", _real_pairs(3, 8))])
    base = Embedder(MINILM)
    pool = document_pool(pairs, base.encode)
    config = QueryOnlyConfig(layers=2, epochs=4, batch_size=8, query_max_length=64, learning_rate=3e-4)
    result = train_query_encoder(pairs, root / "query", pool, config, card={"data": {"sources": ["pack"]}})
    return pairs, pool, result


def _weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_only_the_top_layers_change_and_the_card_says_what_it_fits(query_training):
    from citefinder.train.embedder.train import resolve_base_model

    pairs, pool, result = query_training
    trained, base = _weights(result.path), _weights(Path(resolve_base_model(MINILM)))
    trained = {n.removeprefix("bert."): v for n, v in trained.items()}
    base = {n.removeprefix("bert."): v for n, v in base.items()}
    assert set(trained) - {"embeddings.position_ids"} <= set(base)
    changed = {n for n in trained if "position_ids" not in n and not np.array_equal(trained[n], base[n])}
    assert changed and all(n.split("encoder.layer.")[-1].split(".")[0] in {"4", "5"} for n in changed), changed
    assert any("encoder.layer.5." in n for n in changed) and any("encoder.layer.4." in n for n in changed)
    card = read_card(result.path)
    assert card["query_only"] == {"document_embedder": MINILM, "layers": 2, "trainable_params": card["query_only"][
        "trainable_params"], "documents": len(pool.keys)}
    assert 0 < card["query_only"]["trainable_params"] < 22_000_000 / 2
    assert card["training"]["pairs"] == 24 and card["training"]["steps"] == 12


def test_trained_queries_find_the_cited_papers_among_the_unchanged_document_vectors(query_training):
    pairs, pool, result = query_training
    data = held_out_set(pairs, [], max_queries=None, distractors=0)
    base = Embedder(MINILM)
    docs = base.encode(list(data.corpus_texts))
    assert np.allclose(docs, pool.vectors[[pool.keys.index(d) for d in data.corpus_ids]], atol=1e-5)  # frozen
    before = dense_metrics(base.encode, data, docs=docs)
    after = dense_metrics(base.encode, data, docs=docs, encode_queries=Embedder(str(result.path)).encode)
    assert after["mrr"] > before["mrr"] + 0.05, (before, after)


def test_a_query_encoder_fits_only_the_embedder_it_was_trained_against(query_training):
    _, _, result = query_training
    side = query_side(str(result.path), Embedder(MINILM))
    assert side.name == str(result.path) and side.embedder.name == str(result.path) and not side.note
    other = Embedder(MPNET)  # nothing is loaded: decided by the card
    side = query_side(str(result.path), other)
    assert side.embedder is other and side.name == SAME and "'minilm'" in side.note and "'mpnet'" in side.note


def test_cli_trains_the_query_side_of_a_library_that_is_then_used_as_it_is(tmp_path: Path, sampled_records,
                                                                         capsys):
    from citefinder.cli.main import main
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    papers, _ = sampled_records
    lib = tmp_path / "lib"
    assert main(["library", "import", str(_write_jsonl(tmp_path / "papers.jsonl", papers[:12])),
                 "--library", str(lib)]) == 0
    manifest = (lib / "library.json").read_text()
    pack = _write_jsonl(tmp_path / "pack.jsonl", _real_pairs(6, 6))
    assert main(["embedder", "train", "--query-only", "--contexts", str(pack), "--library", str(lib), "--into",
                 str(tmp_path / "new")]) == 2
    assert "--into does not apply" in capsys.readouterr().err and not (tmp_path / "new").exists()
    code = main(["embedder", "train", "--query-only", "--contexts", str(pack), "--library", str(lib), "--name", "q",
                 "--max-steps", "2", "--batch-size", "4", "--layers", "1", "--val-fraction", "0.25",
                 "--val-queries", "10", "--val-distractors", "5"])
    out = capsys.readouterr().out
    assert code == 0, out
    folder = lib / "embedders" / "q"
    card = read_card(folder)
    assert card["query_only"]["layers"] == 1 and card["training"]["steps"] == 2 and isinstance(card["wins"], bool)
    assert set(card["metrics"]) == {"minilm (library)", "q"}
    assert "corpus_docs_per_s" not in card["metrics"]["q"]  # the papers' vectors were made once, for both
    assert f"CITEFINDER_QUERY_ENCODER={folder}" in out and "the library is unchanged" in out
    assert (lib / "library.json").read_text() == manifest

    assert main(["embedder", "use", "q", "--library", str(lib), "--into", str(tmp_path / "copy")]) == 2
    assert "is a query encoder" in capsys.readouterr().err and not (tmp_path / "copy").exists()
    assert main(["embedder", "list", "--library", str(lib)]) == 0
    assert "q (query side only" in capsys.readouterr().out

    settings = Settings(library=lib, query_encoder=str(folder))
    result = Pipeline(settings, Library.open(settings)).cite_text(
        "We train every model with the Adam optimizer [CITATION].")[0]
    dense = next(t for t in result.traces if t.agent == "dense")
    assert dense.status == "ok" and dense.details["query_encoder"] == str(folder) and dense.top
    assert json.loads((lib / "library.json").read_text())["embedder"]["name"] == MINILM


def test_cli_trains_a_query_encoder_on_the_users_own_latex_projects(tmp_path: Path, capsys):
    from citefinder.cli.main import main

    data = Path(__file__).parent / "data"
    lib = tmp_path / "lib"
    code = main(["embedder", "train", "--query-only", "--contexts", str(data / "latex"),
                 str(data / "reranker-paper.tex"), "--library", str(lib), "--name", "mine", "--max-steps", "1",
                 "--batch-size", "4", "--val-fraction", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    card = read_card(lib / "embedders" / "mine")
    assert card["training"]["citing_papers"] == 2 and card["training"]["pairs"] == 35, card["training"]
    assert card["training"]["pairs_with_abstract"] == 26  # the .bib's abstracts: papers embedded as a library does
    assert "not measured against" in out
