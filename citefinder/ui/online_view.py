"""The Settings page's online sources: what each service would be sent, the contact address and the Semantic
Scholar key for this browser session only (never saved: ``config.SECRET_FIELDS``), and the cached answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.ui.markdown import escape_markdown

SERVICES = {"openalex": "OpenAlex", "s2": "Semantic Scholar", "arxiv": "arXiv", "crossref": "Crossref"}


def cache_file(settings: Settings) -> Path:
    from citefinder.sources.online.cache import cache_path

    return Path(settings.sources_cache or cache_path(settings.library.expanduser())).expanduser()


WHEN = {"unsure": "When nothing of yours is confident", "always": "For every slot"}


def literature_form(settings: Settings) -> None:
    """The literature beside the user's library (the settings ``literature`` and ``literature_when``): a literature
    library folder or an online source's name, checked before it is kept (a service: asked once, :func:`usable`)."""
    from citefinder.ui import settings_view

    st.subheader("The literature")
    st.caption("A literature library folder (built with `citefinder library import` from the arXiv, OpenAlex or "
               "Semantic Scholar dumps) or an online source's name. Your entries are completed from it (the "
               "Library page's *Complete from*, a .bib paired on the Cite page), and slots none of your papers fills "
               "confidently are searched there: what it finds is offered as *not in your library*, never filled in. "
               "Your .bib files are never changed.")
    with st.form("literature"):
        spec = st.text_input("Literature library folder, or openalex, s2, arxiv, crossref",
                             value=settings.literature, placeholder="empty: off")
        when = st.radio("Search it", list(WHEN), format_func=WHEN.__getitem__, horizontal=True,
                        index=list(WHEN).index(settings.literature_when))
        c1, c2 = st.columns(2)
        saved = c1.form_submit_button("Apply", type="primary", help="A service is tested first and kept only "
                                      "when it answers.")
        test = c2.form_submit_button("Test", help="Ask the service once (a search for one fixed word, nothing of "
                                     "yours) without applying it.")
    if not (saved or test):
        return
    spec = spec.strip()
    if spec and not usable(spec, settings, test):
        return
    if test:
        if not spec:
            st.info("Nothing to test: no literature named.")
        return
    if settings_view.apply({"literature": spec, "literature_when": when}):
        st.success(f"The literature is {escape_markdown(spec)}." if spec else "The literature is off.")


def usable(spec: str, settings: Settings, test: bool) -> bool:
    """The literature ``spec`` checked as it is chosen: the one rule and the client (sources/registry.py), and a
    service's reachability (sources/reach.py: one small call, said while it runs); the outcome shown."""
    from citefinder.sources.reach import check_reachable, probe_text
    from citefinder.sources.registry import check_literature

    refused = "" if test else "Not applied. "
    try:
        named = check_literature(spec, settings)
        if named.kind != "service":
            if test:
                st.success(f"{escape_markdown(spec)} is a literature library folder.")
            return True
        with st.spinner(f"Testing {named.service}: {probe_text(named.service)}..."):
            reach = check_reachable(spec, settings)
    except CitefinderError as e:
        st.error(f"{refused}{escape_markdown(e)}", icon=":material/error:")
        return False
    if not reach.ok:
        st.error(f"{refused}{escape_markdown(reach.message)}", icon=":material/error:")
    elif test:
        st.success(escape_markdown(reach.message))
    return reach.ok


def online_form(settings: Settings) -> None:
    from citefinder.sources.registry import open_source
    from citefinder.ui import settings_view

    st.subheader("Online sources")
    st.caption("Off unless you name one as the literature (`openalex`, `s2`, `arxiv` or `crossref` where a "
               "literature library folder goes: the Library page's *Enrich*, the Cite page's papers you don't have "
               "yet, `CITEFINDER_LITERATURE`). Nothing is sent while none is named.")
    rows = []
    for name, title in SERVICES.items():
        try:
            said = "sends " + escape_markdown(open_source(name, settings).sends.removeprefix("to "))  # sends nothing
        except CitefinderError as e:  # its client is not installed: said with the install command
            said = "cannot be used: " + escape_markdown(e)
        rows.append(f"- **{title}** (`{name}`): {said}")
    st.markdown("\n".join(rows))
    with st.form("online"):
        email = st.text_input("Contact address (OpenAlex's and Crossref's polite pool)", type="password", value="",
                              placeholder="set (hidden); type to replace it" if settings.contact_email
                              else "empty: none, or CITEFINDER_CONTACT_EMAIL from the environment")
        key = st.text_input("Semantic Scholar API key", type="password", value="",
                            placeholder="set (hidden); type to replace it" if settings.s2_api_key
                            else "empty: the shared public rate, or CITEFINDER_S2_API_KEY / S2_API_KEY")
        forget = st.checkbox("Forget both", value=False,
                             disabled=settings.contact_email is None and settings.s2_api_key is None)
        saved = st.form_submit_button("Use for this session", type="primary")
    if saved:
        changes: dict[str, Any] = {}
        if email:
            changes["contact_email"] = email
        if key:
            changes["s2_api_key"] = key
        if forget:
            changes.update({"contact_email": None, "s2_api_key": None})
        if changes and settings_view.apply(changes):
            st.success("Kept for this browser session only: never saved, never shown back.")
    cached_answers(settings)


def cached_answers(settings: Settings) -> None:
    from citefinder.sources.online.cache import AnswerCache

    path = cache_file(settings)
    cache = AnswerCache(path, settings.sources_cache_days * 86400)
    try:
        counts = {name: cache.count(name) for name in SERVICES}
    finally:
        cache.close()
    if not any(counts.values()):
        st.caption(f"No cached answers yet ({escape_markdown(path)}).")
        return
    held = ", ".join(f"{SERVICES[n]} {c}" for n, c in counts.items() if c)
    st.caption(f"Cached answers in {escape_markdown(path)}: {held} (reused for "
               f"{settings.sources_cache_days:g} days: a second run sends nothing).")
    if st.button("Forget the cached answers", icon=":material/delete_sweep:"):
        cache = AnswerCache(path, 0)
        try:
            n = cache.clear()
        finally:
            cache.close()
        st.toast(f"Forgot {n} cached answers: the next run asks the services again.")
        st.rerun()


def what_leaves(settings: Settings, otherwise: str) -> None:
    """The page's line on what leaves this machine: what the configured online literature is sent
    (:func:`citefinder.sources.registry.what_is_sent`), else ``otherwise``."""
    from citefinder.sources.registry import what_is_sent

    st.caption(escape_markdown(what_is_sent(settings) or otherwise))
