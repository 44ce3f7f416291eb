"""The models CiteFinder trained on citing sentences and ships (citefinder/models/): small, carded, rebuilt offline
into whole model folders on first use; the query encoder as the dense agents' query side against a library's
unchanged vectors, measured better than the base model on held-out sentences; the cross-encoder through the
`rerankers` path."""

from __future__ import annotations

import gzip
import json
import threading
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from citefinder.library.encoders import bert, shipped
from citefinder.library.encoders.embedder import MINILM, MPNET, Embedder
from citefinder.library.encoders.query_side import SAME, TRAINED, query_side
from citefinder.rank.rerank import TRAINED_LABEL, CrossEncoderReranker, make_reranker
from citefinder.train.embedder.pack import pack_query
from conftest import SHARED_DATA

MB = 1 << 20


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One model cache for the module (each shipped model is built into it once)."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def _cache_env(cache, monkeypatch) -> None:
    monkeypatch.setenv("CITEFINDER_CACHE", str(cache))


@pytest.mark.parametrize("name", [shipped.QUERY_ENCODER, shipped.RERANKER])
def test_each_shipped_model_is_small_and_has_a_card_that_says_what_it_was_trained_on(name):
    folder = shipped.shipped_folder(name)
    size = sum(f.stat().st_size for f in folder.iterdir())
    assert size <= 25 * MB, f"{name} ships {size / MB:.1f} MB"
    card = shipped.card(name)
    for field in ("base", "data", "split", "command", "recipe", "figures"):
        assert card.get(field), f"{name}'s card lacks {field}"
    assert (folder / "MODEL_CARD.md").read_text(encoding="utf-8").startswith("# ")


def test_the_query_encoder_is_rebuilt_once_into_a_whole_folder_even_when_asked_for_at_once():
    folders: list[Path] = []
    threads = [threading.Thread(target=lambda: folders.append(shipped.model_folder(shipped.QUERY_ENCODER)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(folders)) == 1
    folder = folders[0]
    assert bert.supports(folder)  # the fast plain-torch encoder runs it, like the default MiniLM
    assert (folder / "citefinder_card.json").is_file()
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(".")] == []  # no half-built folder left


def _held_out_pairs(n: int = 300) -> list[tuple[str, str]]:
    """The first ``n`` records of the pack's *test* split (citing papers the training never saw): their query as
    the dense agent embeds it, and their cited paper's title."""
    out = []
    with gzip.open(SHARED_DATA / "cite-contexts" / "contexts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in islice(f, 40000):
            r = json.loads(line)
            if r.get("split") == "test" and r["cited"].get("title") and "[CITATION]" in r["text"]:
                out.append((pack_query(r["text"]), str(r["cited"]["title"])))
                if len(out) == n:
                    break
    return out


def _mrr(queries: np.ndarray, docs: np.ndarray, gold: list[int]) -> float:
    scores = queries @ docs.T
    return float(np.mean([1.0 / (1 + int((row > row[g]).sum())) for row, g in zip(scores, gold, strict=True)]))


def test_the_trained_query_side_finds_cited_papers_better_than_the_base_model_on_unseen_citing_papers():
    pairs = _held_out_pairs()
    titles = sorted({t for _, t in pairs})
    gold = [titles.index(t) for _, t in pairs]
    base = Embedder(MINILM)
    docs = base.encode(titles)  # the library's side: the base model, as every library stores it
    side = query_side(TRAINED, base)
    assert side.name == TRAINED and side.embedder is not base
    before = _mrr(base.encode([q for q, _ in pairs]), docs, gold)
    after = _mrr(side.embedder.encode([q for q, _ in pairs]), docs, gold)
    assert after > before + 0.02, (before, after)


def test_a_library_of_another_embedder_keeps_its_own_query_side_and_says_why():
    other = Embedder(MPNET)  # nothing is loaded: the choice is made by name
    side = query_side(TRAINED, other)
    assert side.embedder is other and side.name == SAME and "minilm" in side.note
    base = Embedder(MINILM)
    assert query_side(SAME, base).embedder is base


def test_a_library_built_before_the_query_encoder_opens_unchanged_and_its_dense_trace_names_the_query_side(
        small_library):
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    settings = small_library.settings.with_overrides(query_encoder=TRAINED)
    library = Library.open(settings)
    assert library.embedded_count() == small_library.library.embedded_count()  # no re-embedding, no migration
    item = small_library.citeme[0]
    result = Pipeline(settings, library).cite_text(item["text"])[0]
    dense = next(t for t in result.traces if t.agent == "dense")
    assert dense.status == "ok" and dense.details["query_encoder"] == TRAINED
    assert dense.top  # it finds papers among the stored vectors


def test_the_trained_cross_encoder_goes_through_rerankers_and_reads_the_slot_as_it_was_trained(small_library):
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    settings = small_library.settings.with_overrides(reranker="trained")
    reranker = make_reranker(settings)
    assert isinstance(reranker, CrossEncoderReranker) and reranker.slot_text and reranker.name == TRAINED_LABEL
    library = Library.open(settings)
    result = Pipeline(settings, library).cite_text(small_library.citeme[0]["text"])[0]
    trace = next(t for t in result.traces if t.agent == "rerank")
    assert trace.status == "ok", trace.message
    confidences = trace.details["confidence"]
    assert len(confidences) == min(settings.rerank_top_n, len(result.candidates))
    assert all(0.0 <= c <= 1.0 for c in confidences.values())
