"""The Settings page's online sources, driven headless with AppTest: what each service is sent, the contact
address and Semantic Scholar key kept for the browser session only (never saved, never shown back), and the
cached answers forgotten with one button; a service is tested (one search, tests/online_server.py's fake) before the
literature names it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from citefinder.sources.online.cache import AnswerCache
from citefinder.ui import state
from online_server import closed_port, pointed_fake, read_records

pytestmark = pytest.mark.slow  # the page opens the library (MiniLM)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
EMAIL, KEY = "private.person@example.org", "s2-key-not-to-be-saved"


def by_label(widgets, label: str):
    return next(w for w in widgets if w.label == label)


def empty_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty library folder of the test's own, configured, and no literature configured."""
    library = tmp_path / "lib"
    library.mkdir()
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(library))
    monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)
    return library


def test_online_sources_on_the_settings_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             user_settings_file: Path) -> None:
    library = tmp_path / "lib"
    library.mkdir()
    cache = AnswerCache(library / "sources-cache.sqlite", 1e9)
    cache.put("openalex", "GET https://api.openalex.org/works?search=x", 200, b"{}")
    cache.put("s2", "GET https://api.semanticscholar.org/graph/v1/paper/search?query=x", 200, b"{}")
    cache.close()
    monkeypatch.setenv("CITEFINDER_LIBRARY", str(library))
    monkeypatch.delenv("S2_API_KEY", raising=False)
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    assert not at.exception
    said = re.sub(r"\\(.)", r"\1", " ".join([m.value for m in at.markdown] + [c.value for c in at.caption]))
    for host in ("api.openalex.org", "api.semanticscholar.org", "export.arxiv.org", "api.crossref.org"):
        assert host in said
    assert "each slot's sentence" in said and "OpenAlex 1, Semantic Scholar 1" in said

    by_label(at.text_input, "Contact address (OpenAlex's and Crossref's polite pool)").set_value(EMAIL)
    by_label(at.text_input, "Semantic Scholar API key").set_value(KEY)
    at.button(key="FormSubmitter:online-Use for this session").click().run()
    settings = at.session_state[state.SETTINGS]
    assert settings.contact_email.get_secret_value() == EMAIL and settings.s2_api_key.get_secret_value() == KEY
    at.run()
    shown = ([e.value for e in at.json] + [t.value for t in at.text_input] + [m.value for m in at.markdown]
             + [c.value for c in at.caption])
    assert not any(EMAIL in str(v) or KEY in str(v) for v in shown), "never shown back"
    saved = user_settings_file.read_text() if user_settings_file.exists() else ""
    assert EMAIL not in saved and KEY not in saved and "contact_email" not in saved

    next(b for b in at.button if b.label == "Forget the cached answers").click().run()
    assert AnswerCache(library / "sources-cache.sqlite", 1e9).count() == 0
    assert "No cached answers yet" in " ".join(c.value for c in at.caption)


def test_the_literature_is_chosen_on_the_settings_page_and_checked_first(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path,
                                                                          user_settings_file: Path) -> None:
    empty_library(tmp_path, monkeypatch)
    fake, tried = pointed_fake(monkeypatch, list(read_records(DATA / "online-papers.jsonl")))
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    field = "Literature library folder, or openalex, s2, arxiv, crossref"
    by_label(at.text_input, field).set_value(str(tmp_path / "not-a-library"))
    at.button(key="FormSubmitter:literature-Apply").click().run()
    assert at.session_state[state.SETTINGS].literature == ""  # refused: no such library folder, no service
    assert any("neither a CiteFinder library folder" in e.value for e in at.error)
    by_label(at.text_input, field).set_value("openalex")
    at.radio[0].set_value("always")
    at.button(key="FormSubmitter:literature-Apply").click().run()
    settings = at.session_state[state.SETTINGS]
    assert (settings.literature, settings.literature_when) == ("openalex", "always")
    assert '"literature": "openalex"' in user_settings_file.read_text()  # kept for the user, as other settings
    assert len(fake.calls("openalex")) == 1, "tested before it was kept"
    fake.close()
    assert tried == []


