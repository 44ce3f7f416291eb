import pytest

from citefinder.text.slots import find_slots, split_sentences


def test_empty_and_markerless_text_give_no_slots():
    assert find_slots("") == []
    assert find_slots("   \n\t ") == []
    assert find_slots("No markers here. [1] is a numeric reference.") == []


@pytest.mark.parametrize(
    "marker",
    ["[CITATION]", "[CITATIONS]", "[CITE]", "[CITES]", "[?]", "\\cite{?}", "[citation]", "[Cite]",
     "[CITA-\nTION]", "[CITA- TION]", "[CI TATION]", "[CITATION\n]", "[ CITATION ]", "\\citep{?}"],
)
def test_marker_variants_are_found_with_exact_span(marker):
    text = f"Retrieval works well {marker}. Next sentence."
    (slot,) = find_slots(text)
    assert slot.marker == marker
    assert text[slot.start : slot.end] == marker
    assert slot.start == len("Retrieval works well ")
    assert slot.sentence == "Retrieval works well [CITATION]."


def test_sentence_and_context_with_neighbours():
    text = (
        "Transformers changed NLP. Dense retrievers encode queries separately [CITATION]. "
        "Sparse methods remain strong. A fourth sentence."
    )
    (slot,) = find_slots(text)
    assert slot.index == 0
    assert slot.sentence == "Dense retrievers encode queries separately [CITATION]."
    assert slot.context == (
        "Transformers changed NLP. Dense retrievers encode queries separately [CITATION]. Sparse methods remain strong."
    )
    (narrow,) = find_slots(text, context_sentences=0)
    assert narrow.context == narrow.sentence
    (wide,) = find_slots(text, context_sentences=2)
    assert wide.context.endswith("A fourth sentence.")


def test_abbreviations_and_decimals_do_not_split_sentences():
    text = (
        "Prior models, e.g. BM25, reach 3.5 points more (see Fig. 2 and Smith et al. 2020) [CITATION]. "
        "Then J. Doe did more."
    )
    (slot,) = find_slots(text, context_sentences=0)
    assert slot.sentence == (
        "Prior models, e.g. BM25, reach 3.5 points more (see Fig. 2 and Smith et al. 2020) [CITATION]."
    )
    assert split_sentences("Then J. Doe did more. Is it so? Yes! ok.") == [
        "Then J. Doe did more.", "Is it so?", "Yes! ok."]


def test_question_mark_marker_does_not_end_the_sentence():
    (slot,) = find_slots("This was shown [?] in earlier work. Other.", context_sentences=0)
    assert slot.sentence == "This was shown [CITATION] in earlier work."


def test_adjacent_markers_are_separate_slots_and_others_are_removed_from_context():
    text = "Fusion helps [CITATION][CITATION]. Both kinds agree [CITATION], [CITE] in general."
    slots = find_slots(text, context_sentences=1)
    assert [s.index for s in slots] == [0, 1, 2, 3]
    assert [s.marker for s in slots] == ["[CITATION]", "[CITATION]", "[CITATION]", "[CITE]"]
    assert [text[s.start : s.end] for s in slots] == [s.marker for s in slots]
    assert slots[0].start == 13 and slots[1].start == 23
    assert slots[0].sentence == "Fusion helps [CITATION][CITATION]."
    assert slots[0].context == "Fusion helps [CITATION]. Both kinds agree in general."
    assert slots[3].context == "Fusion helps. Both kinds agree [CITATION] in general."
    for s in slots:
        assert s.context.count("[CITATION]") == 1
        assert "  " not in s.context and " ." not in s.context and " ," not in s.context


def test_split_marker_from_pdf_and_paragraph_breaks():
    text = (
        "# Related work\n"
        "Sparse methods such as BM25 remain strong baselines [CITA-\nTION]. Fusion of both was\n"
        "shown to help.\n\nA new paragraph starts here [CITATION]"
    )
    first, second = find_slots(text)
    assert first.marker == "[CITA-\nTION]"
    assert first.sentence == "Sparse methods such as BM25 remain strong baselines [CITATION]."
    assert first.context == (
        "# Related work Sparse methods such as BM25 remain strong baselines [CITATION]. "
        "Fusion of both was shown to help."
    )
    assert second.sentence == "A new paragraph starts here [CITATION]"
    assert second.context == "Fusion of both was shown to help. A new paragraph starts here [CITATION]"


def test_latex_cite_marker_in_tex_source():
    text = "\\section{Intro}\nWe build on dense retrieval~\\cite{?} and BM25 \\cite{ ? }.\n"
    slots = find_slots(text, context_sentences=0)
    assert [s.marker for s in slots] == ["\\cite{?}", "\\cite{ ? }"]
    assert slots[1].context == "We build on dense retrieval and BM25 [CITATION]."  # ~ reads as a space
    assert split_sentences(text) == ["\\section{Intro}", "We build on dense retrieval~\\cite{?} and BM25 \\cite{ ? }."]
