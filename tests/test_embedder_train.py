"""Fine-tuning the embedder on citing sentences: pairs from a context pack, the loss's gold mask, a real
(tiny) training run on CPU whose model the library loads like the default MiniLM, the held-out
comparison, the CLI (train, list, use: a new library embedded by the trained model), and ONNX encoders
(incite-app's shape) as a library's embedder."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
from onnx_support import minilm_gather_folder

from citefinder.config import Settings
from citefinder.errors import ModelLoadError
from citefinder.library.encoders import bert, onnx_encoder
from citefinder.library.encoders.embedder import Embedder
from citefinder.rank.cards import read_card
from citefinder.retrieve.agents.dense import dense_text
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.text.slots import find_slots
from citefinder.train.embedder.pack import (
    hard_negative_pool,
    load_pairs,
    pack_query,
    pick_hard_negative,
    split_by_citing,
)
from citefinder.train.embedder.train import TrainConfig, batch_docs, gold_mask, load_base, train_embedder
from citefinder.train.embedder.validate import dense_metrics, embedder_wins, held_out_set
from conftest import SHARED_DATA

PACK = SHARED_DATA / "cite-contexts" / "contexts.jsonl.gz"


def _record(rid: str, text: str, title: str, citing: str, group: str, *, doc_id: str | None = None,
            split: str = "train") -> dict:
    return {"id": rid, "text": text, "prev": None, "next": None,
            "cited": {"title": title, "year": 2015, "authors": [], "doc_id": doc_id},
            "citing": {"paper": citing, "title": None, "year": None}, "group": group, "source": "latex",
            "license": "MIT", "split": split}


def _write_jsonl(path: Path, records: list[dict], *, gz: bool = False) -> Path:
    lines = "".join(json.dumps(r) + "\n" for r in records)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(lines)
    else:
        path.write_text(lines, encoding="utf-8")
    return path


# --- pairs from a pack ------------------------------------------------------------------------------


def test_pack_query_is_what_the_dense_agent_embeds_for_that_slot():
    text = "Decision trees [OTHER] are fast, while support vector machines [CITATION] are accurate (Smith, 2003)."
    slots = find_slots(text.replace("[OTHER]", "[CITATION]"), 0)
    query, _ = reformulate(slots[1])
    assert pack_query(text) == dense_text(query)
    assert pack_query(text).startswith("are fast, while support vector machines.")  # this slot's own part first
    other = "Decision trees [CITATION] are fast, while support vector machines [OTHER] are accurate (Smith, 2003)."
    assert pack_query(other).startswith("Decision trees.")
    assert "[OTHER]" not in pack_query(text) and "[CITATION]" not in pack_query(text)
    assert "Smith" not in pack_query(text)  # the author-year reference is cleaned like a draft's


def test_pairs_keys_abstracts_gold_and_hard_negatives(tmp_path: Path):
    records = [
        _record("r1", "Residual networks [CITATION] train very deep models.", "Deep Residual Learning for Image "
                "Recognition", "github:a/thesis", "g1", doc_id="arxiv:1512.03385"),
        _record("r2", "Residual networks [CITATION] train very deep models.", "Identity Mappings in Deep Residual "
                "Networks", "github:a/thesis", "g1"),  # \cite{he2016deep,he2016identity}: same command
        _record("r3", "Batch normalisation [CITATION] speeds up training, as dropout [OTHER] regularises.",
                "Batch Normalization", "github:a/thesis", "g2"),
        _record("r4", "Batch normalisation [OTHER] speeds up training, as dropout [CITATION] regularises.",
                "Dropout: a simple way to prevent neural networks from overfitting", "github:a/thesis", "g3"),
        _record("r5", "Attention layers [CITATION] replace recurrence.", "Attention is all you need",
                "github:b/paper", "g4", split="test"),
        _record("r6", "We follow [CITATION] for the optimiser.", "Adam: A Method for Stochastic Optimization",
                "github:a/thesis", "g5"),
    ]
    pack = _write_jsonl(tmp_path / "pack.jsonl.gz", records, gz=True)
    papers = _write_jsonl(tmp_path / "papers.jsonl", [
        {"doc_id": "arxiv:1512.03385", "title": "Deep Residual Learning for Image Recognition",
         "abstract": "Deeper neural networks are more difficult to train."}])
    pairs = {p.id: p for p in load_pairs([pack], split="train", papers=papers)}
    assert sorted(pairs) == ["r1", "r2", "r3", "r4", "r6"]  # the test record is left out
    r1, r2, r3 = pairs["r1"], pairs["r2"], pairs["r3"]
    assert r1.doc == "arxiv:1512.03385" and r1.has_abstract and "more difficult to train" in r1.doc_text
    assert r2.doc.startswith("title:") and not r2.has_abstract and r2.doc_text.startswith("Identity Mappings")
    assert r1.gold == r2.gold == {r1.doc, r2.doc}  # one cite command, two right answers
    assert r3.gold == {r3.doc} and r3.sentence == {r3.doc, pairs["r4"].doc}  # two commands, one sentence
    assert r3.query != pairs["r4"].query  # each slot's own part leads its query
    pool = hard_negative_pool(list(pairs.values()))
    rng = random.Random(0)
    for _ in range(20):  # never a paper the same sentence cites
        assert pick_hard_negative(r3, pool, rng)[0] not in r3.sentence
        assert pick_hard_negative(r1, pool, rng)[0] not in r1.gold
    assert pick_hard_negative(load_pairs([pack], split="test")[0], pool, rng) is None  # its paper cites nothing else

    everything = load_pairs([pack], split=None)
    train, held = split_by_citing(everything, 0.5, seed=3)
    assert {p.citing for p in train}.isdisjoint({p.citing for p in held}) and len(train) + len(held) == 6
    assert split_by_citing(everything, 0.5, seed=3) == (train, held)  # stable


def test_gold_mask_spares_the_other_papers_of_the_same_cite_command(tmp_path: Path):
    records = [_record("a", "Residual networks [CITATION] go deep.", "Deep Residual Learning", "p", "g1"),
               _record("b", "Residual networks [CITATION] go deep.", "Identity Mappings in ResNets", "p", "g1"),
               _record("c", "We use Adam [CITATION].", "Adam: A Method for Stochastic Optimization", "p", "g2")]
    pairs = load_pairs([_write_jsonl(tmp_path / "p.jsonl", records)])
    batch = [(pairs[0], ("title:x", "X")), (pairs[1], None), (pairs[2], (pairs[0].doc, pairs[0].doc_text))]
    docs, texts = batch_docs(batch)
    assert docs == [pairs[0].doc, pairs[1].doc, pairs[2].doc, "title:x", pairs[0].doc] and len(texts) == 5
    mask = gold_mask(batch, docs)
    assert mask[0] == [False, True, False, False, True]  # b's paper and the negative that is a's own paper
    assert mask[1] == [True, False, False, False, True]
    assert mask[2] == [False] * 5  # Adam's sentence: every other paper is a real negative


# --- training -----------------------------------------------------------------------------------------


def _real_pairs(n_papers: int, per_paper: int) -> list[dict]:
    """Records of the shared pack's train split (LaTeX sources): ``per_paper`` records of each of the first
    ``n_papers`` citing papers that have that many."""
    by_paper: dict[str, list[dict]] = {}
    with gzip.open(PACK, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["split"] == "train" and r["source"] == "latex":
                by_paper.setdefault(r["citing"]["paper"], []).append(r)
            full = [rs for rs in by_paper.values() if len(rs) >= per_paper]
            if len(full) >= n_papers:
                return [r for rs in full[:n_papers] for r in rs[:per_paper]]
    raise AssertionError(f"fewer than {n_papers} citing papers with {per_paper} records in {PACK}")


@pytest.fixture(scope="module")
def tiny_training(tmp_path_factory):
    """24 real pairs trained for 3 short epochs (9 steps of 8, 64-token papers): enough to move the model."""
    root = tmp_path_factory.mktemp("emb-train")
    pack = _write_jsonl(root / "pack.jsonl", _real_pairs(3, 8))
    pairs = load_pairs([pack])
    config = TrainConfig(epochs=3, batch_size=8, doc_max_length=64, query_max_length=64, learning_rate=1e-4)
    result = train_embedder(pairs, root / "model", config, checkpoint_every=4,
                            card={"data": {"sources": [str(pack)]}})
    return pairs, result


@pytest.mark.slow
def test_trained_model_is_a_library_embedder_of_the_default_shape(tiny_training):
    pairs, result = tiny_training
    folder = result.path
    assert folder.is_dir() and not folder.with_name(folder.name + ".partial").exists()
    assert bert.supports(folder)  # loads on library/encoders/bert.py, like the default MiniLM
    card = read_card(folder)
    assert card["citefinder_embedder"] == 1 and card["base_model"] == "minilm" and card["name"] == "model"
    assert len(pairs) == 24  # every record has a title and a query
    assert card["training"]["pairs"] == 24 and card["training"]["steps"] == 9 and card["training"]["pairs_seen"] == 72
    assert card["training"]["pairs_per_s"] > 0 and "model" in (folder / "README.md").read_text()
    checkpoints = sorted(p.name for p in (folder.parent / "model.checkpoints").iterdir())
    assert checkpoints == ["step-4", "step-8"]  # every 4 steps, the last step is the model itself
    assert bert.supports(folder.parent / "model.checkpoints" / "step-8")
    assert read_card(folder.parent / "model.checkpoints" / "step-8")["training"]["pairs_seen"] == 64
    from sentence_transformers import SentenceTransformer

    texts = [p.query for p in pairs[:4]] + [p.doc_text for p in pairs[:4]]
    ours = Embedder(str(folder)).encode(texts)
    theirs = SentenceTransformer(str(folder), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.abs(ours - Embedder("minilm").encode(texts)).max() > 1e-3  # and it is not the base any more


@pytest.mark.slow
def test_training_pulls_sentences_towards_the_papers_they_cite(tiny_training):
    pairs, result = tiny_training
    data = held_out_set(pairs, [], max_queries=None, distractors=0)
    base = dense_metrics(Embedder("minilm").encode, data)
    trained = dense_metrics(Embedder(str(result.path)).encode, data)
    assert trained["mrr"] > base["mrr"] + 0.05, (base, trained)
    assert embedder_wins(base, trained) and not embedder_wins(trained, base)


@pytest.mark.slow
def test_training_encodes_in_length_chunks_with_the_same_vectors_in_order():
    import torch

    from citefinder.train.embedder.train import embed_texts

    model = load_base(TrainConfig())
    texts = ["BLEU", "Deep Residual Learning for Image Recognition. " + "Deeper networks are harder to train. " * 20,
             "Adam", "Attention is all you need. The dominant sequence transduction models are recurrent.", "GloVe"]
    with torch.no_grad():
        chunked = embed_texts(model, texts, 256, chunk=2).numpy()  # the base model's own limit
    whole = model.encode(texts, normalize_embeddings=True)
    assert np.abs(chunked - whole).max() < 1e-5


def test_an_onnx_export_cannot_be_trained(tmp_path: Path):
    folder, _ = minilm_gather_folder(tmp_path / "onnx")
    with pytest.raises(ModelLoadError, match="ONNX export"):
        load_base(TrainConfig(base_model=str(folder)))


# --- ONNX encoders (incite-app's MiniLM ships as one) ------------------------------------------------


def test_onnx_encoder_mean_pools_and_normalises_like_the_arithmetic(tmp_path: Path):
    folder, table = minilm_gather_folder(tmp_path / "onnx")
    assert onnx_encoder.supports(folder) and not bert.supports(folder)
    encoder = onnx_encoder.OnnxEncoder(folder, max_seq_length=16)
    texts = ["Deep residual learning for image recognition", "BLEU",
             "a much longer sentence about statistical machine translation, phrase tables and word alignment"]
    vectors = encoder.encode(texts, batch_size=2)  # two batches, padded differently
    ids = [encoder.tokenizer.encode(t).ids for t in texts]
    assert max(len(i) for i in ids) == 16  # truncated at max_seq_length
    expected = np.stack([table[i].mean(0) for i in ids])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert encoder.dim == 384 and np.abs(vectors - expected).max() < 1e-5
    assert np.abs(encoder.encode(texts[:1], 1, threads=1) - vectors[:1]).max() < 1e-6  # the one-thread session


def test_library_embedder_loads_an_onnx_folder(tmp_path: Path):
    folder, _ = minilm_gather_folder(tmp_path / "onnx")
    embedder = Embedder(str(folder), max_seq_length=64)
    one = embedder.encode(["a query on one thread"])
    many = embedder.encode([f"paper number {i} about retrieval" for i in range(20)])
    assert one.shape == (1, 384) and many.shape == (20, 384) and embedder.dimension == 384
    assert np.allclose(np.linalg.norm(many, axis=1), 1.0, atol=1e-5)
    assert embedder.spec.name == str(folder)


# --- the command line ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_trains_measures_and_copies_the_library_onto_the_model(tmp_path: Path, sampled_records, capsys):
    from citefinder.cli.main import main
    from citefinder.library.store import Library

    papers, _ = sampled_records
    lib, new = tmp_path / "lib", tmp_path / "lib-trained"
    source = _write_jsonl(tmp_path / "papers.jsonl", papers[:12])
    assert main(["library", "import", str(source), "--library", str(lib)]) == 0
    pack = _write_jsonl(tmp_path / "pack.jsonl", _real_pairs(6, 6))
    code = main(["embedder", "train", "--contexts", str(pack), "--library", str(lib), "--name", "emb-test",
                 "--max-steps", "2", "--batch-size", "4", "--doc-max-length", "32", "--val-fraction", "0.25",
                 "--val-queries", "10", "--val-distractors", "5", "--into", str(new), "--adopt", "yes"])
    out = capsys.readouterr().out
    assert code == 0, out
    folder = lib / "embedders" / "emb-test"
    card = read_card(folder)
    assert card["training"]["steps"] == 2 and set(card["metrics"]) == {"minilm (library)", "emb-test"}
    assert isinstance(card["wins"], bool) and card["held_out"]["queries"] > 0
    assert "held-out" in out and "| minilm (library) |" in out

    copied = Library.open(Settings(library=new, embedder=str(folder)))
    assert sorted(p.doc_id for p in copied.iter_papers()) == sorted(p["doc_id"] for p in papers[:12])
    assert copied.embedded_count() == 12
    assert json.loads((new / "library.json").read_text())["embedder"]["name"] == str(folder)
    assert json.loads((lib / "library.json").read_text())["embedder"]["name"] == "minilm"  # the source as it was

    assert main(["embedder", "list", "--library", str(lib)]) == 0
    listed = capsys.readouterr().out
    assert "emb-test: base minilm" in listed and "held-out MRR" in listed
    assert main(["embedder", "use", "emb-test", "--library", str(lib), "--into", str(new)]) == 2  # never overwritten
    assert "is not empty" in capsys.readouterr().err


def test_cli_train_reports_a_missing_pack_in_one_line(tmp_path: Path, capsys):
    from citefinder.cli.main import main

    assert main(["embedder", "train", "--contexts", str(tmp_path / "none.jsonl"), "--library", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "No such file" in err and len(err.strip().splitlines()) == 1
