"""The reformulate agent on real CiteME-style contexts: what is removed, what keywords remain."""

from __future__ import annotations

from citefinder.retrieve.query.reformulate import MAX_KEYWORDS, clean_context, extract_keywords, reformulate
from citefinder.types import Slot

CITEME_12 = (
    "To the best of our knowledge, the only other unsupervised method that learns disentangled "
    "representations is hossRBM [CITATION], a higher-order extension of the spike-and-slab restricted "
    "Boltzmann machine that can disentangle emotion from identity on the Toronto Face Dataset [25]."
)


def test_removes_markers_and_numeric_refs():
    text = clean_context(CITEME_12)
    assert "[CITATION]" not in text and "[25]" not in text
    assert "hossRBM, a higher-order extension" in text
    assert text.endswith("Toronto Face Dataset.")


def test_removes_grouped_and_ranged_refs_and_other_markers():
    text = clean_context("Deep nets [3, 4] and CNNs [5-7] [12] [CITE] [?] [CITATIONS] work.")
    assert text == "Deep nets and CNNs work."


def test_removes_latex_urls_math_and_author_year():
    raw = (
        r"As shown by \citet{smith2020} in Section~\ref{sec:x}, \emph{deep} networks \cite{a,b} "
        r"reach $O(n^2)$ (see https://example.org/a?b=1) (Smith et al., 2020; Lee and Kim 2019a) \cite{?}."
    )
    assert clean_context(raw) == "As shown by in Section, deep networks reach (see)."


def test_collapses_whitespace():
    assert clean_context("  a\n\n  b\t c  ") == "a b c"


def test_keywords_order_dedupe_stopwords():
    kws = extract_keywords("The Transformer uses self-attention; the transformer and BERT use attention.")
    assert kws == ("Transformer", "self-attention", "BERT", "attention")


def test_keywords_cap_prefers_salient_terms_but_keeps_text_order():
    kws = extract_keywords(CITEME_12)
    assert len(kws) == MAX_KEYWORDS
    for term in ("hossRBM", "higher-order", "spike-and-slab", "Boltzmann", "Toronto", "Face", "Dataset"):
        assert term in kws
    assert list(kws).index("hossRBM") < list(kws).index("Boltzmann") < list(kws).index("Toronto")
    assert not {"the", "of", "our", "that", "to"} & {k.lower() for k in kws}


def test_reformulate_slot_and_trace():
    slot = Slot(index=0, start=0, end=10, marker="[CITATION]", sentence=CITEME_12, context=CITEME_12)
    query, trace = reformulate(slot)
    assert query.text == clean_context(CITEME_12)
    assert query.keywords == extract_keywords(query.text)
    assert query.variants == ()
    assert trace.agent == "reformulate" and trace.status == "ok"
    assert trace.inputs["context"] == CITEME_12
    assert trace.details["query"]["text"] == query.text


def test_reformulate_plain_question_and_empty_context():
    query, _ = reformulate("reciprocal rank fusion")
    assert query.text == "reciprocal rank fusion"
    assert query.keywords == ("reciprocal", "rank", "fusion")
    empty, trace = reformulate("[CITATION] [12]")
    assert empty.text == "" and trace.status == "error" and "nothing left" in trace.message


def test_a_name_in_an_aside_before_the_marker_comes_after_the_cited_one():
    from citefinder.retrieve.query.mentions import name_mentions
    from citefinder.retrieve.query.reformulate import clean_focus

    def names(sentence: str) -> tuple[str, ...]:
        return name_mentions(clean_focus(sentence))

    # "Y, following the X design, [CITATION]" and "Y, like X, [CITATION]" cite Y
    assert names("T5, following the Transformer design, [CITATION] casts every task as text.")[0] == "T5"
    assert names("GPT-Neo, like GPT-2, [CITATION] is trained on web text.")[0] == "GPT-Neo"
    # "X-based Y [CITATION]": the modifier is no name of its own work
    assert names("We fine-tune a Transformer-based encoder, BERT [CITATION], on the task.")[0] == "BERT"
    # a name right before the marker, or the only one, stays first
    assert names("We use the original code, following the Transformer [CITATION].") == ("Transformer",)
    assert names("The model, following the Transformer design, [CITATION] is small.")[0] == "Transformer"
    # the name is evidence for the marker it stands next to, not for the sentence's other marker
    assert names("We use the Transformer [OTHER] and T5 [CITATION].")[0] == "T5"
    assert "Transformer" not in names("We use the Transformer [OTHER] and T5 [CITATION].")
