"""LaTeX drafts read as LaTeX, and filled in their own cite commands with the rest left byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from citefinder.errors import InputError
from citefinder.text.fill import fill_draft, normalize_command
from citefinder.text.slots import find_slots
from latex_support import assert_only_placeholders_changed

PAPER = Path(__file__).parent / "data" / "latex" / "paper.tex"


def test_paper_slots_commands_and_comments():
    text = PAPER.read_text(encoding="utf-8")
    slots = find_slots(text)
    assert len(slots) == 22
    assert [s.command for s in slots[:4]] == ["\\citep", "\\citet", "\\citep", "\\cite"]
    assert {s.command for s in slots} == {"\\citep", "\\citet", "\\cite", "\\autocite", ""}
    assert [s.marker for s in slots if not s.command] == ["[CITATION]", "[?]"]
    # nothing inside a % comment is a slot, and comment text is in no context
    for s in slots:
        line_start = text.rfind("\n", 0, s.start) + 1
        assert "%" not in text[line_start : s.start].replace("\\%", "")
        assert "TODO" not in s.context and "must not become" not in s.context and "Old section" not in s.context
    # \citep{?, ?} is two slots of one command, sharing its span
    multi = [s for s in slots if s.marker == "\\citep{?, ?}"]
    assert len(multi) == 2 and multi[0].start == multi[1].start
    assert multi[0].sentence == "Reviews and textbooks describe deep learning at length [CITATION][CITATION]."
    assert multi[0].context.count("[CITATION]") == 1
    # a footnote stays context of its slot, as a parenthesis after its sentence
    foot = next(s for s in slots if "first dense retriever" in s.sentence)
    assert foot.command == "\\citet"
    assert "Siamese BERT networks give sentence embeddings" in foot.context
    assert "\\footnote" not in foot.context
    # ~ is a space, \% stays text
    assert any("50\\% of the gains" in s.context for s in slots)


def test_filled_paper_keeps_commands_and_every_other_byte():
    text = PAPER.read_text(encoding="utf-8")
    slots = find_slots(text)
    keys = {s.index: f"k{s.index}" for s in slots}
    filled = fill_draft(text, slots, keys)
    became = assert_only_placeholders_changed(text, filled, slots)
    assert became[:4] == ["\\citep{k0}", "\\citet{k1}", "\\citep{k2}", "\\cite{k3}"]
    assert "\\citep[e.g.][]{k5}" in became
    assert "\\citep{k17, k18}" in became  # several placeholders: one command, several keys
    assert "\\citep[see][p.~3]{k19}" in became
    assert "\\autocite{k9}" in became and "\\cite{k10}" in became  # \cite{} too
    assert "\\cite{k8}" in became and "\\cite{k11}" in became  # plain markers take the default command
    # comments are untouched, including the placeholders in them
    assert "% TODO: also cite the survey \\citep{?} here." in filled
    assert "%  a trailing comment with [CITATION] inside" in filled
    # a plain marker takes the command the user picks
    assert "\\autocite{k8}" in fill_draft(text, slots, keys, command="autocite")


def test_partly_filled_commands_keep_their_other_placeholders_and_keys():
    text = "A \\citep{smith2020, ?, TODO} B \\citet*{?} C [CITATION], [?] D [CITATION][CITE]."
    slots = find_slots(text)
    assert [s.command for s in slots] == ["\\citep", "\\citep", "\\citet*", "", "", "", ""]
    out = fill_draft(text, slots, {0: "x", 2: "y", 3: "a", 4: "b", 5: "c"})
    # adjacent plain markers, all filled, become one command; a run with a gap in it does not
    assert out == "A \\citep{smith2020, x, TODO} B \\citet*{y} C \\cite{a,b} D \\cite{c}[CITE]."
    # the same key twice in one command is written once
    assert fill_draft(text, slots, {0: "smith2020"}) == text.replace(", ?,", ",", 1)


@pytest.mark.parametrize(
    "marker", ["\\cite{?}", "\\cite{}", "\\cite{TODO}", "\\citep{?}", "[?]", "[CITATION]", "\\autocite{ ?? }",
               "\\parencite[p.~2]{XXX}", "\\Textcite{?}"],
)
def test_common_placeholders_are_found(marker):
    text = f"\\section{{A}}\nModels work {marker}.\n"
    (slot,) = find_slots(text)
    assert slot.marker == marker


def test_real_keys_nocite_and_escaped_percent_are_not_slots():
    text = "\\section{A}\nKnown \\citep{smith2020}. \\nocite{?} Up by 50\\% [CITATION] here.\n"
    (slot,) = find_slots(text)
    assert slot.marker == "[CITATION]" and slot.sentence.endswith("Up by 50\\% [CITATION] here.")


def test_percent_in_plain_text_is_not_a_comment():
    (slot,) = find_slots("Accuracy rose by 5% [CITATION] in the study.")
    assert slot.sentence == "Accuracy rose by 5% [CITATION] in the study."


def test_a_comment_line_does_not_join_or_split_sentences():
    text = "\\section{A}\nFirst claim [CITATION]\n% a note. With A Capital.\nand its end. Second.\n"
    (slot,) = find_slots(text, context_sentences=0)
    assert slot.sentence == "First claim [CITATION] and its end."


def test_bad_command_is_refused():
    assert normalize_command("citep") == "\\citep" and normalize_command("\\autocite") == "\\autocite"
    with pytest.raises(InputError):
        normalize_command("\\cite{x}")
