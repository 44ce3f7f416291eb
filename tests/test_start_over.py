"""*Start over* twice in a row loses nothing (issue 35, item 12): every cleared draft can be brought back, the one
cleared last first, and the one file of earlier versions (``previous-draft.json``) is among them."""

from __future__ import annotations

import json
import os

from citefinder.ui import workspace


def _draft(text: str, pick: str) -> workspace.Draft:
    return workspace.Draft(text, choices={0: (pick,)}, draft_id=workspace.new_draft_id())


def test_two_start_overs_in_a_row_keep_both_drafts(tmp_path):
    first, second = _draft("First [CITATION].", "t:a"), _draft("Second [CITATION].", "t:b")
    workspace.save_draft(tmp_path, first)
    assert workspace.discard_draft(tmp_path, first.draft_id)
    workspace.save_draft(tmp_path, second)
    assert workspace.discard_draft(tmp_path, second.draft_id)
    assert workspace.load_draft(tmp_path) is None and workspace.has_previous(tmp_path)
    assert workspace.load_draft(tmp_path, previous=True).text == second.text  # the one cleared last
    back = workspace.restore_previous(tmp_path)
    assert back is not None and (back.text, back.choices) == (second.text, second.choices)
    assert workspace.has_previous(tmp_path)  # the first is still there
    again = workspace.restore_previous(tmp_path)
    assert again is not None and (again.text, again.choices) == (first.text, first.choices)
    assert not workspace.has_previous(tmp_path) and workspace.restore_previous(tmp_path) is None
    assert {d.text for d in workspace.list_drafts(tmp_path)} == {first.text, second.text}


def test_the_draft_an_earlier_version_put_aside_comes_back_after_newer_ones(tmp_path):
    old = tmp_path / workspace.PREVIOUS
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"version": 3, "text": "Old [CITATION].", "results": [], "choices": {"0": ["t:o"]}}))
    os.utime(old, (1_000_000_000, 1_000_000_000))
    newer = _draft("Newer [CITATION].", "t:n")
    workspace.save_draft(tmp_path, newer)
    workspace.discard_draft(tmp_path, newer.draft_id)
    assert workspace.restore_previous(tmp_path).text == newer.text
    back = workspace.restore_previous(tmp_path)
    assert back is not None and back.text == "Old [CITATION]." and back.choices == {0: ("t:o",)} and back.draft_id
    assert workspace.load_draft(tmp_path, back.draft_id) == back
