"""Retrieval agents as plugins: per-slot queries, names, authors, exact dense search, and a toy agent
added with one class and one registry line, on the real sample library (170 papers, Chroma + bm25s + MiniLM)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citefinder.config import Settings
from citefinder.index.base import derived
from citefinder.index.names import paper_names
from citefinder.index.vectors import dense_search
from citefinder.retrieve.query.mentions import author_mentions, local_part, name_mentions
from citefinder.text.slots import find_slots
from citefinder.types import AuthorMention, Paper

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample-library.bib"
TRANSFORMER = ("Modern sequence models are built on the Transformer, which replaces recurrence entirely "
               "with self-attention [CITATION].")


def focus(text: str, i: int = 0) -> str:
    return find_slots(text, 0)[i].focus


# --- the text next to a marker (pure) --------------------------------------------------------------

def test_slots_sharing_a_sentence_get_their_own_part():
    text = "Clustering uses DBSCAN [CITATION] and Hierarchical DBSCAN [CITATION] on the embeddings."
    assert local_part(focus(text, 0)) == "Clustering uses DBSCAN"
    assert local_part(focus(text, 1)) == "and Hierarchical DBSCAN"
    assert name_mentions(focus(text, 0))[0] == "DBSCAN"
    assert name_mentions(focus(text, 1))[0] == "Hierarchical DBSCAN"
    assert local_part(focus("Only one slot here [CITATION].")) == ""  # all of the sentence is its own


def test_a_marker_that_is_the_subject_reads_what_follows():
    text = "[CITATION] proposed GloVe, while [CITATION] proposed word2vec."
    assert name_mentions(focus(text, 0)) == ("GloVe",)
    assert name_mentions(focus(text, 1))[0] == "word2vec"


def test_names_right_before_the_marker_nearest_first():
    assert name_mentions(focus(TRANSFORMER))[0] == "Transformer"
    assert name_mentions(focus("We fine-tune BART [CITATION] and OPT [CITATION] on it.", 1))[0] == "OPT"
    assert "ImageNet" in name_mentions(focus("Images come from the ImageNet dataset [CITATION]."))
    assert "dropout" in name_mentions(focus("We regularise with dropout [CITATION]."))
    assert name_mentions(focus("It was shown before [CITATION].")) == ()


def test_author_mentions():
    assert author_mentions(focus("As Vaswani et al. (2017) [CITATION] showed, attention suffices.")) == (
        AuthorMention("Vaswani", 2017),)
    assert author_mentions(focus("Smith and Jones [CITATION] disagree.")) == (AuthorMention("Smith"),)
    assert author_mentions(focus("Following Devlin et al. [CITATION] (2019), we fine-tune.")) == (
        AuthorMention("Devlin", 2019),)
    assert author_mentions(focus("The Transformer [CITATION] is everywhere.")) == ()


def test_names_a_paper_introduces():
    bert = Paper("x", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                 abstract="We introduce a new language representation model called BERT, which stands for ...")
    assert paper_names(bert) == {"bert": 3.0}
    assert set(paper_names(Paper("y", "Long Short-Term Memory"))) == {"lstm", "longshorttermmemory"}
    assert "transformer" in paper_names(Paper("z", "Attention Is All You Need"))  # known name of a landmark work
    assert "rpn" in paper_names(Paper("w", "Faster R-CNN: Towards Real-Time Object Detection",
                                      abstract="we introduce a Region Proposal Network (RPN) that shares ..."))


def test_citation_keys_add_only_the_names_the_record_does_not_say():
    from citefinder.index.keys import key_names

    lama = Paper("a", "Language Models as Knowledge Bases?", authors=("Fabio Petroni", "Tim Rocktäschel"), key="lama")
    assert key_names(lama) == {"lama"}
    # generated keys (surname, title words, year) add nothing; a title word's part is not a name
    assert key_names(Paper("b", "Attention Is All You Need", authors=("Ashish Vaswani",),
                           key="vaswaniAttentionAllYou2017")) == set()
    assert key_names(Paper("c", "HyperNetworks", authors=("David Ha",), key="haHyperNetworks2016")) == set()
    assert key_names(Paper("d", "Gradient-based learning applied to document recognition",
                           authors=("Yann LeCun",), key="lecun1998mnist")) == {"mnist"}
    assert key_names(Paper("e", "No key here")) == set()


# --- on the real sample library --------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    from citefinder.library.store import Library

    settings = Settings(library=tmp_path_factory.mktemp("sample") / "library")
    library = Library.open(settings)
    report = library.import_files([SAMPLE])
    assert report.added >= 160, report
    return library


@pytest.mark.slow
def test_the_transformer_sentence_finds_attention_is_all_you_need(sample):
    from citefinder.pipeline.pipeline import Pipeline

    result = Pipeline(sample.settings, sample).cite_text(TRANSFORMER)[0]
    assert result.candidates[0].paper.title == "Attention Is All You Need"
    names = result.trace("names")
    assert names.kind == "retriever" and names.status == "ok"
    assert sample.get([names.top[0].doc_id])[0].title == "Attention Is All You Need"


@pytest.mark.slow
def test_an_author_year_mention_finds_the_paper(sample):
    from citefinder.pipeline.pipeline import Pipeline

    slot = find_slots("As Vaswani et al. (2017) [CITATION] showed, recurrence is not needed.", 0)[0]
    result = Pipeline(sample.settings, sample).cite_slot(slot)
    authors = result.trace("authors")
    assert authors.status == "ok" and sample.get([authors.top[0].doc_id])[0].title == "Attention Is All You Need"


@pytest.mark.slow
def test_exact_dense_search_is_the_true_nearest_neighbours_every_time(sample):
    from citefinder.index.vectors import VECTORS

    text = "pre-training deep bidirectional language representations"
    first = dense_search(sample, text, 100)
    assert first == dense_search(sample, text, 100)  # repeatable
    index = derived(sample, VECTORS)
    q = sample.embedder.encode([text])[0]
    sims = np.asarray(index.matrix) @ (q / np.linalg.norm(q))
    brute = [index.doc_ids[i] for i in np.argsort(-sims, kind="stable")[:100]]
    assert [h.doc_id for h in first] == brute
    assert len(first) == min(100, sample.embedded_count())


@pytest.mark.slow
def test_a_saved_vector_index_that_misses_papers_is_rebuilt(sample):
    """Another process's vectors can reach the store after its index was saved: the count check catches it."""
    from citefinder.index.base import INDEXES_DIR
    from citefinder.index.vectors import VECTORS, VectorMatrix
    from citefinder.library.store import Library

    full = derived(sample, VECTORS)
    folder = sample.path / INDEXES_DIR / VECTORS.name
    VECTORS.save(VectorMatrix(full.doc_ids[:-1], np.asarray(full.matrix)[:-1]), folder)  # same stamp, one short
    reopened = Library.open(sample.settings, embedder=sample.embedder)
    assert len(derived(reopened, VECTORS).doc_ids) == sample.embedded_count()


