"""`citefinder eval --drafts`: a real draft against its own .bib, scored per stage by BibTeX key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citefinder.cli.main import main

MINI = Path(__file__).resolve().parent / "data" / "drafts" / "mini"

pytestmark = pytest.mark.slow


def test_eval_drafts_scores_every_slot_by_key(tmp_path, capsys):
    out = tmp_path / "drafts.json"
    code = main(["eval", "--drafts", str(MINI), "--bib", "refs.bib", "--libraries", str(tmp_path / "libs"),
                 "--out", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["items"] == 7 and result["papers"] == ["mini"]
    outcomes = result["outcomes"]
    assert [o["id"] for o in outcomes] == [f"mini:{i}" for i in range(7)]
    # every key of refs.bib that a slot cites maps to one library paper; a key missing from the .bib is unanswerable
    assert all(len(o["gold"]) == 1 for o in outcomes[:6]) and len({o["gold"][0] for o in outcomes[:6]}) == 6
    assert outcomes[6]["gold"] == [] and not outcomes[6]["answerable"]
    stages = result["stages"]
    assert list(stages)[-2:] == ["fused", "reranked"] and "names" in stages
    # a nine-paper library: each slot's paper is among the fused top 3, most are first
    assert stages["fused"]["hit@3" if "hit@3" in stages["fused"] else "hit@5"] == 1.0
    assert stages["fused"]["hit@1"] >= 4 / 6
    printed = capsys.readouterr().out
    assert "| fused |" in printed and "hit@1" in printed
    # the library is kept and reused while the .bib is unchanged
    assert (tmp_path / "libs" / "mini-refs" / "source.sha1").exists()


def test_eval_drafts_refuses_a_folder_without_drafts(tmp_path, capsys):
    code = main(["eval", "--drafts", str(tmp_path)])
    assert code != 0
    assert "no draft folder" in capsys.readouterr().err
