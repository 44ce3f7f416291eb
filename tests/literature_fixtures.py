"""Fixtures the literature tests share (registered for every test module by ``pytest_plugins`` in conftest.py):
a test's own cache for the derived indexes a literature library has not saved, and the literature library folder
built from ../shared/data (tests/literature_support.py). A module whose ``literature`` is another folder (the small
one from tests/data/literature) defines its own fixture of that name, which takes precedence in that module."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def literature_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The derived indexes a literature library has not saved are built into the cache: a test's own, not the
    user's ~/.cache. Modules ask for it with ``pytest.mark.usefixtures("literature_cache")``."""
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def cli_literature_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CLI run's own cache, no learning from its picks and no literature named by the environment. Modules ask
    for it with ``pytestmark = pytest.mark.usefixtures("cli_literature_env")``."""
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """The literature's records (:func:`literature_support.literature_records`)."""
    from literature_support import literature_records

    return literature_records()


@pytest.fixture(scope="module")
def literature(tmp_path_factory: pytest.TempPathFactory, records: list[dict]) -> Path:
    """A literature library folder of :func:`records`, imported BM25-first (no vectors)."""
    from literature_support import build_literature

    return build_literature(tmp_path_factory.mktemp("literature"), records)