@pytest.mark.slow
def test_a_hand_written_key_finds_the_paper_its_name_is_written_next_to(tmp_path):
    """The user's .bib says ``@article{mnist, ...}`` for LeCun et al. 1998; the draft says "MNIST [CITATION]"."""
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{mnist, title={Gradient-Based Learning Applied to Document Recognition}, "
        "author={LeCun, Yann and Bottou, Leon}, year={1998}}\n"
        "@article{krizhevsky2009learning, title={Learning Multiple Layers of Features from Tiny Images}, "
        "author={Krizhevsky, Alex}, year={2009}}\n"
        "@article{he2016deep, title={Deep Residual Learning for Image Recognition}, author={He, Kaiming}, "
        "year={2016}}\n",
        encoding="utf-8")
    library = Library.open(Settings(library=tmp_path / "library"))
    assert library.import_files([bib]).added == 3
    result = Pipeline(library.settings, library).cite_text("We train on the handwritten digits of MNIST [CITATION].")[0]
    keys = result.trace("keys")
    assert keys.kind == "retriever" and keys.status == "ok", keys
    assert [library.get([h.doc_id])[0].key for h in keys.top] == ["mnist"]
    other = Pipeline(library.settings, library).cite_text("Residual connections ease training [CITATION].")[0]
    skipped = other.trace("keys")  # no key part is written there
    assert skipped.status == "skipped" and "citation key" in skipped.message and skipped.top == ()
