"""Markers of one sentence are different citations (citefinder/select/sentences.py, pipeline/concurrency.py):
the threshold rule never fills two of them with one paper, the more confident keeps it and the other is
filled again without it, saying why; the same name next to both markers, a user's or an LLM's pick, and
markers of other sentences are left alone. Through the real engine: the list-like sentence of
tests/data/latex/paper.tex gets three different papers, none of them wrong."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.pipeline.concurrency import cite_slots
from citefinder.select.hubs import held_back
from citefinder.select.sentences import clash, gives_way, same_sentence
from citefinder.types import Candidate, Hit, Paper, Query, Selection, Slot, SlotResult, StageTrace

LIST = ("Deep networks are trained with adaptive moment estimation [CITATION], regularized by randomly dropping "
        "units [CITATION], and normalized over each mini-batch [CITATION].")
BN, ADAM, DROPOUT = Paper("bn", "Batch Normalization"), Paper("adam", "Adam"), Paper("dropout", "Dropout")


def result(i: int, sentence: str, paper: Paper | None, conf: float, method: str = "threshold", start: int = 0,
           names: tuple[str, ...] = ()) -> SlotResult:
    slot = Slot(i, start + i * 40, start + i * 40 + 10, "[CITATION]", sentence, sentence)
    sel = Selection("found" if paper else "not_found", paper, conf, method, "selected the top fused candidate")
    top = (Hit(paper.doc_id, 1, conf),) if paper else ()
    trace = StageTrace("select", top=top, details={"selected": paper.doc_id if paper else None})
    return SlotResult(slot, Query(sentence, names=names), (Candidate(paper),) if paper else (), sel, (trace,))


def test_two_markers_of_a_sentence_with_one_paper_clash_the_less_confident_gives_way() -> None:
    a, b = result(0, LIST, BN, 0.64), result(1, LIST, BN, 0.88)
    assert same_sentence(a, b) and clash(b, [a]) is a
    assert gives_way(a, b) and not gives_way(b, a)
    assert gives_way(result(2, LIST, BN, 0.7), result(1, LIST, BN, 0.7))  # a tie: the later marker
    # another sentence, another paper, an LLM's pick, the same name next to both markers: no clash
    assert clash(result(1, "Another sentence [CITATION].", BN, 0.9), [a]) is None
    assert clash(result(1, LIST, ADAM, 0.9), [a]) is None
    assert clash(result(1, LIST, BN, 0.9, method="llm"), [a]) is None
    assert clash(result(1, LIST, BN, 0.9, names=("BERT",)), [result(0, LIST, BN, 0.6, names=("BERT",))]) is None
    # the same sentence text far away in the draft (a repeated sentence) is another sentence
    assert not same_sentence(a, result(1, LIST, BN, 0.9, start=10_000))


class Scripted:
    """A SlotCiter whose slots rank fixed papers (with fixed confidences); ``exclude`` takes papers out."""

    def __init__(self, ranked: dict[int, list[tuple[Paper, float]]], threshold: float = 0.55) -> None:
        self.settings = Settings(confidence_threshold=threshold)
        self.selector, self.rewriter = object(), None
        self.ranked, self.threshold = ranked, threshold
        self.calls: list[tuple[int, tuple[str, ...]]] = []

    def cite_slot(self, slot: Slot, *, draft: str = "", cocited: Sequence[str] = (),
                  exclude: Sequence[str] = (), draft_slots: int | None = None) -> SlotResult:
        self.calls.append((slot.index, tuple(exclude)))
        left = [(p, c) for p, c in self.ranked[slot.index] if p.doc_id not in exclude]
        paper, conf = left[0]
        found = conf >= self.threshold
        sel = Selection("found" if found else "not_found", paper if found else None, conf, "threshold", "scripted")
        trace = StageTrace("select", top=tuple(Hit(p.doc_id, n, c) for n, (p, c) in enumerate(left, 1)))
        return SlotResult(slot, Query(slot.sentence), tuple(Candidate(p) for p, _ in left), sel, (trace,))


def slots(n: int, sentence: str = LIST) -> list[Slot]:
    return [Slot(i, i * 40, i * 40 + 10, "[CITATION]", sentence, sentence) for i in range(n)]


def test_the_fill_keeps_the_paper_where_it_is_surest_and_fills_the_others_without_it() -> None:
    citer = Scripted({0: [(BN, 0.64), (ADAM, 0.60)], 1: [(BN, 0.65), (DROPOUT, 0.58)], 2: [(BN, 0.88), (ADAM, 0.2)]})
    results = cite_slots(citer, slots(3))
    picks = [r.selection.paper.doc_id if r.selection.paper else None for r in results]
    assert picks == ["adam", "dropout", "bn"]
    why = held_back(results[0])
    assert why is not None and "Batch Normalization is the pick of slot" in why and "same sentence" in why
    assert held_back(results[2]) is None
    assert all("bn" in ex for i, ex in citer.calls if ex)  # every second filling left Batch Normalization out


def test_a_slot_with_nothing_else_above_the_threshold_is_left_for_you() -> None:
    citer = Scripted({0: [(BN, 0.9)], 1: [(BN, 0.7), (ADAM, 0.3)]})
    first, second = cite_slots(citer, slots(2))
    assert first.selection.paper == BN and second.selection.status == "not_found"
    why = held_back(second)
    assert why is not None and "nothing else clears the threshold" in why


def test_markers_of_different_sentences_may_share_a_paper() -> None:
    citer = Scripted({0: [(BN, 0.9)], 1: [(BN, 0.8)]})
    one = Slot(0, 0, 10, "[CITATION]", "Batch normalization [CITATION] helps.", "x")
    two = Slot(1, 400, 410, "[CITATION]", "We normalize each mini-batch [CITATION].", "y")
    assert [r.selection.paper for r in cite_slots(citer, [one, two])] == [BN, BN]


LATEX = Path(__file__).parent / "data" / "latex"


@pytest.mark.slow
def test_the_list_sentence_of_the_latex_draft_gets_different_papers_none_wrong(tmp_path, monkeypatch, capsys):
    from citefinder.cli.main import main

    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    for name in ("paper.tex", "refs.bib"):
        shutil.copy(LATEX / name, tmp_path / name)
    assert main(["fill", str(tmp_path / "paper.tex"), "--bib", str(tmp_path / "refs.bib"),
                 "--json", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    rows = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    listed = [r for r in rows if "adaptive moment estimation" in r["slot"]["sentence"]]
    assert len(listed) == 3
    right = ["Kingma.Ba.2015", "Srivastava.Hinton.ea.2014", "Ioffe.Szegedy.2015"]
    keys = [r["cite_key"] for r in listed]
    filled = [k for k in keys if k]
    assert len(set(filled)) == len(filled), keys  # no paper in two of its markers
    assert all(k in (None, want) for k, want in zip(keys, right, strict=True)), keys  # none of them wrong
    assert keys[2] == "Ioffe.Szegedy.2015"
    # the two placeholders of one \citep{?, ?} are two papers as well
    both = [r["cite_key"] for r in rows if "describe deep learning at length" in r["slot"]["sentence"]]
    assert len(both) == 2 and both[0] != both[1], both


def test_an_unfilled_marker_whose_first_candidate_another_marker_holds_is_ranked_without_it() -> None:
    citer = Scripted({0: [(BN, 0.9)], 1: [(BN, 0.4), (DROPOUT, 0.3)]})
    first, second = cite_slots(citer, slots(2))
    assert first.selection.paper == BN and second.selection.status == "not_found"
    assert second.candidates[0].paper == DROPOUT  # Batch Normalization is the first marker's
    why = held_back(second)
    assert why is not None and "ranked without it" in why
    # the other way round: the later marker is the confident one, the earlier unfilled one is ranked again
    citer = Scripted({0: [(BN, 0.4), (ADAM, 0.3)], 1: [(BN, 0.9)]})
    first, second = cite_slots(citer, slots(2))
    assert first.candidates[0].paper == ADAM and second.selection.paper == BN
