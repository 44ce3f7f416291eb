"""The same key for the same added paper from both faces (issue 45; issue 44, item 5): the Cite page's *Add to my
library* (AppTest over a real library of the user's .bib, whose keys are Semantic Scholar's) and ``citefinder fill
--bib refs.bib --add-from-literature`` (the library kept beside that .bib) give the literature's *Deep Compositional
Metric Learning* one key, in the user's style; on the page, another slot offered the paper then shows *Use this*."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.ui import state, workspace
from citefinder.ui.cite.literature import ALWAYS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "add-paper"
TIMEOUT = 240
TARGET = "t:67916608e556553c"  # Zheng 2021, Deep Compositional Metric Learning: only the literature holds it
SENTENCES = ("Composing sub-embeddings gives deep compositional metric learning [CITATION].",
             "Like deep compositional metric learning [CITATION], we compose sub-embeddings.")


@pytest.fixture(autouse=True)
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")


@pytest.fixture(scope="module")
def literature(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("app-add-lit") / "metric-lit"
    Library.open(Settings(library=folder)).import_files([DATA / "literature.jsonl"], defer_embedding=True)
    return folder


def _page_key(folder: Path, literature: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Add the paper on the Cite page from slot 1; slot 2, offered it too, cites it with *Use this*; its key."""
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(folder))
    monkeypatch.setenv("CITEFINDER_LITERATURE", str(literature))
    workspace.clear_draft(folder)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    next(s for s in at.get("button_group") if s.label == "Search the literature").set_value(ALWAYS)
    at.text_area(key=state.CITE_TEXT).set_value(" ".join(SENTENCES)).run()
    at = next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception
    run = at.session_state[state.CITE_RUN]
    ranks = [next(i for i, c in enumerate(r.literature, 1) if c.doc_id == TARGET) for r in run.results]
    add = at.button(key=f"{run.pick_key(0)}_lit_{ranks[0]}")
    assert add.label == "Add to my library"
    add.click().run()
    assert not at.exception
    assert at.session_state[state.CITE_CHOICES][0] == (TARGET,)
    assert at.button(key=f"{run.pick_key(0)}_lit_{ranks[0]}").label == "In your library"
    use = at.button(key=f"{run.pick_key(1)}_lit_{ranks[1]}")
    assert use.label == "Use this" and not use.disabled  # the user's paper now, in every slot offered it
    use.click().run()
    assert not at.exception and at.session_state[state.CITE_CHOICES][1] == (TARGET,)
    stored = Library.open(Settings(library=folder)).get([TARGET])
    assert stored and stored[0].key
    return str(stored[0].key)


def _cli_key(root: Path, literature: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``fill --bib refs.bib --add-from-literature 1:N`` for the same paper; the key new-references.bib holds."""
    bib = root / "refs.bib"
    shutil.copy(DATA / "refs-s2.bib", bib)
    tex = root / "paper.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n" + "\n".join(SENTENCES) + "\n\\end{document}\n",
                   encoding="utf-8")
    common = ["fill", str(tex), "--bib", str(bib), "--literature", str(literature), "--literature-when", "always"]
    assert main([*common, "--json", str(root / "r.json")]) == 0
    offered = json.loads((root / "r.json").read_text(encoding="utf-8"))[0]["literature"]
    n = next(i for i, c in enumerate(offered, 1) if c["paper"]["doc_id"] == TARGET)
    assert main([*common, "--add-from-literature", f"1:{n}"]) == 0
    capsys.readouterr()
    (key,) = re.findall(r"^@\w+\{([^,]+),", (root / "new-references.bib").read_text(encoding="utf-8"), flags=re.M)
    return key


def test_the_page_and_the_cli_give_an_added_paper_the_same_key_in_the_users_style(tmp_path, monkeypatch, capsys,
                                                                                   literature):
    page_library = tmp_path / "page" / "library"
    report = Library.open(Settings(library=page_library)).import_files([DATA / "refs-s2.bib"])
    assert report.added == 8
    cli = tmp_path / "cli"
    cli.mkdir()
    page = _page_key(page_library, literature, monkeypatch)
    monkeypatch.delenv("CITEFINDER_LIBRARY")
    monkeypatch.delenv("CITEFINDER_LITERATURE")
    assert _cli_key(cli, literature, capsys) == page == "Zheng2021DeepCM"  # Semantic Scholar's, as the user's keys
