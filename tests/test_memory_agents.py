"""The agents over the citation-context memory (issue 20): skipped with a reason and changing nothing
without a memory; with one, a sentence worded the way the literature cites a paper finds it (cited-as,
cited-like), the draft's filled keys and confident picks near a slot seed co-cited, cited-often ranks by
how often the memory cites; the user's picks join the memory (and can be switched off and cleared); the
CLI imports packs and LaTeX projects (folder and .zip). Real library (tests/data/latex/refs.bib), real MiniLM."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.index.memory import NO_MEMORY
from citefinder.library.contexts import api
from citefinder.library.contexts.memory import memory_of
from citefinder.library.contexts.records import record_from_json
from citefinder.library.store import Library
from citefinder.retrieve.query.cocite import filled_keys, keys_near, picks_near
from citefinder.retrieve.registry import AGENTS, default_agents
from citefinder.text.slots import find_slots
from citefinder.types import Paper, Query, Selection, SlotResult
from latex_support import copied_library, make_refs_library

pytestmark = pytest.mark.slow  # a real library (MiniLM)

DATA = Path(__file__).resolve().parent / "data"
LATEX = DATA / "latex"
PROJECT = (LATEX / "paper.tex", LATEX / "refs.bib")  # one LaTeX project (the folder holds checked.tex too)
MEMORY_AGENTS = ("cited-as", "cited-like", "co-cited", "cited-often")
# worded as other authors cite Adam, not as its title or abstract says it
ADAM_SENTENCE = "Each step rescales the gradient coordinates by running moment averages [CITATION]."


def pack_record(text: str, title: str, citing: str, year: int | None = None) -> dict:
    return {"text": text, "cited": {"title": title, "year": year, "authors": []}, "citing": {"paper": citing}}


def contexts() -> list[dict]:
    rows = [pack_record(f"Updates rescale gradient coordinates with running moment averages [CITATION] ({n}).",
                        "Adam: A Method for Stochastic Optimization", f"github:opt/{n}", 2015) for n in range(3)]
    for n in range(3):  # BERT and RoBERTa cited by the same three papers, BERT and GloVe by one
        rows.append(pack_record(f"Pretrained encoders [CITATION] are fine-tuned ({n}).",
                                "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                                f"github:nlp/{n}", 2019))
        rows.append(pack_record(f"A longer-trained recipe [CITATION] improves it ({n}).",
                                "RoBERTa: A Robustly Optimized BERT Pretraining Approach", f"github:nlp/{n}", 2019))
    rows.append(pack_record("Static vectors [CITATION] came first.", "GloVe: Global Vectors for Word Representation",
                            "github:nlp/0", 2014))
    return rows


@pytest.fixture(scope="module")
def refs_library(tmp_path_factory) -> Path:
    return make_refs_library(tmp_path_factory.mktemp("refs-library") / "library")


@pytest.fixture
def library(refs_library, tmp_path) -> Library:
    return Library.open(Settings(library=copied_library(refs_library, tmp_path)))


@pytest.fixture
def with_memory(library) -> Library:
    api.import_contexts(library, [record_from_json(r) for r in contexts()])
    return library


def doc(library: Library, key: str) -> str:
    paper = library.by_key(key)
    assert paper is not None
    return paper.doc_id


def test_without_a_memory_they_skip_saying_why_and_change_nothing(library):
    from citefinder.pipeline.pipeline import Pipeline

    assert all(a in default_agents() for a in MEMORY_AGENTS)
    result = Pipeline(library.settings, library).cite_text(ADAM_SENTENCE)[0]
    for name in MEMORY_AGENTS:
        trace = result.trace(name)
        assert trace is not None and trace.status == "skipped" and NO_MEMORY in trace.message
    others = tuple(a for a in default_agents() if a not in MEMORY_AGENTS)
    without = Pipeline(library.settings.with_overrides(agents=others), library).cite_text(ADAM_SENTENCE)[0]
    assert [c.doc_id for c in result.candidates] == [c.doc_id for c in without.candidates]
    assert result.selection.confidence == without.selection.confidence
    assert not memory_of(library).exists()  # reading creates nothing


def test_the_literature_s_wording_finds_the_paper(with_memory):
    from citefinder.pipeline.pipeline import Pipeline

    adam = doc(with_memory, "Kingma.Ba.2015")
    result = Pipeline(with_memory.settings, with_memory).cite_text(ADAM_SENTENCE)[0]
    for name in ("cited-as", "cited-like"):
        trace = result.trace(name)
        assert trace is not None and trace.status == "ok" and trace.top[0].doc_id == adam, name
    evidence = result.trace("cited-like").details["cited_elsewhere_as"][adam]
    assert "running moment averages" in evidence["text"] and evidence["citing"].startswith("github:opt/")
    often = result.trace("cited-often").top
    assert [h.score for h in often[:3]] == [3.0, 3.0, 3.0] and often[-1].score == 1.0


def test_co_cited_reads_the_filled_keys_near_a_slot(with_memory):
    from citefinder.pipeline.pipeline import Pipeline

    tex = ("\\documentclass{article}\\begin{document}\n"
           "Pretrained encoders \\citep{Devlin.Chang.ea.2019} changed NLP, and a recipe that trains them longer "
           "\\citep{?} too.\n\\end{document}\n")
    result = Pipeline(with_memory.settings, with_memory).cite_text(tex)[0]
    bert, roberta = doc(with_memory, "Devlin.Chang.ea.2019"), doc(with_memory, "Liu.Ott.Goyal.ea.2019")
    assert result.query.cocited == (bert,)
    trace = result.trace("co-cited")
    assert trace.status == "ok" and trace.top[0].doc_id == roberta and bert not in [h.doc_id for h in trace.top]
    far = Pipeline(with_memory.settings.with_overrides(cocited_chars=10), with_memory).cite_text(tex)[0]
    assert far.query.cocited == () and far.trace("co-cited").status == "skipped"


def test_seeds_keys_and_confident_picks_near_a_slot():
    text = "A \\cite{a, ?} b. " + "x " * 400 + "C [CITATION] \\citep[see][]{b,c} and \\nocite{z}."
    assert [k for _, k in filled_keys(text)] == ["a", "b", "c"]
    slots = find_slots(text)
    assert keys_near(text, slots, 100) == {0: ("a",), 1: ("b", "c")}
    assert keys_near(text, slots, 10_000) == {0: ("a", "b", "c"), 1: ("b", "c", "a")}

    def result(slot, doc_id: str, confidence: float) -> SlotResult:
        return SlotResult(slot, Query(""), (), Selection("found", Paper(doc_id, "t"), confidence), ())

    earlier = [result(slots[0], "p0", 0.9)]
    assert picks_near(slots[1], earlier, 10_000, 0.55) == ("p0",)
    assert picks_near(slots[1], earlier, 100, 0.55) == ()  # too far
    assert picks_near(slots[1], [result(slots[0], "p0", 0.3)], 10_000, 0.55) == ()  # not confident


def test_a_pick_joins_the_memory_can_be_switched_off_and_cleared(library):
    from citefinder.pipeline.pipeline import Pipeline

    adam = doc(library, "Kingma.Ba.2015")
    off = Library.open(library.settings.with_overrides(learn_from_picks=False))
    assert api.learn_pick(off, ADAM_SENTENCE, adam) is False and not memory_of(off).exists()
    session_off = library.settings.with_overrides(learn_from_picks=False)  # the app passes the session's settings
    assert api.learn_pick(library, ADAM_SENTENCE, adam, settings=session_off) is False
    assert api.learn_pick(library, ADAM_SENTENCE, adam, citing="draft:paper.tex") is True
    assert api.learn_pick(library, ADAM_SENTENCE, adam, citing="draft:paper.tex") is False  # held already
    again = "We rescale the gradient coordinates by running moment averages [CITATION] as well."
    trace = Pipeline(library.settings, library).cite_text(again)[0].trace("cited-as")
    assert trace.status == "ok" and trace.top[0].doc_id == adam
    assert memory_of(library).counts()["contexts_user"] == 1
    assert api.forget(library) == 1 and memory_of(library).counts()["contexts"] == 0
    with pytest.raises(Exception, match="not in the library"):
        api.learn_pick(library, ADAM_SENTENCE, "x:missing")


def test_filled_cites_of_a_latex_draft_are_learned(library):
    from citefinder.train.contexts import learn_filled_cites

    n = learn_filled_cites(library, (LATEX / "paper.tex").read_text(encoding="utf-8"), citing="draft:paper.tex")
    assert n == 2  # \citep{Peters.Neumann.ea.2018} and \citep{Karpukhin.Oguz.ea.2020}; {TODO} is no key
    assert memory_of(library).matched_papers() == {doc(library, "Peters.Neumann.ea.2018"),
                                                   doc(library, "Karpukhin.Oguz.ea.2020")}


def test_cli_imports_packs_and_latex_projects_and_reports_counts(library, tmp_path, capsys):
    from citefinder.cli.main import main

    pack = tmp_path / "pack.jsonl"
    rows = [dict(r, split="train" if n % 2 else "test") for n, r in enumerate(contexts())]
    pack.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    lib = ["--library", str(library.path)]
    assert main(["contexts", "import", str(pack), "--split", "train", *lib]) == 0
    out, err = capsys.readouterr()
    assert f"added {len(rows) // 2} contexts" in out
    embedded = re.search(r"([\d,]+) embedded", out)
    assert embedded, out
    n = embedded[1].replace(",", "")
    assert int(n) > 0, out  # the embedding of the matched sentences has a bar of its own, with its total
    assert re.search(rf"embedding sentences matched to your papers: 100%.*\b{n}/{n}\b", err), err
    project = tmp_path / "project"
    project.mkdir()
    for f in PROJECT:
        shutil.copy(f, project / f.name)
    assert main(["contexts", "import", str(project), *lib]) == 0
    assert "added 2 contexts" in capsys.readouterr().out
    zipped = tmp_path / "paper-v2.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        for f in project.iterdir():
            z.write(f, f"paper/{f.name}")
    assert main(["contexts", "import", str(zipped), *lib]) == 0
    assert "added 2 contexts" in capsys.readouterr().out  # another project: another citing paper
    assert main(["contexts", "stats", "--json", *lib]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["contexts_latex"] == 4 and counts["contexts_pack"] == len(rows) // 2
    assert main(["library", "stats", "--json", *lib]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["contexts"] == counts["contexts"] and stats["papers_cited"] == counts["papers_cited"]
    assert main(["contexts", "clear", "--origin", "latex", *lib]) == 0
    assert "forgot 4 contexts" in capsys.readouterr().out
    assert main(["contexts", "import", str(tmp_path / "nothing.txt"), *lib]) == 2  # a missing file: non-zero
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["contexts", "import", str(tmp_path / "notes.txt"), *lib]) == 2
    assert "neither a context pack" in capsys.readouterr().err


def test_every_memory_agent_is_registered_once():
    assert [a for a in AGENTS if a in MEMORY_AGENTS] == list(MEMORY_AGENTS)


def panel_app(library: str) -> None:
    from citefinder.config import Settings
    from citefinder.ui.contexts_panel import contexts_panel

    contexts_panel(Settings(library=library))


def test_library_page_panel_shows_counts_imports_and_forgets(library, tmp_path):
    from streamlit.testing.v1 import AppTest

    from citefinder.ui.contexts_panel import import_uploads

    at = AppTest.from_function(panel_app, args=(str(library.path),)).run(timeout=120)
    assert not at.exception and "No citation contexts yet" in at.markdown[0].value
    pack = tmp_path / "pack.jsonl"
    pack.write_text("\n".join(json.dumps(r) for r in contexts()) + "\n", encoding="utf-8")
    zipped = tmp_path / "mine.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        for f in PROJECT:
            z.write(f, f.name)
    reports = import_uploads(library, [pack, zipped], "all")
    assert [r.added for r in reports] == [len(contexts()), 2]
    api.learn_pick(library, ADAM_SENTENCE, doc(library, "Kingma.Ba.2015"))
    at = AppTest.from_function(panel_app, args=(str(library.path),)).run(timeout=120)
    assert not at.exception
    assert f"{len(contexts()) + 3} citation contexts held" in at.markdown[0].value
    assert "1 learned from your picks" in at.markdown[0].value
    forget = next(b for b in at.button if b.label.startswith("Forget"))
    at = forget.click().run(timeout=120)
    assert not at.exception and memory_of(library).counts().get("contexts_user", 0) == 0


def test_cited_elsewhere_gives_the_nearest_citing_sentence_and_its_source(with_memory):
    from citefinder.pipeline.evidence import cited_elsewhere

    adam = doc(with_memory, "Kingma.Ba.2015")
    found = cited_elsewhere(with_memory, ADAM_SENTENCE, adam)
    assert found is not None and "running moment averages" in found["text"] and found["origin"] == "pack"
    assert found["citing"].startswith("github:opt/") and 0 < found["similarity"] <= 1
    assert cited_elsewhere(with_memory, ADAM_SENTENCE, doc(with_memory, "Hochreiter.Schmidhuber.1997")) is None


def test_names_the_literature_and_the_user_write_next_to_the_marker_find_the_paper(library):
    from citefinder.pipeline.pipeline import Pipeline

    adam, bert = doc(library, "Kingma.Ba.2015"), doc(library, "Devlin.Chang.ea.2019")
    query = "We train every model with MomentAvg [CITATION] for ten epochs."
    before = Pipeline(library.settings, library).cite_text(query)[0]
    assert adam not in [h.doc_id for h in before.trace("names").top + before.trace("names-weak").top]
    rows = [pack_record(f"Models were optimised by MomentAvg [CITATION] ({n}).", "Adam: A Method for Stochastic "
                        "Optimization", f"github:x/{n}", 2015) for n in range(2)]
    api.import_contexts(library, [record_from_json(r) for r in rows])
    after = Pipeline(library.settings, library).cite_text(query)[0]
    named = after.trace("names").top + after.trace("names-weak").top
    assert named and named[0].doc_id == adam
    # the user's own naming counts from one pick on, as a strong match
    api.learn_pick(library, "Our encoder is TinyEnc-7 [CITATION] as before.", bert, citing="draft:x")
    again = Pipeline(library.settings, library).cite_text("We encode the queries with TinyEnc-7 [CITATION] again.")[0]
    assert again.trace("names").top[0].doc_id == bert
