"""The fill's last line says which keys come from which .bib (citefinder/workflow/filled_from.py): a key of
new-references.bib, which the draft does not name, is not counted as one of refs.bib."""

from __future__ import annotations

from pathlib import Path

from citefinder.workflow.filled_from import filled_from, key_files

ENTRY = "@article{{{key},\n  title = {{A paper {key}}},\n  author = {{Smith, Ann}},\n  year = {{2020}}\n}}\n"


def bib(path: Path, *keys: str) -> Path:
    path.write_text("".join(ENTRY.format(key=k) for k in keys), encoding="utf-8")
    return path


def test_keys_of_the_named_bib_only_say_so_as_before(tmp_path: Path) -> None:
    refs = bib(tmp_path / "refs.bib", "a2020", "b2021", "c2019")
    line = filled_from({0: ["a2020"], 1: ["b2021"], 3: ["c2019"]}, 4, [refs], tmp_path / "new-references.bib")
    assert line == f"3 of 4 slots filled with keys of {refs}"


def test_a_key_of_new_references_is_said_with_its_file_and_what_to_add(tmp_path: Path) -> None:
    refs = bib(tmp_path / "refs.bib", "a2020", "b2021")
    new = bib(tmp_path / "new-references.bib", "smith2020paper")
    slot_keys = {0: ["a2020"], 1: ["b2021"], 2: ["smith2020paper"]}
    assert key_files(slot_keys, [refs], new) == {"a2020": refs, "b2021": refs, "smith2020paper": new}
    line = filled_from(slot_keys, 4, [refs], new)
    assert line.startswith(f"3 of 4 slots filled: 2 slots with keys of {refs}; 1 slot with keys of {new} "
                           "(smith2020paper), which the draft does not name")
    assert "\\bibliography{..., new-references}" in line
    assert f"3 of 4 slots filled with keys of {refs}" not in line


def test_new_references_named_by_the_draft_is_one_of_its_files(tmp_path: Path) -> None:
    refs = bib(tmp_path / "refs.bib", "a2020")
    new = bib(tmp_path / "new-references.bib", "smith2020paper")
    line = filled_from({0: ["a2020"], 1: ["smith2020paper"]}, 2, [refs, new], new)
    assert line == f"2 of 2 slots filled with keys of {refs}, {new}"
