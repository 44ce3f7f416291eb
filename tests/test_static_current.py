"""Static vectors kept true (issue 50, citefinder/index/static.py): stamped with the doc ids they hold, not a count;
an import leaves them searched for the papers that have them and says they are out of date; ``embed --static``
encodes only the new papers; a removal plus an addition is not "current"; the literature's tuned fusion weights
for the static agents are read without a false warning. A real library folder (bm25s, Chroma)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.index.static import build_static, ids_digest, saved_static, static_state
from citefinder.library.store import Library
from citefinder.pipeline.literature import LibraryLiterature
from citefinder.types import Query

pytestmark = pytest.mark.usefixtures("literature_cache")
RECORDS = [json.loads(x) for x in (Path(__file__).parent / "data/offers/literature.jsonl").read_text().splitlines()
           if x]


def _dump(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def test_an_import_keeps_the_vectors_searched_says_they_are_stale_and_embed_encodes_only_the_new(tmp_path,
                                                                                                capsys, caplog):
    folder = tmp_path / "lit"
    lib = Library.open(Settings(library=folder))
    lib.import_files([_dump(tmp_path / "a.jsonl", RECORDS[:6])], defer_embedding=True)
    built = build_static(lib)
    assert built.papers == 6 and built.encoded == 6 and static_state(lib).current
    del lib

    # an import into it: the CLI says the static vectors are out of date
    assert main(["--library", str(folder), "library", "import", str(_dump(tmp_path / "b.jsonl", RECORDS[6:])),
                 "--defer-embedding"]) == 0
    assert "static vectors are out of date: 3 papers have none (6 have)" in capsys.readouterr().out

    # the static agent still searches the six papers that have a vector (no "no static vectors")
    with caplog.at_level(logging.WARNING):
        lit = LibraryLiterature(Settings(), folder)
    assert not [r for r in caplog.records if "no tuned fusion weight" in r.getMessage()]
    target = RECORDS[2]
    ranked = lit.rank(Query(text=f"{target['abstract']} [CITATION]"))
    static = next(t for t in ranked.traces if t.agent == "static")
    assert static.status == "ok" and static.top[0].doc_id == target["doc_id"]
    assert len(saved_static(lit.view).doc_ids) == 6

    # embed --static encodes the three new papers only
    assert main(["--library", str(folder), "library", "embed", "--static"]) == 0
    out = capsys.readouterr().out
    assert "static vectors of 9 papers" in out and "(3 encoded now" in out
    lib = Library.open(Settings(library=folder))
    assert static_state(lib).current and build_static(lib).encoded == 0


def test_a_removal_plus_an_addition_is_not_current(tmp_path):
    lib = Library.open(Settings(library=tmp_path / "lit"))
    lib.import_files([_dump(tmp_path / "a.jsonl", RECORDS[:5])], defer_embedding=True)
    assert build_static(lib).encoded == 5
    lib.remove([RECORDS[0]["doc_id"]])
    lib.import_files([_dump(tmp_path / "b.jsonl", RECORDS[5:6])], defer_embedding=True)
    assert lib.count() == 5  # the same count as the vectors hold
    state = static_state(lib)
    assert state is not None and not state.current and (state.missing, state.gone) == (1, 1)
    again = build_static(lib)
    assert again.encoded == 1 and again.papers == 5
    index = saved_static(lib)
    assert RECORDS[0]["doc_id"] not in index.doc_ids
    assert ids_digest(index.doc_ids) == ids_digest(r["doc_id"] for r in RECORDS[1:6])
