"""The Streamlit pages driven headless with AppTest over a real library built from the sample .bib."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bibtexparser
import pytest
from streamlit.testing.v1 import AppTest

from app_support import (
    PDF_LINES,
    ROOT,
    SAMPLE_SIZE,
    TWO_SLOTS,
    DownloadSpy,
    build_sample_library,
    button,
    fill,
    make_pdf,
    open_app,
    plain,
)
from citefinder.config import Settings
from citefinder.retrieve.registry import default_agents
from citefinder.ui import state, workspace

pytestmark = pytest.mark.slow  # builds a library and loads MiniLM

TIMEOUT = 180


@pytest.fixture(scope="session")
def sample_library(tmp_path_factory) -> Path:
    return build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")


@pytest.fixture
def cite_app(sample_library, monkeypatch) -> AppTest:
    return open_app(sample_library, monkeypatch, TIMEOUT)  # no draft restored from an earlier test


def by_label(widgets, label: str):
    return next(w for w in widgets if w.label == label)


def page(name: str) -> str:
    return str(ROOT / "pages" / name)


def all_buttons(at: AppTest, label: str) -> list:
    return [b for b in at.button if b.label == label]


def test_cite_page_fills_every_slot_and_offers_the_bib(cite_app, monkeypatch):
    # about filling and keeping picks, not the threshold: auto-fill at a fixed 0.55, whatever the shipped default
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")
    spy = DownloadSpy(monkeypatch)
    at = fill(cite_app, TWO_SLOTS)
    assert not at.exception and not at.error
    assert any("**2** citation slots found." == m.value for m in at.markdown)
    run = at.session_state[state.CITE_RUN]
    assert [r.selection.paper.title for r in run.results] == [
        "Attention Is All You Need",
        "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods",
    ]
    chosen = all_buttons(at, "Chosen")  # the selector's pick is marked among each slot's top candidates
    assert [b.key for b in chosen] == [f"{run.pick_key(0)}_1", f"{run.pick_key(1)}_1"]
    assert len(all_buttons(at, "Use this")) == 2 * 4

    buttons = {b.label: b for b in at.get("download_button")}
    bib = spy.data(buttons["Download .bib (2 papers)"]).decode()
    parsed = bibtexparser.parse_string(bib)
    assert sorted(e.fields_dict["title"].value.strip("{}") for e in parsed.entries) == [
        "Attention Is All You Need",
        "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods",
    ]
    keys = [e.key for e in parsed.entries]
    draft = spy.data(buttons["Download draft with \\cite (2 of 2 filled)"]).decode()
    assert "[CITATION]" not in draft and all(f"\\cite{{{k}}}" in draft for k in keys)
    rows = json.loads(spy.data(buttons["Download results (JSON)"]))
    assert [r["user_choice"] for r in rows] == ["arxiv:1706.03762", "doi:10.1145/1571941.1572114"]
    assert [t["agent"] for t in rows[0]["traces"]] == ["reformulate", *default_agents(), "fuse", "rerank", "select"]


def test_overriding_a_pick_changes_the_bib(cite_app, monkeypatch):
    spy = DownloadSpy(monkeypatch)
    at = fill(cite_app, TWO_SLOTS)
    run = at.session_state[state.CITE_RUN]
    other = run.results[0].candidates[1]
    at.button(key=f"{run.pick_key(0)}_2").click().run()  # one click on the second candidate
    assert not at.exception
    assert at.button(key=f"{run.pick_key(0)}_2").label == "Chosen"
    assert at.button(key=f"{run.pick_key(0)}_1").label == "Use this"
    assert at.session_state[state.CITE_CHOICES] == {0: (other.doc_id,)}  # the papers the slot cites, in order
    bib = spy.data(next(b for b in at.get("download_button") if b.label.startswith("Download .bib"))).decode()
    titles = [e.fields_dict["title"].value.strip("{}") for e in bibtexparser.parse_string(bib).entries]
    assert "Attention Is All You Need" not in titles
    assert json.loads(spy.data(next(b for b in at.get("download_button") if "JSON" in b.label)))[0][
        "user_choice"
    ] == other.doc_id

    at.button(key=f"{run.pick_key(1)}_none").click().run()  # leave slot 2 empty
    draft_button = next(b for b in at.get("download_button") if b.label.startswith("Download draft"))
    assert draft_button.label == "Download draft with \\cite (1 of 2 filled)"
    assert spy.data(draft_button).decode().count("[CITATION]") == 1


def test_unsure_slot_says_so_and_offers_its_candidates(cite_app):
    # a sentence that names nothing: the agents disagree and the calibrated confidence stays low
    at = fill(cite_app, "Earlier studies looked at this question from several angles [CITATION].")
    assert not at.exception and not at.error
    run = at.session_state[state.CITE_RUN]
    assert run.results[0].selection.status == "not_found"
    assert run.results[0].selection.confidence < Settings().confidence_threshold
    warning = plain(at.warning[0].value)
    assert warning.startswith("**No confident match — pick one of these.**")
    assert "threshold" not in warning  # the details are in the trace, not in the headline
    top = run.results[0].candidates[0].paper.title
    assert any(top in plain(m.value) for m in at.markdown)  # the candidates are one click away
    assert len(all_buttons(at, "Use this")) == 5  # the top five, one click each


def test_trace_shows_every_agent(cite_app):
    at = fill(cite_app, TWO_SLOTS)
    run = at.session_state[state.CITE_RUN]
    at.session_state[run.trace_key(0)] = True  # open the first trace expander
    at.run()
    assert not at.exception
    frames = at.dataframe
    agents = frames[0].value["agent"].tolist()
    assert agents == ["reformulate", *default_agents(), "fuse", "rerank", "select"]
    fused = next(f.value for f in frames if "fused rank" in f.value.columns)
    assert {"bm25 rank", "dense rank", "fused score"} <= set(fused.columns)
    assert fused["title"].iloc[0] == "Attention Is All You Need"
    assert any("skipped: no cross-encoder configured" in plain(i.value) for i in at.info)
    assert any("agents put it first" in plain(c.value) for c in at.caption)  # why the confidence is what it is
    texts = [t.value for t in at.text]
    assert run.results[0].query.text in texts  # the reformulated query, shown as text


def test_uploaded_pdf_draft_with_three_slots(cite_app):
    at = cite_app.run()
    at.file_uploader(key=state.CITE_UPLOAD).upload("draft.pdf", make_pdf(PDF_LINES), "application/pdf").run()
    assert not at.exception and not at.error
    assert "[CITATION]" in at.text_area(key=state.CITE_TEXT).value
    assert any(m.value == "**3** citation slots found." for m in at.markdown)
    button(at, "Find citations").click().run()
    run = at.session_state[state.CITE_RUN]
    assert len(run.results) == 3 and run.source_name == "draft.pdf"
    assert len(all_buttons(at, "Accept, next")) == 3
    assert any(b.label == "Download draft with \\cite (3 of 3 filled)" for b in at.get("download_button"))


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "broken.pdf"),
        ("empty.txt", b"   ", "empty"),
        ("scan.pdf", None, "no text layer"),
    ],
)
def test_unusable_drafts_show_a_clear_error(cite_app, name, data, expected):
    if data is None:
        data = make_pdf([])  # a page without any text: what a scan looks like
    at = cite_app.run()
    at.file_uploader(key=state.CITE_UPLOAD).upload(name, data, "application/octet-stream").run()
    assert not at.exception
    assert any(expected in plain(e.value) for e in at.error), [e.value for e in at.error]


def test_text_without_slots_says_so_on_click(cite_app):
    at = cite_app.run()
    at.text_area(key=state.CITE_TEXT).set_value("No markers here at all.").run()
    assert not button(at, "Find citations").disabled  # enabled: a click right after pasting must work
    assert any("No slot yet" in c.value for c in at.caption)
    button(at, "Find citations").click().run()
    assert any("No [CITATION] in the text yet" in plain(w.value) for w in at.warning)
    assert state.CITE_RUN not in at.session_state


def test_draft_results_and_picks_survive_page_switches_and_a_new_session(cite_app, sample_library, monkeypatch):
    # about filling and keeping picks, not the threshold: auto-fill at a fixed 0.55, whatever the shipped default
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")
    at = fill(cite_app, TWO_SLOTS)
    run = at.session_state[state.CITE_RUN]
    at.button(key=f"{run.pick_key(0)}_2").click().run()
    picked = run.results[0].candidates[1].doc_id
    at.switch_page("pages/3_Settings.py").run()
    assert not at.exception
    at.switch_page("app.py").run()
    assert not at.exception
    assert at.text_area(key=state.CITE_TEXT).value == TWO_SLOTS
    assert at.session_state[state.CITE_RUN].run_id == run.run_id
    assert at.button(key=f"{run.pick_key(0)}_2").label == "Chosen"

    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()  # a reload: a new session
    assert not again.exception
    assert again.text_area(key=state.CITE_TEXT).value == TWO_SLOTS
    restored = again.session_state[state.CITE_RUN]
    assert [r.selection.paper.doc_id for r in restored.results] == [r.selection.paper.doc_id for r in run.results]
    assert again.session_state[state.CITE_CHOICES] == {0: (picked,)}
    assert again.button(key=f"{restored.pick_key(0)}_2").label == "Chosen"

    button(again, "Start over").click().run()
    assert again.text_area(key=state.CITE_TEXT).value == TWO_SLOTS  # it asks first
    button(again, "Yes, clear everything").click().run()
    assert again.text_area(key=state.CITE_TEXT).value == ""
    assert state.CITE_RUN not in again.session_state
    assert workspace.load_draft(sample_library) is None
    button(again, "Bring back the cleared draft").click().run()  # and it can be undone
    assert again.text_area(key=state.CITE_TEXT).value == TWO_SLOTS
    assert again.session_state[state.CITE_CHOICES] == {0: (picked,)}


def test_first_run_on_an_empty_library_loads_the_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "fresh"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert len(at.status) == 1
    assert at.status[0].label.startswith(f"Sample library loaded: {SAMPLE_SIZE} papers in ")
    at.run()  # a second run does not load it again
    assert not at.status


def test_library_page_imports_a_bib_and_removes_a_paper(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    at = AppTest.from_file(page("2_Library.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert any("This library is empty" in i.value for i in at.info)
    assert button(at, "Load the sample library")

    bib = (
        b"@article{a, title={Graph Neural Nets for Citation Recommendation}, author={Doe, Jane}, year={2021}}\n"
        b"@inproceedings{b, title={Sparse and Dense Retrieval Together}, author={Roe, Rick}, year={2022},"
        b" booktitle={SIGIR}}\n"
        b"@article{c, title={graph neural nets for citation recommendation}, author={Doe, Jane}, year={2021}}\n"
        b"@article{d, author={Nobody}, year={2020}}\n"
    )
    at.file_uploader(key=state.LIBRARY_UPLOAD).upload("refs.bib", bib, "application/x-bibtex").run()
    button(at, "Import 1 file").click().run()
    assert not at.exception
    report, names = at.session_state[state.LIBRARY_REPORT]
    assert (report.added, report.duplicates, len(report.failures)) == (2, 1, 1)
    assert any("2 added, 1 duplicates skipped, 1 failed" in plain(w.value) for w in at.warning)
    assert at.metric[0].value == "2"
    assert any("**Embedder**" in m.value and " on cpu" in m.value for m in at.markdown)  # where imports embed
    table = next(d.value for d in at.dataframe if "title" in d.value.columns)
    assert sorted(table["title"]) == ["Graph Neural Nets for Citation Recommendation",
                                      "Sparse and Dense Retrieval Together"]

    at.text_input(key=state.LIBRARY_QUERY).set_value("sparse dense retrieval").run()
    table = next(d.value for d in at.dataframe if "title" in d.value.columns)
    assert table["title"].iloc[0] == "Sparse and Dense Retrieval Together"
    doc_id = table["id"].iloc[0]

    at.multiselect(key=state.LIBRARY_REMOVE).set_value([doc_id]).run()
    assert button(at, "Remove").disabled  # not confirmed yet
    at.checkbox(key=state.LIBRARY_CONFIRM).check().run()
    button(at, "Remove").click().run()
    assert not at.exception
    assert any(s.value == "Removed 1 paper." for s in at.success)
    assert at.metric[0].value == "1"


def test_library_page_loads_the_sample_on_request(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    at = AppTest.from_file(page("2_Library.py"), default_timeout=TIMEOUT).run()
    button(at, "Load the sample library").click().run()
    assert not at.exception
    assert at.metric[0].value == f"{SAMPLE_SIZE:,}"


def test_settings_page_shows_validation_errors_and_applies_good_values(monkeypatch, tmp_path):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    at = AppTest.from_file(page("3_Settings.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    by_label(at.number_input, "BM25 k").set_value(0)
    by_label(at.text_input, "Chroma server (HOST:PORT)").set_value("no-port-here")
    at.button(key="FormSubmitter:models-Apply").click().run()
    errors = plain(" ".join(e.value for e in at.error))
    assert "k_bm25: Input should be greater than or equal to 1" in errors
    assert "chroma_host must look like HOST:PORT" in errors
    assert at.session_state[state.SETTINGS].k_bm25 == 100  # unchanged

    by_label(at.number_input, "BM25 k").set_value(40)
    by_label(at.text_input, "Chroma server (HOST:PORT)").set_value("")
    by_label(at.selectbox, "Fusion").set_value("max")
    at.button(key="FormSubmitter:models-Apply").click().run()
    assert not at.error
    settings = at.session_state[state.SETTINGS]
    assert (settings.k_bm25, settings.fusion, settings.chroma_host) == (40, "max", None)


def test_api_key_is_kept_but_never_shown_back(monkeypatch, tmp_path):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = AppTest.from_file(page("3_Settings.py"), default_timeout=TIMEOUT).run()
    by_label(at.text_input, "Model (LiteLLM form)").set_value("openai/gpt-4o-mini")
    by_label(at.text_input, "API key").set_value("sk-very-secret-123")
    at.button(key="FormSubmitter:llm-Save").click().run()
    assert at.session_state[state.SETTINGS].llm_api_key.get_secret_value() == "sk-very-secret-123"
    at.run()
    assert by_label(at.text_input, "API key").value == ""
    shown = [e.value for e in at.json] + [t.value for t in at.text_input] + [m.value for m in at.markdown]
    assert not any("sk-very-secret-123" in str(v) for v in shown)


def test_llm_test_connection_reports_a_clear_error(monkeypatch, tmp_path):
    from conftest import free_port

    monkeypatch.setenv("CITEFINDER_LIBRARY", str(tmp_path / "lib"))
    at = AppTest.from_file(page("3_Settings.py"), default_timeout=TIMEOUT).run()
    by_label(at.text_input, "Model (LiteLLM form)").set_value("hosted_vllm/nothing")
    by_label(at.text_input, "API base URL").set_value(f"http://127.0.0.1:{free_port()}/v1")
    by_label(at.number_input, "Timeout per call (s)").set_value(5.0)
    at.button(key="FormSubmitter:llm-Save and test connection").click().run()
    assert not at.exception
    errors = plain(" ".join(e.value for e in at.error))
    assert "The LLM hosted_vllm/nothing at http://127.0.0.1:" in errors and "failed" in errors, errors


def test_search_page_ranks_papers_with_a_trace(sample_library, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(sample_library))
    at = AppTest.from_file(page("4_Search.py"), default_timeout=TIMEOUT).run()
    at.text_input(key=state.SEARCH_QUESTION).set_value("dense passage retrieval for open-domain question answering")
    at.button(key="FormSubmitter:search-Search").click().run()
    assert not at.exception and not at.error
    run = at.session_state[state.SEARCH_RUN]
    assert run.result.candidates[0].paper.title == "Dense Passage Retrieval for Open-Domain Question Answering"
    assert any(plain(m.value) == "1. **Dense Passage Retrieval for Open-Domain Question Answering**"
               for m in at.markdown)
    at.session_state[f"search_trace_{run.run_id}"] = True
    at.run()
    assert at.dataframe[0].value["agent"].tolist()[-1] == "select"


def test_hostile_metadata_renders_as_text():
    def script():
        from citefinder.types import Paper
        from citefinder.ui.render import paper_card

        paper_card(Paper(
            doc_id="t:x",
            title="<img src=x onerror=alert(1)> [click](javascript:alert(1)) **bold** $x$ :red[hi]",
            authors=("<script>alert(2)</script>",),
            year=2020,
            venue="# heading",
            url="javascript:alert(3)",
        ))

    at = AppTest.from_function(script).run()
    assert not at.exception
    title = at.markdown[0].value
    body = title.removeprefix("**").removesuffix("**")
    assert re.search(r"(?<!\\)[<>\[\]()*$:]", body) is None, body  # every markup character escaped
    assert plain(body) == "<img src=x onerror=alert(1)> [click](javascript:alert(1)) **bold** $x$ :red[hi]"
    meta = at.caption[0].value
    assert "<script>" not in meta and "javascript" not in meta  # unsafe link dropped
