"""Pure parts of the Cite page: confidence in words, evidence sentences, the saved draft, per-user settings."""

from __future__ import annotations

import json

from pydantic import SecretStr

from citefinder.config import Settings
from citefinder.pipeline.evidence import best_sentence
from citefinder.rank.calibration import word_cutoffs
from citefinder.text.slots import find_slots
from citefinder.types import Candidate, Hit, Paper, Query, Selection, SlotResult, StageTrace
from citefinder.ui import user_settings, workspace
from citefinder.ui.words import confidence_label, confidence_words

ATTN = Paper("arxiv:1706.03762", "Attention Is All You Need", ("Ashish Vaswani",), 2017,
             abstract="The dominant sequence transduction models are based on complex recurrent networks. "
             "We propose a new simple network architecture, the Transformer, based solely on attention mechanisms. "
             "Experiments on two machine translation tasks show these models to be superior in quality.")


def test_confidence_words_cut_offs():
    # the shipped cut-offs (confidence.json adjust.words), read from the product's data, with the values either side
    likely, unsure = word_cutoffs()
    assert 0.0 < unsure < likely < 1.0
    below = 0.01
    assert [confidence_words(p) for p in (0.99, likely, likely - below, unsure + below, unsure, unsure - below, 0.0,
                                          None)] == [
        "likely right", "likely right", "unsure", "unsure", "unsure", "unlikely", "unlikely", "unlikely"]
    assert confidence_label(likely + 0.003) == f"likely right ({likely + 0.003:.2f})"
    assert confidence_label(unsure + 0.01) == f"unsure ({unsure + 0.01:.2f})"  # words first, the number after
    assert confidence_label(None) == "unlikely (0.00)"


def test_evidence_is_the_abstract_sentence_that_best_matches_the_slot():
    slot = "Self-attention mechanisms alone can replace recurrent networks in the Transformer [CITATION]."
    assert best_sentence(ATTN.abstract, slot).startswith("We propose a new simple network architecture")
    assert best_sentence(ATTN.abstract, "unrelated words entirely") == (
        "The dominant sequence transduction models are based on complex recurrent networks.")
    assert best_sentence("", slot) == ""
    long = best_sentence("word " * 200 + "attention.", "attention", max_chars=60)
    assert len(long) <= 60 and long.endswith("…")


def result() -> SlotResult:
    slot = find_slots("Attention is all you need [CITATION].")[0]
    cand = Candidate(ATTN).with_score("bm25", 1, 3.5).with_score("fused", 1, 0.03)
    trace = StageTrace("select", "fallback", message="LLM failed", top=(Hit(ATTN.doc_id, 1, 0.9),),
                       details={"llm_error": "LLM endpoint unreachable"}, elapsed_s=0.25)
    return SlotResult(slot, Query("attention is all you need", ("attention",)), (cand,),
                      Selection("found", ATTN, 0.9, "threshold", "why"), (trace,))


def test_saved_draft_round_trips_results_and_picks(tmp_path):
    other = Paper("t:x", "Picked From A Search", ("A B",), 2020)
    draft = workspace.Draft("Attention is all you need [CITATION].", "draft.tex", (result(),), {0: ("t:x",)},
                            {"t:x": other}, elapsed_s=1.5)
    path = workspace.save_draft(tmp_path / "lib", draft)
    assert path == tmp_path / "lib" / "workspace" / "drafts" / "default.json"  # no id given: the default draft
    back = workspace.load_draft(tmp_path / "lib")
    assert back.results == (result(),)
    assert (back.text, back.source_name, back.choices, back.extra_papers) == (draft.text, "draft.tex",
                                                                             {0: ("t:x",)}, {"t:x": other})
    assert back.saved_at > 0
    workspace.clear_draft(tmp_path / "lib")
    assert workspace.load_draft(tmp_path / "lib") is None


def test_an_unreadable_draft_is_moved_aside_never_overwritten(tmp_path):
    path = workspace.draft_path(tmp_path, "d1")
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert workspace.load_draft(tmp_path) is None
    assert not path.exists() and workspace.unreadable(tmp_path) == [path.with_name("d1.json.unreadable")]
    assert workspace.unreadable(tmp_path)[0].read_text(encoding="utf-8") == "{not json"  # kept as it was
    # the next save of that draft writes a new record; the unreadable one stays, and a second one is kept too
    path.write_text("{again not json", encoding="utf-8")
    workspace.save_draft(tmp_path, workspace.Draft("A [CITATION].", draft_id="d1"))
    assert workspace.load_draft(tmp_path, "d1").text == "A [CITATION]."
    assert [p.read_text(encoding="utf-8") for p in workspace.unreadable(tmp_path)] == ["{not json", "{again not json"]


