"""The static embedding shipped in the package, and a literature library's static vectors built through
`citefinder library embed --static` and searched by the literature tier (real Chroma, bm25s, the shipped model;
a literature library of 400 papers-50k records imported BM25-first, as a dump is)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from literature_support import snapshot

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.index.static import STATIC_VECTORS, saved_static, static_search
from citefinder.library.encoders.static import FOLDER, STATIC_MINILM, card, static_encoder
from citefinder.pipeline.literature import STATIC_AGENTS, LibraryLiterature
from citefinder.types import Query

ROOT = Path(__file__).resolve().parents[1]
FIXED = json.loads((ROOT / "tests/data/static-vectors.json").read_text(encoding="utf-8"))


# the literature's records and folder: tests/literature_fixtures.py (module-scoped); a test's own cache
pytestmark = pytest.mark.usefixtures("literature_cache")


def test_the_static_model_is_in_the_package_and_loads_offline(tmp_path):
    assert FOLDER == ROOT / "citefinder/models" / STATIC_MINILM
    about = card()
    assert about["dims"] == 256 and "model2vec" in about["method"] and about["command"]
    assert (FOLDER / "model.safetensors").stat().st_size < 20_000_000  # shipped small
    # a fresh process with the hub offline and no cache of any model: the package's folder alone
    code = ("from citefinder.library.encoders.static import static_encoder; "
            "print(static_encoder().encode(['attention is all you need']).shape)")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf"), "CITEFINDER_CACHE": str(tmp_path / "c")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(1, 256)"
    assert not (tmp_path / "hf").exists()


def test_fixed_texts_keep_their_vectors_and_their_order():
    encoder = static_encoder()
    assert encoder.digest == FIXED["model_digest"]  # a new model: regenerate the fixture deliberately
    docs = encoder.encode(FIXED["documents"])
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert np.allclose(docs[:, :8], np.array(FIXED["head"]), atol=2e-4)
    queries = encoder.encode(FIXED["queries"])
    ranks = [[int(i) for i in np.argsort(-(docs @ q), kind="stable")] for q in queries]
    assert ranks == FIXED["ranks"]
    # the named papers come first: Attention for the Transformer, Adam, LightGBM
    assert [r[0] for r in ranks] == [0, 3, 4]
    # a text of no known token is a zero vector, not NaN; the same text gives the same vector in any batch
    assert not encoder.encode([""]).any()
    assert np.array_equal(encoder.encode(FIXED["documents"][:1])[0], docs[0])


def test_a_literature_library_gets_static_vectors_and_the_tier_searches_them(tmp_path, literature, records,
                                                                             capsys):
    settings = Settings()
    before = LibraryLiterature(settings, literature)
    assert saved_static(before.view) is None
    target = records[123]
    sentence = f"{target['abstract'].split('. ')[0]} [CITATION]."
    _, traces = before.pipeline.rank_query(Query(text=sentence))
    skipped = {t.agent: t for t in traces if t.agent in STATIC_AGENTS}
    assert skipped["static"].status == "skipped" and "library embed --static" in skipped["static"].message

    assert main(["--library", str(literature), "library", "embed", "--static"]) == 0
    assert f"static vectors of {len(records)} papers" in capsys.readouterr().out
    saved = literature / "indexes" / STATIC_VECTORS.name
    assert (saved / "vectors.npy").is_file()

    frozen = snapshot(literature)
    lit = LibraryLiterature(settings, literature)
    index = saved_static(lit.view)
    assert index is not None and len(index.doc_ids) == len(records)
    assert static_search(lit.view, sentence, 5)[0].doc_id == target["doc_id"]
    ranked = lit.rank(Query(text=sentence))
    static = next(t for t in ranked.traces if t.agent == "static")
    assert static.status == "ok" and static.top[0].doc_id == target["doc_id"]
    assert ranked.candidates[0].doc_id == target["doc_id"]
    assert snapshot(literature) == frozen  # searched in place, never written

    # built once: a second command finds them current and embeds nothing again
    vectors = snapshot(saved)
    assert main(["--library", str(literature), "library", "embed", "--static"]) == 0
    assert snapshot(saved) == vectors
