"""The Check page's sentence: the judged cite command highlighted, the others shown as [·], the key's place named."""

from __future__ import annotations

from citefinder.check.run import CheckedCitation
from citefinder.ui.check_view import judged_sentence


def checked(focus: str, position: int = 1, keys: int = 1) -> CheckedCitation:
    return CheckedCitation(0, "smith2020", "a.tex", 3, "citep", focus.replace("[OTHER]", "[CITATION]"), "doubtful",
                           0.3, None, 10, focus=focus, position=position, keys_in_command=keys)


def test_only_the_judged_command_is_marked() -> None:
    text = judged_sentence(checked("A [OTHER] and B [CITATION] and C [OTHER] and D [OTHER]."))
    assert text.count(":red-background[") == 1 and "[CITATION]" not in text and text.count("[·]") == 3
    assert text.index(":red-background[") > text.index("B")  # at B's command, not A's
    assert "smith2020" in text


def test_the_keys_place_in_its_command_is_named() -> None:
    assert "key 2 of 3" in judged_sentence(checked("We use B [CITATION].", position=2, keys=3))
    assert "key" not in judged_sentence(checked("We use B [CITATION].")).replace("smith2020", "")
