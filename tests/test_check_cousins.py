"""The Check page by the same evidence as the fill (issue 49 item 4): a key whose paper is a cousin of the work the
sentence names is *likely wrong* with the named paper offered, and the word always follows the number shown.

tests/data/cousins/ holds invented papers with a close relative each (no landmark's known name): Fenwick (a model)
and FenwickBench (the benchmark written for it), Gloam (a base method) and GloamFlow (its extension)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from citefinder.check.features import cousin_check_features
from citefinder.check.model import WRONG, default_model
from citefinder.check.run import named_stands, not_the_named, overruled_probability
from citefinder.cli.main import main
from citefinder.library.readers import read_papers
from citefinder.types import Candidate, Paper, StageScore

COUSINS = Path(__file__).parent / "data" / "cousins"


def _papers() -> dict[str, Paper]:
    return {p.key: p for p in read_papers(COUSINS / "refs.bib") if isinstance(p, Paper) and p.key}


class _Owners:
    """A library's owners of names, as the check reads them (select/named.py Owners): name -> doc_ids."""

    def __init__(self, owned: dict[str, tuple[str, ...]]) -> None:
        self.owned = owned

    def of(self, name: str) -> tuple[str, ...]:
        return self.owned.get(name.lower(), ())

    def memory(self, key: str) -> frozenset[str]:
        return frozenset()


def test_the_word_follows_the_number_for_an_overruled_key() -> None:
    model = default_model()
    p = overruled_probability(model)
    assert model.verdict(p) == WRONG
    for fit in (0.0, 0.3, 0.77, 0.99, 1.0):  # a key the fit model thinks fits is shown in the band of its word
        assert model.verdict(min(fit, p)) == WRONG
        assert round(min(fit, p), 2) < round(model.wrong_below, 2)


def test_the_name_rule_stands_only_with_the_named_paper_in_the_library_and_not_cited_beside() -> None:
    assert named_stands(("fenwick",), "bench", set())  # the named paper is there, and not cited here
    assert not named_stands((), "numpy-array", set())  # "NumPy [CITATION]" with no other NumPy paper: no better key
    assert not named_stands(("fenwick",), "fenwick", set())  # the key is the named paper
    # "REINFORCE \\cite{williams, sutton}": the name is the first key's; the second is cited beside it
    assert not named_stands(("williams",), "sutton", {"williams", "sutton"})


def test_the_base_methods_paper_written_for_the_method_the_sentence_names_is_not_the_named() -> None:
    papers = _papers()
    gloam, flow = papers["Moreau.2017.gloam"], papers["Moreau.2018.gloamflow"]
    owners: Any = _Owners({"gloamflow": (flow.doc_id,), "gloam": (gloam.doc_id,)})
    focus = "The sample efficiency improves with normalizing flows as search distributions in GloamFlow [CITATION]."
    why = not_the_named(focus, gloam, owners)
    assert why is not None and why[1] == (flow.doc_id,) and "GloamFlow" in why[0]
    assert not_the_named(focus, flow, owners) is None  # the named paper itself
    assert not_the_named("Our controller is trained with Gloam [CITATION].", gloam, owners) is None


def _cand(paper: Paper, rank: int) -> Candidate:
    return Candidate(paper, (StageScore("bm25", rank, 1.0), StageScore("fused", rank, 1.0 / rank)))


def test_a_better_fitting_cousin_and_the_words_that_tell_them_apart_are_features_of_the_check() -> None:
    papers = _papers()
    model, bench = papers["Okafor.2019.fenwick"], papers["Okafor.2020.fenwickbench"]
    other = papers["Brennan.2015.dropout"]
    cands = [_cand(model, 1), _cand(bench, 2), _cand(other, 3)]
    sentence = "We train the Fenwick message passing network on small molecules."
    f = cousin_check_features(sentence, cands, 1, {0: 0.9, 2: 0.1}, 0.4)  # the benchmark's key, the model first
    assert f["cousin_alt_p"] == 0.9 and f["cousin_alt_gap"] == pytest.approx(0.5)
    g = cousin_check_features(sentence, cands, 2, {0: 0.9, 1: 0.4}, 0.1)  # an unrelated key: no cousin
    assert g["cousin_alt_p"] == 0.0 and g["tell_gap"] >= 0.0


@pytest.mark.slow
def test_the_two_check_cousins_are_likely_wrong_with_the_named_paper_offered(tmp_path: Path) -> None:
    text = (COUSINS / "main.tex").read_text(encoding="utf-8")
    swapped = (text.replace("network \\citep{Okafor.2019.fenwick}", "network \\citep{Okafor.2020.fenwickbench}")
               .replace("in GloamFlow \\citep{Moreau.2018.gloamflow}", "in GloamFlow \\citep{Moreau.2017.gloam}"))
    assert swapped.count("fenwickbench") == 2 and swapped.count("Moreau.2017.gloam") == 2
    model = default_model()
    verdicts = {}
    for name, tex_text in (("right", text), ("swapped", swapped)):
        tex, bib, out = tmp_path / f"{name}.tex", tmp_path / "refs.bib", tmp_path / f"{name}.json"
        tex.write_text(tex_text, encoding="utf-8")
        shutil.copy(COUSINS / "refs.bib", bib)
        main(["check", str(tex), "--bib", str(bib), "--json", str(out)])
        records = json.loads(out.read_text(encoding="utf-8"))["citations"]
        for r in records:  # the word always follows the number shown
            assert r["verdict"] == model.verdict(r["probability"]), r
        verdicts[name] = records
    bench = next(r for r in verdicts["swapped"] if "Fenwick network" in r["sentence"])
    assert bench["key"] == "Okafor.2020.fenwickbench" and bench["verdict"] == WRONG, bench
    assert bench["alternatives"][0]["key"] == "Okafor.2019.fenwick"
    base = next(r for r in verdicts["swapped"] if "GloamFlow" in r["sentence"])
    assert base["key"] == "Moreau.2017.gloam" and base["verdict"] == WRONG, base
    assert base["alternatives"][0]["key"] == "Moreau.2018.gloamflow"
    for r in verdicts["right"]:  # the right keys of the same sentences are not called wrong by the name rule
        if "Fenwick network" in r["sentence"] or "GloamFlow" in r["sentence"] or "with Gloam" in r["sentence"]:
            assert r["verdict"] != WRONG and "the sentence names" not in r["reason"], r
