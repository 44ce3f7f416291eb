"""Names as evidence (issue 49 items 1 and 3): a name only an abstract gives, a size mark, a sequel, a surname read as
a person, a library read apart from an architecture, and a named paper missing with and without a literature.

Fixtures: tests/data/names/refs.bib (SimCLR named only in its abstract beside MoCo; RoBERTa and BERT; ShuffleNet and
ShuffleNet V2; MobileNets, whose last author is Hartwig Adam, beside the Adam optimizer and Xception; the Transformer
and the Hugging Face Transformers library; GloVe) and tests/data/names/literature.jsonl (a literature library holding
SimCLR, ShuffleNet, the Transformers library and their cousins)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.retrieve.query.naming import mention_in, names_of, relation, split_name
from citefinder.select.named import Owners, decide
from citefinder.types import Candidate, Paper, Selection

DATA = Path(__file__).parent / "data" / "names"
SIMCLR_S = "We pre-train the encoder with SimCLR [CITATION] using a contrastive loss over augmented views of images."
LARGE_S = "We fine-tune RoBERTa-large [CITATION] on each task with its large model."
SHUFFLE_S = "Our backbone is ShuffleNet [CITATION] with pointwise group convolution and channel shuffle."
SHUFFLE2_S = "Our backbone is ShuffleNet V2 [CITATION] with channel split for mobile devices."
ADAM_S = "Following Adam [CITATION], we use depthwise separable convolutions to build light weight networks."
HF_S = "We implement everything in Transformers [CITATION]."
DRAFT = " ".join((SIMCLR_S, LARGE_S, SHUFFLE_S, SHUFFLE2_S, ADAM_S, HF_S))


def _bib_papers() -> dict[str, Paper]:
    text = (DATA / "refs.bib").read_text(encoding="utf-8")
    out = {}
    for key, body in re.findall(r"@\w+\{(\w+),(.*?)\n\}", text, re.S):
        fields = dict(re.findall(r"(\w+)=\{((?:[^{}]|\{[^{}]*\})*)\}", body))
        authors = tuple(a.strip() for a in fields.get("author", "").split(" and "))
        out[key] = Paper(f"id:{key}", fields["title"], authors=authors, abstract=fields.get("abstract", ""), key=key)
    return out


P = _bib_papers()


def _cands(*keys: str) -> tuple[Candidate, ...]:
    return tuple(Candidate(P[k]) for k in keys)


def _pick(key: str, conf: float = 0.96) -> Selection:
    return Selection("found", P[key], conf, "threshold")


# --- the API ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence, written, size, version, reading", [
    (SIMCLR_S, "SimCLR", "", "", "work"), (LARGE_S, "RoBERTa-large", "large", "", "work"),
    (SHUFFLE2_S, "ShuffleNet V2", "", "v2", "work"), (ADAM_S, "Adam", "", "", "person"),
    ("All models are trained with the Adam optimizer [CITATION].", "Adam", "", "", "work"),
    (HF_S, "Transformers", "", "", "library"), ("The Transformer architecture [CITATION] is used.", "Transformer", "",
                                                "", "work"),
    ("We compare with GPT-3 [CITATION].", "GPT-3", "", "3", "work"),
])
def test_the_named_slot_detector_reads_size_version_and_reading(sentence, written, size, version, reading):
    m = mention_in(sentence, surnames={"adam"})
    assert m is not None and (m.written, m.size, m.version, m.reading) == (written, size, version, reading)


def test_the_detector_takes_plain_text_and_the_markers_offset():
    text = "We fine-tune RoBERTa-large on each task."
    m = mention_in(text, text.index(" on each"))
    assert m is not None and m.base == "RoBERTa" and m.size == "large"
    assert mention_in("We use dropout [CITATION] on every layer.") is None


@pytest.mark.parametrize("written, parts", [("BERT-large", ("BERT", "large", "")), ("GPT-2", ("GPT", "", "2")),
                                            ("Transformer-XL", ("Transformer", "", "XL")), ("T5-XL", ("T5", "XL", "")),
                                            ("ResNet-50", ("ResNet", "50", "")), ("YOLOv3", ("YOLO", "", "v3"))])
def test_a_size_is_the_same_work_and_a_version_mark_another(written, parts):
    assert split_name(written) == parts


def test_a_name_only_the_abstract_gives_is_the_papers_name():
    names = names_of(P["chen2020simple"])
    assert "simclr" in names.keys and any(n.source == "abstract" for n in names.by("simclr"))
    assert relation(mention_in(SIMCLR_S), names) == "same"
    assert relation(mention_in(SIMCLR_S), names_of(P["he2020momentum"])) == "other"


@pytest.mark.parametrize("sentence, key, rel", [
    (SHUFFLE_S, "zhang2018shufflenet", "same"), (SHUFFLE_S, "ma2018shufflenetv2", "sequel"),
    (SHUFFLE2_S, "ma2018shufflenetv2", "same"), (SHUFFLE2_S, "zhang2018shufflenet", "sequel"),
    (LARGE_S, "liu2019roberta", "same"), (LARGE_S, "devlin2019bert", "other"),
    (HF_S, "wolf2020transformers", "same"), (HF_S, "vaswani2017attention", "other"),
    ("The Transformer architecture [CITATION] is used.", "vaswani2017attention", "same"),
    ("The Transformer architecture [CITATION] is used.", "wolf2020transformers", "variant"),
    (ADAM_S, "kingma2015adam", "none"),
])
def test_relation_tells_the_same_work_from_its_sequel_variant_and_others(sentence, key, rel):
    assert relation(mention_in(sentence, surnames={"adam"}), names_of(P[key])) == rel


# --- the rule, on candidate lists -----------------------------------------------------------------------------


def test_a_name_only_the_abstract_gives_is_not_filled_with_the_method_it_is_compared_with():
    d = decide(SIMCLR_S, _cands("he2020momentum", "chen2020simple"), _pick("he2020momentum"), None, 0.85)
    assert d is not None and d.selection.paper != P["he2020momentum"] and d.candidates[0].paper == P["chen2020simple"]


def test_a_sequel_is_not_filled_for_the_original_nor_held_back_from_its_own_slot():
    d = decide(SHUFFLE_S, _cands("ma2018shufflenetv2", "zhang2018shufflenet"), _pick("ma2018shufflenetv2"), None, 0.85)
    assert d is not None and d.selection.paper != P["ma2018shufflenetv2"]
    assert d.candidates[0].paper == P["zhang2018shufflenet"]
    kept = decide(SHUFFLE2_S, _cands("ma2018shufflenetv2", "zhang2018shufflenet"), _pick("ma2018shufflenetv2"), None,
                  0.85)
    assert kept is not None and kept.action == "kept" and kept.selection.paper == P["ma2018shufflenetv2"]


def test_a_library_is_not_filled_with_the_architecture_of_the_same_name():
    d = decide(HF_S, _cands("vaswani2017attention", "wolf2020transformers"), _pick("vaswani2017attention"), None, 0.85)
    assert d is not None and d.selection.paper != P["vaswani2017attention"]
    assert d.candidates[0].paper == P["wolf2020transformers"]


# --- end to end, a library imported from the .bib ---------------------------------------------------------------


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from citefinder.library.store import Library

    root = tmp_path_factory.mktemp("names")
    text = (DATA / "refs.bib").read_text(encoding="utf-8")
    out = {}
    for name, drop in (("whole", ()), ("no-simclr", ("chen2020simple",)), ("no-shufflenet", ("zhang2018shufflenet",)),
                       ("no-hf", ("wolf2020transformers",))):
        bib = root / f"{name}.bib"
        bib.write_text(re.sub(r"@\w+\{(%s),.*?\n\}\n" % "|".join(drop), "", text, flags=re.S) if drop else text,
                       encoding="utf-8")
        lib = Library.open(Settings(library=root / name))
        assert lib.import_files([bib]).added == 12 - len(drop)
        out[name] = lib
    return out


@pytest.fixture(scope="module")
def literature(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from literature_support import literature_folder

    return literature_folder(tmp_path_factory.mktemp("names-lit"), DATA / "literature.jsonl")


pytestmark = pytest.mark.usefixtures("literature_cache")  # tests/literature_fixtures.py: a test's own cache


def _fill(library, literature: Path | None = None) -> dict:
    from citefinder.pipeline.literature import literature_tier
    from citefinder.pipeline.pipeline import Pipeline

    tier = literature_tier(library.settings, library, literature, when="always") if literature else None
    return {r.slot.sentence: r for r in Pipeline(library.settings, library, literature=tier).cite_text(DRAFT)}


def _filled(result) -> str | None:
    return result.selection.paper.key if result.selection.status == "found" and result.selection.paper else None


@pytest.mark.slow
def test_each_name_ranks_its_own_paper_first_and_no_other_is_filled(libraries):
    results = _fill(libraries["whole"])
    first = {s: r.candidates[0].paper.key for s, r in results.items()}
    assert first[SIMCLR_S] == "chen2020simple" and first[LARGE_S] == "liu2019roberta"
    assert first[SHUFFLE_S] == "zhang2018shufflenet" and first[SHUFFLE2_S] == "ma2018shufflenetv2"
    assert first[HF_S] == "wolf2020transformers"
    assert _filled(results[ADAM_S]) in ("howard2017mobilenets", None)  # never the Adam optimizer
    owners = Owners(libraries["whole"]).of(mention_in(HF_S))  # "in Transformers": the library paper owns the name
    assert [p.key for p in libraries["whole"].get(list(owners))] == ["wolf2020transformers"]
    for s, r in results.items():
        assert _filled(r) in (None, first[s]), (s, _filled(r))


@pytest.mark.slow
@pytest.mark.parametrize("which, sentence", [("no-simclr", SIMCLR_S), ("no-shufflenet", SHUFFLE_S),
                                             ("no-hf", HF_S)])
def test_a_missing_named_paper_is_filled_with_nothing(libraries, which, sentence):
    assert _fill(libraries[which])[sentence].selection.status == "not_found"


@pytest.mark.slow
@pytest.mark.parametrize("which, sentence, title", [
    ("no-simclr", SIMCLR_S, "A Simple Framework for Contrastive Learning of Visual Representations"),
    ("no-shufflenet", SHUFFLE_S, "ShuffleNet: An Extremely Efficient Convolutional Neural Network for Mobile Devices"),
    ("no-hf", HF_S, "Transformers: State-of-the-Art Natural Language Processing")])
def test_with_a_literature_the_missing_named_paper_is_offered_first(libraries, literature, which, sentence, title):
    result = _fill(libraries[which], literature)[sentence]
    assert result.selection.status == "not_found"
    assert result.literature and result.literature[0].paper.title == title, [c.paper.title for c in
                                                                             result.literature[:3]]
