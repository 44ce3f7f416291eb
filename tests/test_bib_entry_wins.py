"""The user's .bib entry wins whatever the order of imports (issue 27 item 7): the same work from CSL-JSON after
(or before, or in the same command as) the user's .bib keeps the .bib's key and its exact text."""

from __future__ import annotations

import json

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.store import Library

pytestmark = pytest.mark.slow

BIB = ("@inproceedings{mueller2024sparse,\n  title = {Sparse Retrieval at Scale},\n"
       "  author = {M{\\\"u}ller, Anna and Chen, Bo},\n  booktitle = {Proceedings of SIGIR},\n  year = {2024}\n}\n")
CSL = [{"id": "muller2024zot", "type": "paper-conference", "title": "Sparse retrieval at scale",
        "author": [{"family": "Müller", "given": "Anna"}, {"family": "Chen", "given": "Bo"}],
        "issued": {"date-parts": [[2024]]}}]


def _files(tmp_path):
    ours, zotero = tmp_path / "ours.bib", tmp_path / "zotero.json"
    ours.write_text(BIB, encoding="utf-8")
    zotero.write_text(json.dumps(CSL), encoding="utf-8")
    return ours, zotero


@pytest.mark.parametrize("order", ["bib first", "csl first", "one command, csl first"])
def test_the_users_bib_entry_keeps_its_key_and_text(tmp_path, capsys, order):
    ours, zotero = _files(tmp_path)
    lib = str(tmp_path / "lib")
    if order == "bib first":
        assert main(["library", "import", str(ours), "--library", lib]) == 0
        assert main(["library", "import", str(zotero), "--library", lib]) == 0
        assert "duplicates skipped 1" in capsys.readouterr().out  # nothing changed: a duplicate skipped
    elif order == "csl first":
        assert main(["library", "import", str(zotero), "--library", lib]) == 0
        capsys.readouterr()
        assert main(["library", "import", str(ours), "--library", lib]) == 0
        # the stored paper took the .bib's key and entry: an update, said, never "skipped"
        assert "added 0, updated 1 (mueller2024sparse), duplicates skipped 0" in capsys.readouterr().out
    else:
        assert main(["library", "import", str(zotero), str(ours), "--library", lib]) == 0
    library = Library.open(Settings(library=lib))
    assert library.count() == 1
    paper = library.by_key("mueller2024sparse")
    assert paper is not None and library.by_key("muller2024zot") is None
    assert paper.bibtex is not None and paper.bibtex.strip() == BIB.strip()
