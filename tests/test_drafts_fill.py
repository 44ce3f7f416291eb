"""Every drafts-dev paper as a LaTeX file (issue 21): its [CITATION] markers written \\citep{?}, read as a
LaTeX project, one slot per marker, and the filled files differ from the originals only at the
placeholders, byte for byte (read from ../shared/data, never copied into the repository)."""

from __future__ import annotations

import json
import re

import pytest

from citefinder.text.project import read_project
from citefinder.text.slots import find_slots
from conftest import SHARED_DATA
from latex_support import assert_only_placeholders_changed

DRAFTS = SHARED_DATA / "drafts-dev"
PAPERS = sorted(p.name for p in DRAFTS.iterdir() if (p / "draft.txt").is_file()) if DRAFTS.is_dir() else []


def test_all_32_papers_are_here():
    assert len(PAPERS) == 32, f"drafts-dev missing from {DRAFTS} (see shared/DATA.md)"


@pytest.mark.parametrize("name", PAPERS)
def test_a_draft_as_tex_is_filled_only_at_its_placeholders(name, tmp_path):
    text = (DRAFTS / name / "draft.txt").read_text(encoding="utf-8")
    markers = text.count("[CITATION]")
    gold = [line for line in (DRAFTS / name / "gold.jsonl").read_text().splitlines() if line.strip()]
    assert markers == len(gold)
    tex = re.sub(r"\[CITATION\]", lambda m: "\\citep{?}", text)
    path = tmp_path / "main.tex"
    path.write_bytes(tex.encode("utf-8"))
    project = read_project(path)
    slots = find_slots(project.text, latex=True)
    assert len(slots) == markers
    keys = {s.index: json.loads(gold[s.index])["keys"] or f"k{s.index}" for s in slots}
    (filled,) = project.fill(slots, keys, command="\\citep").values()
    became = assert_only_placeholders_changed(tex, filled, slots)
    assert len(became) == markers
    assert all(b.startswith("\\citep{") and "?" not in b for b in became)
    assert project.files[0].encode(filled).decode("utf-8") == filled
