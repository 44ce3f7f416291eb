"""The app's shared reranker is keyed on everything that changes it: the reranker setting, its
blend, rrf_k, the library, and the library's default (``citefinder reranker use``), which the
running app sees without a restart."""

from __future__ import annotations

import json
from pathlib import Path

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.rank.rerank import CrossEncoderReranker, SkipReranker, reranker_key


def _fake_cross_encoder(folder: Path) -> Path:
    """A folder that passes the cross-encoder check (the model itself loads only on first use)."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    return folder


def test_every_setting_that_changes_the_reranker_changes_its_key(tmp_path: Path) -> None:
    base = Settings(library=tmp_path / "lib")
    model = _fake_cross_encoder(tmp_path / "ce")
    variants = {
        "base": base,
        "blend": base.model_copy(update={"rerank_blend": "replace"}),
        "rrf_k": base.model_copy(update={"rrf_k": 30}),
        "library": base.model_copy(update={"library": tmp_path / "other-lib"}),
        "reranker": base.model_copy(update={"reranker": str(model)}),
        "reranker+blend": base.model_copy(update={"reranker": str(model), "rerank_blend": "replace"}),
        "reranker+library": base.model_copy(update={"reranker": str(model), "library": tmp_path / "other-lib"}),
    }
    keys = {name: reranker_key(s) for name, s in variants.items()}
    assert len(set(keys.values())) == len(keys), keys
    assert reranker_key(Settings(library=tmp_path / "lib")) == keys["base"]  # equal settings share one


def test_the_app_sees_reranker_use_without_a_restart(tmp_path: Path, capsys) -> None:
    from citefinder.ui import resources

    lib = tmp_path / "lib"
    settings = Settings(library=lib)
    assert isinstance(resources.get_reranker(settings), SkipReranker)
    first = _fake_cross_encoder(lib / "rerankers" / "ce-one")
    assert main(["reranker", "use", str(first), "--library", str(lib)]) == 0
    chosen = resources.get_reranker(settings)
    assert isinstance(chosen, CrossEncoderReranker) and Path(chosen.path) == first.resolve()
    assert resources.get_reranker(settings) is chosen  # cached while nothing changed

    second = _fake_cross_encoder(lib / "rerankers" / "ce-two")
    assert main(["reranker", "use", str(second), "--library", str(lib)]) == 0
    assert Path(resources.get_reranker(settings).path) == second.resolve()
    assert resources.get_reranker(settings.model_copy(update={"rerank_blend": "replace"})).blend == "replace"
    assert resources.get_reranker(settings.model_copy(update={"rrf_k": 7})).blend_k == 7

    assert main(["reranker", "use", "none", "--library", str(lib)]) == 0
    assert isinstance(resources.get_reranker(settings), SkipReranker)
    capsys.readouterr()