def test_a_service_is_tested_and_refused_when_it_cannot_answer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                               user_settings_file: Path) -> None:
    empty_library(tmp_path, monkeypatch)
    fake, tried = pointed_fake(monkeypatch, list(read_records(DATA / "online-papers.jsonl")))
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    field = "Literature library folder, or openalex, s2, arxiv, crossref"
    by_label(at.text_input, field).set_value("crossref")
    at.button(key="FormSubmitter:literature-Test").click().run()
    assert any(f"crossref answered at 127.0.0.1:{fake.port}" in re.sub(r"\\(.)", r"\1", m.value) for m in at.success)
    assert at.session_state[state.SETTINGS].literature == "", "a test applies nothing"
    [call] = fake.calls("crossref")
    assert "query=attention" in call.query

    fake.modes["crossref"] = "html"  # something answers there, not as Crossref does
    at.button(key="FormSubmitter:literature-Apply").click().run()
    assert at.session_state[state.SETTINGS].literature == ""
    said = " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in at.error)
    assert "Not applied." in said and "answered, but not as crossref does" in said

    monkeypatch.setenv("CITEFINDER_S2_URL", f"http://127.0.0.1:{closed_port()}/s2")
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    by_label(at.text_input, field).set_value("s2")
    at.button(key="FormSubmitter:literature-Apply").click().run()
    assert at.session_state[state.SETTINGS].literature == ""
    said = " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in at.error)
    assert "Not applied. s2 cannot be reached now" in said
    fake.close()
    assert tried == []


def test_a_source_whose_client_is_missing_is_refused_where_it_is_chosen(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path,
                                                                         user_settings_file: Path) -> None:
    import sys

    empty_library(tmp_path, monkeypatch)
    monkeypatch.setitem(sys.modules, "pyalex", None)  # as without the [online] extra: `import pyalex` fails
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    said = re.sub(r"\\(.)", r"\1", " ".join(m.value for m in at.markdown))
    assert "**OpenAlex** (`openalex`): cannot be used: The openalex source needs the package pyalex" in said
    assert "sends The openalex" not in said and "(`s2`): sends api.semanticscholar.org" in said
    field = "Literature library folder, or openalex, s2, arxiv, crossref"
    by_label(at.text_input, field).set_value("openalex")
    at.button(key="FormSubmitter:literature-Apply").click().run()
    assert at.session_state[state.SETTINGS].literature == ""  # refused at the moment it is chosen
    [error] = [e.value for e in at.error]
    assert "Not applied" in error and "pip install 'citefinder[online]'" in re.sub(r"\\(.)", r"\1", error)


def test_a_name_that_is_a_folder_here_and_a_service_is_refused_on_the_settings_page(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, user_settings_file: Path) -> None:
    empty_library(tmp_path, monkeypatch)
    fake, _ = pointed_fake(monkeypatch, list(read_records(DATA / "online-papers.jsonl")))
    (tmp_path / "arxiv").mkdir()
    monkeypatch.chdir(tmp_path)
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=180).run()
    field = "Literature library folder, or openalex, s2, arxiv, crossref"
    by_label(at.text_input, field).set_value("arxiv")
    at.button(key="FormSubmitter:literature-Apply").click().run()
    assert at.session_state[state.SETTINGS].literature == ""
    assert any("for the folder, or arxiv: for the service" in re.sub(r"\\(.)", r"\1", e.value) for e in at.error)
    by_label(at.text_input, field).set_value("arxiv:")
    at.button(key="FormSubmitter:literature-Apply").click().run()
    assert at.session_state[state.SETTINGS].literature == "arxiv:"
    fake.close()


@pytest.mark.parametrize("page", ["6_Check.py", "1_Cite.py"])
def test_the_pages_say_what_an_online_literature_is_sent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          user_settings_file: Path, page: str) -> None:
    empty_library(tmp_path, monkeypatch)
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=240).run()
    assert not at.exception
    assert "Nothing leaves this machine" in " ".join(c.value for c in at.caption)
    monkeypatch.setenv("CITEFINDER_LITERATURE", "openalex")
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=240).run()
    said = re.sub(r"\\(.)", r"\1", " ".join(c.value for c in at.caption))
    assert not at.exception and "Nothing leaves this machine" not in said
    assert ("The literature is openalex: sent to api.openalex.org: the titles, DOIs, arXiv ids (as arXiv DOIs) and "
            "years (as a range of three years either side) of your entries when completing them, each slot's "
            "sentence (at most 400 characters) when searching") in said
