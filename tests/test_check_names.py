"""The names a sentence writes count in the check as in the fill (issue 37, item 3): "The Transformer ...
\\citep{WRONG}" is flagged and the paper the name stands for offered, because the check's fit model reads the
"names" agents (``named`` / ``other_named``: the key's paper, or another, is the name the sentence writes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from citefinder.check.features import name_features
from citefinder.check.model import default_model
from citefinder.cli.main import main
from citefinder.types import Candidate, Paper, StageScore

LATEX = Path(__file__).parent / "data" / "latex"


def _cand(doc_id: str, **ranks: int) -> Candidate:
    scores = tuple(StageScore(agent.replace("_", "-"), rank, 1.0) for agent, rank in ranks.items())
    return Candidate(Paper(doc_id, doc_id), (*scores, StageScore("fused", 1, 0.5)))


def test_name_features_read_the_names_agents() -> None:
    cands = [_cand("bert", names=1, bm25=2), _cand("elmo", names_weak=1, bm25=1), _cand("gpt", bm25=3),
             _cand("t5", names=2)]
    assert name_features(cands, "bert") == {"named": 1.0, "other_named": 0.5, "named_weak": 0.0,
                                            "other_named_weak": 1.0}
    assert name_features(cands, "gpt")["other_named"] == 1.0 and name_features(cands, "gpt")["named"] == 0.0
    assert name_features(cands, "t5")["named"] == 0.5  # the second strong name match


def test_the_shipped_model_reads_another_paper_named_as_evidence_against_the_key() -> None:
    model = default_model()
    assert {"named", "named_weak", "other_named", "other_named_weak"} <= set(model.features)
    typical = dict(zip(model.features, model.mean, strict=True))
    assert model.probability({**typical, "other_named": 1.0}) < model.probability({**typical, "other_named": 0.0})


@pytest.mark.slow
def test_a_swapped_key_whose_paper_the_sentence_names_is_flagged_with_the_named_paper_offered(tmp_path):
    text = (LATEX / "checked.tex").read_text(encoding="utf-8")
    swapped = text.replace("machine translation \\citep{Vaswani.Shazeer.ea.2017}",
                           "machine translation \\citep{Hochreiter.Schmidhuber.1997}")
    assert swapped != text
    tex, bib, out = tmp_path / "named.tex", tmp_path / "refs.bib", tmp_path / "check.json"
    tex.write_text(swapped, encoding="utf-8")
    shutil.copy(LATEX / "refs.bib", bib)
    main(["check", str(tex), "--bib", str(bib), "--json", str(out)])
    records = json.loads(out.read_text(encoding="utf-8"))["citations"]
    wrong = next(r for r in records if "The Transformer replaced recurrence" in r["sentence"])
    assert wrong["key"] == "Hochreiter.Schmidhuber.1997" and wrong["verdict"] == "likely wrong", wrong
    offered = {a["key"]: a["probability"] for a in wrong["alternatives"]}
    assert offered.get("Vaswani.Shazeer.ea.2017", 0.0) >= 0.5, offered
