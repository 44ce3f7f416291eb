"""The Check page forgets the previous results when a new .tex or .bib is uploaded (citefinder/ui/check_view.py):
both uploaders call :func:`new_upload`, which takes the last run off the page."""

from __future__ import annotations

from typing import Any

from streamlit.testing.v1 import AppTest

from citefinder.ui import check_view


def test_both_uploaders_forget_the_last_run_on_a_new_upload(monkeypatch) -> None:
    seen: list[dict[str, Any]] = []

    class Column:
        def file_uploader(self, label: str, **kw: Any) -> None:
            seen.append(kw)

    monkeypatch.setattr(check_view.st, "columns", lambda n: [Column() for _ in range(n)])
    check_view.uploaders()
    assert [kw["key"] for kw in seen] == [check_view.TEX, check_view.BIB]
    assert all(kw.get("on_change") is check_view.new_upload for kw in seen)


def script() -> None:
    import streamlit as st

    from citefinder.ui import check_view

    if "seeded" not in st.session_state:  # the first run only: a check of the files before
        st.session_state["seeded"] = True
        st.session_state[check_view.RUN] = "the run of the files before"
    st.button("upload", on_click=check_view.new_upload)
    st.text(f"shown: {st.session_state.get(check_view.RUN)}")


def test_new_upload_takes_the_last_run_off_the_page() -> None:
    at = AppTest.from_function(script).run()
    assert at.text[0].value == "shown: the run of the files before"
    at.button[0].click().run()
    assert at.text[0].value == "shown: None"
