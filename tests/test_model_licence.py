"""The shipped static model (citefinder/models/static-minilm) is a derivative of sentence-transformers/
all-MiniLM-L6-v2 (Apache-2.0): the licence's text and a NOTICE ship beside its weights, the model card names
them, and the package data carries them."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "citefinder" / "models" / "static-minilm"


def test_the_licence_and_notice_ship_beside_the_weights() -> None:
    licence = (MODEL / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence
    notice = " ".join((MODEL / "NOTICE").read_text(encoding="utf-8").split())
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice and "Apache License, Version 2.0" in notice
    assert "model2vec" in notice, "the changes made are stated (Apache-2.0, section 4(b))"
    card = (MODEL / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "`LICENSE`" in card and "`NOTICE`" in card


def test_the_package_data_carries_them() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["citefinder"]
    for name in ("LICENSE", "NOTICE", "model.safetensors", "MODEL_CARD.md"):
        assert any(fnmatch(f"models/static-minilm/{name}", p) for p in patterns), name
