"""An import beside a running app loses nothing: `streamlit run app.py` holds the library open
(its cached Library has searched it), a `citefinder library import` in another process writes to the
same folder, then a find in the app answers with a paper that import added, and a fresh reader sees
counts equal across Chroma, its vector index, BM25 and the manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app_support import build_sample_library, chromium, paste_draft, streamlit_server, wait_progressing
from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.library.store.manifest import read_manifest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
TITLE = "Modeling Online Reviews with Multi-grain Topic Models"  # tests/data/papers.jsonl, not in the sample
DRAFT = "Online reviews can be modeled with multi-grain topic models that find ratable aspects [CITATION]."
SAMPLE = 170


def test_import_beside_a_running_app_loses_nothing_and_the_app_sees_it(tmp_path) -> None:
    folder = build_sample_library(tmp_path / "library")
    src = tmp_path / "more.jsonl"
    extra = [json.loads(line) for line in (ROOT / "tests" / "data" / "papers.jsonl").read_text().splitlines()
             if line.startswith('{"doc_id"')]
    extra += [{"doc_id": f"x{i}", "title": f"Side import note {i} on subject {i % 9}"} for i in range(60)]
    src.write_text("".join(json.dumps(r) + "\n" for r in extra))
    assert any(r["title"] == TITLE for r in extra)

    with streamlit_server(folder, tmp_path / "server.log") as url, chromium() as page:
        page.goto(url)
        paste_draft(page, DRAFT)
        wait_progressing(page.get_by_text("citation slot found"))
        page.get_by_role("button", name="Find citations").click()
        wait_progressing(page.get_by_text("Filled").first)  # the app's Library is open and has searched
        expect(page.get_by_text(TITLE)).to_have_count(0)

        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        cli = "import sys; from citefinder.cli.main import main; sys.exit(main())"
        imported = subprocess.run([sys.executable, "-c", cli, "library", "import", str(src), "--library", str(folder)],
                                  env=env, capture_output=True, text=True, timeout=600)
        assert imported.returncode == 0, imported.stderr
        assert f"added {len(extra)}," in imported.stdout, imported.stdout

        page.get_by_role("button", name="Find citations").click()  # the same cached Library, a newer generation
        wait_progressing(page.locator("strong", has_text=TITLE).first)

    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")
    reader = Library.open(Settings(library=folder))
    n = SAMPLE + len(extra)
    assert (reader.count(), reader.embedded_count(), len(reader.ensure_bm25())) == (n, n, n)
    manifest = read_manifest(folder)
    assert (manifest["papers"], manifest["embedded"], manifest["dirty"]) == (n, n, False)
    assert len(reader._indexed_ids()) == n
    assert len({p.doc_id for p in reader.iter_papers()}) == n
    assert reader.problems() == []
