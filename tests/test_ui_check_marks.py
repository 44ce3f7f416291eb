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


# --- one number and one word per citation; the page follows each Replace (issue 37, items 1 and 2) --------------

def _cite(index: int, verdict: str, p: float) -> CheckedCitation:
    return CheckedCitation(index, f"k{index}", "a.tex", index + 1, "cite", "S [CITATION].", verdict, p, index + 1, 9)


def _report(*cites: CheckedCitation):
    from citefinder.check.draft import CheckReport

    return CheckReport(citations=tuple(cites), problems=(), library_size=9, elapsed_s=1.0)


def test_the_verdict_is_the_band_of_the_number_as_shown() -> None:
    from citefinder.check.model import DOUBTFUL, FITS, WRONG, default_model

    model = default_model()
    (_, fits_from, _), (_, doubtful_from, _), _ = model.bands()
    for p in (fits_from - 0.004, fits_from, fits_from + 0.01, 0.999):  # 0.766 shown "0.77" is in the fits band
        assert model.verdict(p) == (FITS if round(p, 2) >= fits_from else DOUBTFUL), p
    assert model.verdict(fits_from - 0.01) == DOUBTFUL
    assert model.verdict(doubtful_from - 0.01) == WRONG and model.verdict(0.0) == WRONG
    legend = model.legend()  # said once on the page
    assert f"fits: {fits_from:.2f} or more" in legend and f"below {doubtful_from:.2f}" in legend
    assert f"doubtful: {doubtful_from:.2f} to {fits_from - 0.01:.2f}" in legend


def test_every_number_shown_lies_in_the_band_its_word_names() -> None:
    from citefinder.check.model import default_model

    model = default_model()
    bands = {word: (low, high) for word, low, high in model.bands()}
    for i in range(101):
        p = i / 100
        low, high = bands[model.verdict(p)]
        assert low <= round(p, 2) <= high


def test_a_replaced_key_is_fixed_in_the_row_the_counts_and_the_summary() -> None:
    from citefinder.ui.check_view import citation_rows, shown_verdict, summary_line, tally

    report = _report(_cite(0, "fits", 0.95), _cite(1, "likely wrong", 0.1), _cite(2, "likely wrong", 0.2),
                     _cite(3, "doubtful", 0.7))
    assert tally(report, {}) == {"fits": 1, "doubtful": 1, "likely wrong": 2, "fixed": 0}
    assert "fixed" not in summary_line(report, {})
    fixes = {1: "good2020"}
    assert tally(report, fixes) == {"fits": 1, "doubtful": 1, "likely wrong": 1, "fixed": 1}
    assert shown_verdict(report.citations[1], fixes) == "fixed: good2020"
    assert "likely wrong] 1" in summary_line(report, fixes) and "fixed] 1" in summary_line(report, fixes)
    rows = citation_rows(report, fixes)
    assert rows[1]["verdict"] == "fixed: good2020" and rows[2]["verdict"] == "likely wrong"
    assert set(rows[0]) == {"#", "line", "key", "verdict", "fit", "better fit"}  # no rank beside the word


def test_the_judged_mark_shows_the_key_that_replaces_it() -> None:
    assert "smith2020 → jones2021" in judged_sentence(checked("We use B [CITATION]."), "jones2021")
