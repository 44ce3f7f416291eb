"""Render helpers shared by the pages: paper card, slot sentence, trace panel, candidate tables.

Paper metadata and LLM output are untrusted: they reach the page only through
:func:`escape_markdown`, ``st.text`` or ``st.dataframe`` (never ``unsafe_allow_html``).
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Sequence

import streamlit as st

from citefinder.errors import CitefinderError
from citefinder.llm.lm import usage_summary
from citefinder.text.slots import SLOT_TEXT
from citefinder.types import Paper, SlotResult, StageTrace
from citefinder.ui import tables
from citefinder.ui.markdown import escape_markdown, link, message_markdown, safe_url

log = logging.getLogger(__name__)

TOP_SHOWN = 20  # rows of each top-k table in a trace
_scrolls = itertools.count()
Lookup = Callable[[Sequence[str]], list[Paper]]


def paper_meta(paper: Paper, max_authors: int = 6, *, year: bool = True) -> str:
    """"Authors · year · venue" as escaped Markdown (without the year when the caller shows it itself)."""
    parts = [tables.authors_short(paper.authors, max_authors), str(paper.year or "") if year else "", paper.venue or ""]
    return " · ".join(escape_markdown(p) for p in parts if p)


def paper_card(paper: Paper, *, number: int | None = None) -> None:
    """Title, authors, year, venue and a link (when the paper has a safe http(s) one)."""
    prefix = f"{number}\\. " if number is not None else ""
    st.markdown(f"{prefix}**{escape_markdown(paper.title)}**")
    lines = [paper_meta(paper)]
    if safe_url(paper.link):
        lines.append(link("open paper ↗", paper.link))
    st.caption("  \n".join(line for line in lines if line))


def provenance_line(paper: Paper) -> str:
    """Where the fields CiteFinder found for ``paper`` came from (``library enrich``), as escaped Markdown for a
    card: ":gray[abstract from papers-333k, arxiv:1706.03762]"; "" when every field is the user's."""
    from citefinder.sources.enrich import provenance_text

    text = provenance_text(paper)
    return f":gray[{escape_markdown(text)}]" if text else ""


def highlight_slot(sentence: str, which: int = 0) -> str:
    """The sentence as Markdown with its ``which``-th [CITATION] highlighted (others dimmed)."""
    pieces = [escape_markdown(p, strip=False) for p in sentence.split(SLOT_TEXT)]
    out = [pieces[0]]
    for i, piece in enumerate(pieces[1:]):
        out.append(":orange-background[**\\[CITATION\\]**]" if i == which else ":gray[\\[CITATION\\]]")
        out.append(piece)
    return "".join(out).strip()


def confidence_bar(confidence: float, label: str = "Confidence") -> None:
    value = min(1.0, max(0.0, float(confidence)))
    st.progress(value, text=f"{label} {value:.2f}")


def status_badge(result: SlotResult) -> None:
    if result.selection.status == "found":
        st.badge("found", icon=":material/check:", color="green")
    else:
        st.badge("not found", icon=":material/help:", color="orange")


def _papers_for(result: SlotResult, lookup: Lookup | None, hit_ids: Sequence[str]) -> dict[str, Paper]:
    papers = {c.doc_id: c.paper for c in result.candidates}
    missing = [i for i in hit_ids if i not in papers]
    if missing and lookup is not None:
        papers.update({p.doc_id: p for p in lookup(missing)})
    return papers


def _stage_note(trace: StageTrace | None) -> None:
    if trace is None:
        st.caption("This stage did not run.")
    elif trace.status == "ok":
        st.caption(escape_markdown(f"{trace.message} · {trace.elapsed_s * 1000:.0f} ms"))
    elif trace.status == "skipped":
        st.info(escape_markdown(trace.message or "skipped"))
    elif trace.status == "fallback":
        st.warning(escape_markdown(trace.message))
    else:
        st.error(escape_markdown(trace.message or "failed"))