def test_each_draft_is_its_own_file_and_the_legacy_one_is_read(tmp_path):
    legacy = tmp_path / "workspace" / "last-draft.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text('{"version": 2, "text": "Old [CITATION].", "choices": {"0": ["t:a"]}, "saved_at": 1}',
                      encoding="utf-8")
    a = workspace.Draft("Draft A [CITATION].", "a.tex", choices={0: ("t:x",)}, draft_id="a1")
    b = workspace.Draft("Draft B [CITATION].", "b.tex", choices={0: ("t:y",)}, draft_id="b1")
    workspace.save_draft(tmp_path, a)
    workspace.save_draft(tmp_path, b)
    workspace.save_draft(tmp_path, workspace.Draft(a.text, "a.tex", choices={0: ("t:z",)}, draft_id="a1"))
    assert workspace.load_draft(tmp_path, "b1").choices == {0: ("t:y",)}  # A's save never touched B
    assert workspace.load_draft(tmp_path, "a1").choices == {0: ("t:z",)}
    listed = workspace.list_drafts(tmp_path)
    assert [d.draft_id for d in listed] == ["a1", "b1", "last-draft"]  # the one saved last first
    assert listed[2].choices == {0: ("t:a",)} and not legacy.exists()
    assert workspace.load_draft(tmp_path).draft_id == "a1"
    listed = workspace.summaries(tmp_path, but="a1")  # what the page lists: the other drafts, cheaply
    assert [(d.draft_id, d.title, d.picks) for d in listed] == [("b1", "b.tex", 1),
                                                                ("last-draft", "Old [CITATION].", 1)]


def test_user_settings_keep_changes_but_never_the_key(tmp_path, monkeypatch, user_settings_file):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = Settings()
    mine = base.with_overrides(llm_model="openai/gpt-4o-mini", k_bm25=40, llm_api_key=SecretStr("sk-secret-1"))
    path = user_settings.save_settings(mine, base)
    assert path == user_settings_file
    saved = json.loads(path.read_text())
    assert saved == {"k_bm25": 40, "llm_model": "openai/gpt-4o-mini"}
    assert "sk-secret-1" not in path.read_text()
    loaded, error = user_settings.load_settings(Settings())
    assert error is None and (loaded.llm_model, loaded.k_bm25, loaded.llm_api_key) == ("openai/gpt-4o-mini", 40, None)

    path.write_text(json.dumps({"k_bm25": 0}))
    loaded, error = user_settings.load_settings(Settings())
    assert loaded.k_bm25 == 100 and "were not used" in error


def _load_saved(folder: str) -> None:
    from citefinder.config import Settings
    from citefinder.ui import workspace
    from citefinder.ui.cite.draft import load_into_session

    load_into_session(Settings(library=folder), workspace.load_draft(folder))


def test_a_draft_edited_after_its_run_reloads_with_the_results_own_text(tmp_path):
    from streamlit.testing.v1 import AppTest

    from citefinder.ui import state

    ran_on = "Attention is all you need [CITATION]."
    edited = "We now say more first. " + ran_on  # the slot moved: the old results do not fit this text
    draft = workspace.Draft(edited, "draft.txt", (result(),), run_text=ran_on)
    workspace.save_draft(tmp_path / "lib", draft)
    assert workspace.load_draft(tmp_path / "lib").run_text == ran_on
    at = AppTest.from_function(_load_saved, args=(str(tmp_path / "lib"),)).run(timeout=60)
    assert not at.exception
    assert at.session_state[state.CITE_DRAFT] == edited  # the user's edit stays in the box
    assert at.session_state[state.CITE_RUN].text == ran_on  # the results stay with the text they were found in
    unedited = workspace.Draft(ran_on, None, (result(),), run_text=ran_on)
    assert "run_text" in unedited.to_dict() and unedited.to_dict()["run_text"] is None  # stored once
