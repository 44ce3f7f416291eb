from dataclasses import replace

import pytest

from citefinder.errors import InputError
from citefinder.text.fill import fill_draft, unfilled_report
from citefinder.text.slots import find_slots

TEXT = "Dense retrieval [CITATION] beats BM25 [CITA-\nTION][?]. Fusion helps \\cite{?}."


def test_fill_replaces_filled_slots_from_the_end_and_leaves_the_rest():
    slots = find_slots(TEXT)
    assert len(slots) == 4
    out = fill_draft(TEXT, slots, {0: "karpukhin2020dense", 1: "robertson2009bm", 3: "lin2021fusion"})
    assert out == (
        "Dense retrieval \\cite{karpukhin2020dense} beats BM25 \\cite{robertson2009bm}[?]. "
        "Fusion helps \\cite{lin2021fusion}."
    )


def test_no_keys_means_text_unchanged_and_empty_key_is_unfilled():
    slots = find_slots(TEXT)
    assert fill_draft(TEXT, slots, {}) == TEXT
    assert fill_draft(TEXT, slots, {2: ""}) == TEXT


def test_stale_slots_are_refused():
    slots = find_slots(TEXT)
    moved = [replace(slots[0], start=slots[0].start + 1, end=slots[0].end + 1)]
    with pytest.raises(InputError, match="Slot 1 does not match the text"):
        fill_draft(TEXT, moved, {0: "k"})


def test_unfilled_report_lists_slots_left_as_they_were():
    slots = find_slots(TEXT)
    lines = unfilled_report(slots, {0: "a", 1: "b"})
    assert lines == [
        'Slot 3 left as [?] (no reference chosen): "Dense retrieval [CITATION] beats BM25 [CITATION][CITATION]."',
        'Slot 4 left as \\cite{?} (no reference chosen): "Fusion helps [CITATION]."',
    ]
    assert unfilled_report(slots, {0: "a", 1: "b", 2: "c", 3: "d"}) == []
    long = replace(slots[2], sentence="word " * 40)
    (line,) = unfilled_report([long], {}, width=30)
    assert line.endswith(': "word word word word word..."')
    (split,) = unfilled_report([slots[1]], {})
    assert split.startswith("Slot 2 left as [CITA- TION] ")


def test_a_slot_citing_several_papers_gets_them_all_in_its_own_command():
    slots = find_slots(TEXT)
    out = fill_draft(TEXT, slots, {0: ["a", "b", "a"], 1: ("c",), 3: ["d", "e"]}, command="\\citep")
    assert out == "Dense retrieval \\citep{a,b} beats BM25 \\citep{c}[?]. Fusion helps \\cite{d,e}."
    # adjacent markers all filled become one command; a key already there is cited once
    out = fill_draft(TEXT, slots, {1: ["c", "x"], 2: ["x", "y"]}, command="\\citep")
    assert out == "Dense retrieval [CITATION] beats BM25 \\citep{c,x,y}. Fusion helps \\cite{?}."
    placeholder = "As shown \\citet{known, ?} and \\citep[p.~3]{?}."
    ps = find_slots(placeholder)
    assert fill_draft(placeholder, ps, {0: ["known", "b"], 1: ["c", "d"]}) == (
        "As shown \\citet{known, b} and \\citep[p.~3]{c,d}.")
    assert unfilled_report(slots, {0: ["a"], 1: [], 2: "b", 3: ()})[0].startswith("Slot 2 left")