def trace_panel(result: SlotResult, lookup: Lookup | None = None) -> None:
    """Every agent's work for one slot: query, each retrieval agent's top-k, fused ranks, rerank, selection, times."""
    agents = [t for t in result.traces if t.kind == "retriever"]
    shown_ids = [h.doc_id for t in agents for h in t.top[:TOP_SHOWN]]
    papers = _papers_for(result, lookup, shown_ids)
    st.dataframe(tables.stage_times_frame(result.traces), hide_index=True, width="stretch")
    labels = ["Query"] + [t.agent.capitalize() if len(t.agent) > 4 else t.agent.upper() for t in agents]
    tabs = st.tabs(labels + ["Fused", "Rerank", "Select"])
    with tabs[0]:
        _query_tab(result)
    for tab, trace in zip(tabs[1 : 1 + len(agents)], agents, strict=True):
        with tab:
            _stage_note(trace)
            read = {k: v for k, v in trace.inputs.items() if v and k != "variants"}
            if read:
                st.caption(escape_markdown("Searched for: " + "; ".join(f"{k}: {v}" for k, v in read.items())))
            if trace.top:
                st.caption(f"Top {min(TOP_SHOWN, len(trace.top))} of {len(trace.top)} (k = {trace.params.get('k')})")
                st.dataframe(tables.shown(tables.hits_frame(trace.top, papers, TOP_SHOWN)),
                             hide_index=True, width="stretch")
    tab_fused, tab_rerank, tab_select = tabs[1 + len(agents) :]
    with tab_fused:
        _stage_note(result.trace("fuse"))
        if result.candidates:
            st.caption("Each candidate's rank in every stage (blank: the stage did not return it).")
            st.dataframe(tables.shown(tables.candidates_frame(result.candidates, TOP_SHOWN)),
                         hide_index=True, width="stretch")
    with tab_rerank:
        rerank = result.trace("rerank")
        _stage_note(rerank)
        if rerank and rerank.status == "ok" and rerank.top:
            st.dataframe(tables.shown(tables.hits_frame(rerank.top, papers, TOP_SHOWN)),
                         hide_index=True, width="stretch")
    with tab_select:
        _select_tab(result, papers)


def _query_tab(result: SlotResult) -> None:
    _stage_note(result.trace("reformulate"))
    st.markdown("**Reformulated query**")
    st.text(result.query.text or "(empty)")
    st.markdown("**Keywords**")
    st.text(", ".join(result.query.keywords) or "(none)")
    rewrite = result.trace("rewrite")
    if rewrite is not None:
        st.markdown("**LLM rewrite**")
        _stage_note(rewrite)
    if result.query.variants:
        st.markdown("**Query variants** (each retrieved and fused)")
        for v in result.query.variants:
            st.text(v)


def _select_tab(result: SlotResult, papers: dict[str, Paper]) -> None:
    trace = result.trace("select")
    sel = result.selection
    verdict = "found" if sel.status == "found" else "not found (abstained)"
    st.markdown(f"**Verdict:** {escape_markdown(verdict)} · **method:** {escape_markdown(sel.method or '-')}"
                f" · **confidence:** {sel.confidence:.2f}")
    _stage_note(trace)
    basis = trace.details.get("confidence_basis") if trace is not None else None
    if basis and basis.get("explanation"):
        st.caption(escape_markdown(f"Confidence {basis.get('words', '')}: {basis['explanation']}."))
    if trace is not None and usage_summary(trace.details):
        st.caption(escape_markdown(usage_summary(trace.details)))
    if sel.reasoning:
        st.markdown("**Selector's reasoning**")
        st.text(sel.reasoning)
    if trace and trace.details.get("raw_answer"):
        st.markdown("**Raw LLM answer**")
        st.text(str(trace.details["raw_answer"]))
    if trace and trace.top:
        st.caption("Candidates the selector saw, with their confidence:")
        st.dataframe(tables.shown(tables.hits_frame(trace.top, papers)),
                     hide_index=True, width="stretch")


def ranked_papers(result: SlotResult, limit: int = 10) -> None:
    """Numbered paper cards of the final ranking (search results)."""
    for i, cand in enumerate(result.candidates[:limit], start=1):
        paper_card(cand.paper, number=i)


def scroll_into_view(key: str | None) -> None:
    """Bring the element with Streamlit key ``key`` into view (a slot after keys n / p, a fill's progress):
    a small script, sent only when asked, that waits for the element and scrolls it to the top. It runs in
    a component's frame (``st.html`` strips scripts) and reaches the page, which has the same origin."""
    if not key:
        return
    import streamlit.components.v1 as components

    target = re.sub(r"[^A-Za-z0-9_-]", "", key)
    # scrolled again a few times while the page settles: elements redrawn above it can move it away
    components.html(
        f"<script>/* {next(_scrolls)} */(function(){{const d=window.parent.document;let n=0,k=0;function go(){{"
        f"const el=d.querySelector('.st-key-{target}');"
                f"if(el){{el.style.scrollMarginTop='64px';el.scrollIntoView({{block:'start'}});if(k++<5){{setTimeout(go,300);}}}}"
        f"else if(n++<80){{setTimeout(go,100);}}}}setTimeout(go,50);}})();</script>",
        height=0,
    )


def error_box(error: Exception) -> None:
    """A CitefinderError as an error box: its message as written for people (`commands` as code, *words* in
    italics, the rest as plain text); anything else as plain text."""
    text = message_markdown(error) if isinstance(error, CitefinderError) else escape_markdown(str(error))
    st.error(text or type(error).__name__, icon=":material/error:")


def failure(action: str, error: Exception) -> None:
    """A message for the page, the traceback for the log: never a traceback on the page."""
    if isinstance(error, CitefinderError):
        error_box(error)
        return
    log.error("%s failed", action, exc_info=error)
    st.error(f"{escape_markdown(action)} failed: {escape_markdown(type(error).__name__)}: "
             f"{escape_markdown(str(error)[:300])}. The details are in the server log.", icon=":material/error:")
