"""The user's picks are their data: several papers per slot, kept through re-runs of an edited draft (only the
edited sentence's pick is set aside, and said so), undoable, and read back from files of the first version."""

from __future__ import annotations

import json

from citefinder.text.slots import find_slots
from citefinder.types import Paper, Query, Selection, SlotResult
from citefinder.ui import picks, workspace

DRAFT = ("Graphs are everywhere [CITATION]. Spectral methods came first [CITATION][CITATION]. "
         "Convolutions followed [CITATION]. The same claim again [CITATION]. The same claim again [CITATION].")


def test_several_papers_per_slot_in_order():
    p: picks.Picks = {}
    p = picks.choose(p, 0, "a")
    p = picks.add(p, p[0], 0, "b")
    p = picks.add(p, p[0], 0, "b")  # once
    assert p == {0: ("a", "b")}
    p = picks.move(p, p[0], 0, "b", -1)
    assert p == {0: ("b", "a")}
    assert picks.remove(p, p[0], 0, "b") == {0: ("a",)}
    assert picks.leave_empty(p, 0) == {0: ()}
    assert picks.add({}, ("sel",), 3, "x") == {3: ("sel", "x")}  # adding to the engine's pick keeps it


def test_current_is_the_users_picks_over_the_engines():
    slots = find_slots("A [CITATION]. B [CITATION]. C [CITATION].")
    paper = Paper("t:p", "P")
    results = [SlotResult(s, Query(""), (), Selection("found", paper, 0.9) if s.index < 2 else
                          Selection("not_found"), ()) for s in slots]
    assert picks.current(results, {1: ("t:q", "t:r")}) == {0: ("t:p",), 1: ("t:q", "t:r"), 2: ()}
    also = SlotResult(slots[0], Query(""), (), Selection("found", paper, 0.9, also=(Paper("t:s", "S"),)), ())
    assert picks.selector_pick(also) == ("t:p", "t:s")


def test_a_rerun_keeps_the_picks_of_unchanged_sentences_and_sets_the_edited_ones_aside():
    old = find_slots(DRAFT)
    assert len(old) == 6
    mine = {0: ("a",), 1: ("b", "c"), 2: ("d",), 3: ("e",), 4: ("f",), 5: ("g",)}
    edited = DRAFT.replace("Spectral methods came first", "Spectral methods, came first")  # one comma
    carry = picks.carry_over(old, mine, find_slots(edited))
    assert carry.picks == {0: ("a",), 3: ("e",), 4: ("f",), 5: ("g",)}  # the copies keep their own picks
    assert carry.kept == 4 and carry.dropped == ()
    assert {i: a.ids for i, a in carry.changed.items()} == {1: ("b", "c"), 2: ("d",)}
    assert carry.changed[1].sentence == "Spectral methods came first [CITATION][CITATION]."
    assert carry.summary().startswith("Kept 4 picks (their sentences did not change); 2 slots changed")

    inserted = "A new first sentence [CITATION]. " + DRAFT  # every slot moves one place
    carry = picks.carry_over(old, mine, find_slots(inserted))
    assert carry.picks == {i + 1: v for i, v in mine.items()} and not carry.changed

    first = picks.carry_over(old, mine, find_slots(edited))
    again = picks.carry_over(find_slots(edited), first.picks, find_slots(edited), first.changed)
    assert again.picks == first.picks and again.changed == first.changed  # set aside until used or dismissed

    gone = picks.carry_over(old, mine, find_slots("Graphs are everywhere [CITATION]."))
    assert gone.picks == {0: ("a",)} and len(gone.dropped) == 5


def test_undo_history_is_bounded():
    history: list[picks.Picks] = []
    for i in range(picks.HISTORY + 5):
        history = picks.pushed(history, {0: (str(i),)})
    assert len(history) == picks.HISTORY and history[-1] == {0: (str(picks.HISTORY + 4),)}


def test_a_version_1_workspace_file_is_read_with_its_picks(tmp_path):
    path = workspace.draft_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "text": "A [CITATION]. B [CITATION]. C [CITATION].", "results": [],
                                "choices": {"0": "t:a", "1": None, "x": "junk"}}), encoding="utf-8")
    draft = workspace.load_draft(tmp_path)
    assert draft is not None and draft.choices == {0: ("t:a",), 1: ()}
    assert draft.history == () and draft.changed == {} and draft.paired is None


def test_start_over_puts_the_draft_aside_and_it_comes_back(tmp_path):
    aside = picks.SetAside(("t:b",), "Old sentence [CITATION].")
    draft = workspace.Draft("A [CITATION].", choices={0: ("t:a", "t:b")}, changed={3: aside},
                            history=({0: ("t:a",)},), paired={"name": "refs.bib", "folder": "/x", "entries": 3})
    workspace.save_draft(tmp_path, draft)
    assert workspace.discard_draft(tmp_path) and workspace.load_draft(tmp_path) is None
    assert workspace.has_previous(tmp_path)
    back = workspace.restore_previous(tmp_path)
    assert back is not None and workspace.load_draft(tmp_path) == back
    assert (back.choices, back.changed, back.history, back.paired) == (draft.choices, draft.changed, draft.history,
                                                                       draft.paired)
    assert not workspace.has_previous(tmp_path)
