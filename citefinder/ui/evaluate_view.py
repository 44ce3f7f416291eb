"""Evaluate page pieces: choose a query file, run with progress, plot recall@k per stage, list misses."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.evaluate import evaluate, load_items
from citefinder.library.store import Library
from citefinder.ui import resources
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.render import error_box

EVAL_RESULT = "eval_result"  # the last evaluation's result dict
SHARED_DATA = resources.ROOT.parent / "shared" / "data"
KS = (1, 5, 10, 20, 100)


def query_files() -> dict[str, Path]:
    """Benchmark query files found beside the project (../shared/data)."""
    if not SHARED_DATA.is_dir():
        return {}
    return {p.name: p for p in sorted(SHARED_DATA.glob("*.jsonl"))}


def choose_dataset() -> tuple[Any, str | None, int]:
    """The query file (a Path under ../shared/data, or the uploaded file), the split and the item limit."""
    files = query_files()
    upload = st.file_uploader("…or upload a query file (JSONL: id, text, gold)", type=["jsonl"], key="eval_upload")
    name = st.selectbox("Query file", list(files) or ["(none found in ../shared/data)"], key="eval_file",
                        disabled=not files)
    cols = st.columns(2)
    split = cols[0].selectbox("Split", ["all", "test", "train"], key="eval_split")
    limit = int(cols[1].number_input("Items (a small number runs in seconds)", 1, 5000, 20, key="eval_limit"))
    if upload is not None:
        return upload, None if split == "all" else split, limit
    return files.get(name), None if split == "all" else split, limit


def run_evaluation(settings: Settings, library: Library, source: Any, split: str | None, limit: int) -> None:
    """Evaluate a query file; an uploaded one is written to a temp folder (removed afterwards) and
    labelled by its own name, and errors never show the temp path."""
    if isinstance(source, Path):
        _evaluate(settings, source, source.name, split, limit)
        return
    with tempfile.TemporaryDirectory(prefix="citefinder-eval-") as tmp:
        name = Path(source.name).name or "queries.jsonl"
        path = Path(tmp) / re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        path.write_bytes(source.getvalue())
        _evaluate(settings, path, name, split, limit, hide=tmp)


def _evaluate(settings: Settings, path: Path, name: str, split: str | None, limit: int,
              hide: str | None = None) -> None:
    try:
        items = load_items(path, split=split, limit=limit)
        if not items:
            st.warning("No items in that file for this split.")
            return
        pipeline = resources.make_pipeline(settings)
        bar = st.progress(0.0, text=f"0 of {len(items)} items")

        def progress(done: int, total: int, outcome: Any) -> None:
            mark = "✓" if outcome is not None and outcome.correct else "·"
            bar.progress(done / total, text=f"{done} of {total} items {mark}")

        result = evaluate(pipeline, items, dataset=name, progress=progress)
    except CitefinderError as e:
        message = str(e)
        if hide:
            message = message.replace(str(path), name).replace(hide + "/", "").replace(hide, "")
        error_box(CitefinderError(message))
        return
    st.session_state[EVAL_RESULT] = result


def recall_curves(result: dict[str, Any]) -> None:
    """Recall@k per stage as lines (Altair via st.altair_chart)."""
    import altair as alt

    stages = list(result["stages"])  # the agents that ran, then fused and reranked
    rows = [{"stage": stage, "k": k, "recall": result["stages"][stage].get(f"recall@{k}", 0.0)}
            for stage in stages for k in KS]
    chart = (
        alt.Chart(pd.DataFrame(rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("k:Q", scale=alt.Scale(type="log"), axis=alt.Axis(values=list(KS)), title="k (log scale)"),
            y=alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1]), title="recall@k"),
            color=alt.Color("stage:N", sort=stages),
            tooltip=["stage", "k", alt.Tooltip("recall:Q", format=".3f")],
        )
        .properties(height=320)
    )
    st.altair_chart(chart, width="stretch")


def stage_table(result: dict[str, Any]) -> None:
    df = pd.DataFrame(result["stages"]).T.drop(columns=["queries"], errors="ignore")
    st.dataframe(df.style.format("{:.3f}"), width="stretch")
    sel = result["selection"]
    cols = st.columns(4)
    cols[0].metric("Top-1 accuracy", f"{sel.get('top1_accuracy', 0):.1%}", help="answerable items")
    cols[1].metric("Top-1 (CiteME title rule)", f"{sel.get('top1_citeme_title', 0):.1%}")
    cols[2].metric("Abstention (unanswerable)", f"{sel['abstention_rate']:.1%}" if "abstention_rate" in sel else "—")
    cols[3].metric("Hallucinated picks", f"{sel.get('hallucination_rate', 0):.1%}")
    lat = result.get("latency") or {}
    st.caption(f"{result['items']} items on a library of {result['library']['papers']:,} papers · "
               f"p50 {lat.get('p50_s', 0):.2f} s, p95 {lat.get('p95_s', 0):.2f} s per item · "
               f"code {result['code_version']}")


def misses(result: dict[str, Any], limit: int = 30) -> None:
    """Answerable items the selector got wrong, and unanswerable ones it did not abstain on."""
    bad = [o for o in result["outcomes"]
           if (o["answerable"] and o["selected"] not in o["gold"]) or (not o["answerable"] and o["selected"])]
    st.subheader(f"Misses ({len(bad)})")
    for o in bad[:limit]:
        ranks = ", ".join(f"{s} {r if r else '—'}" for s, r in o["gold_rank"].items())
        with st.expander(f"{escape_markdown(o['id'])} · gold rank: {escape_markdown(ranks)}"):
            st.text(o["text"])
            st.text(f"gold: {', '.join(o['gold']) or '(not in the library)'}")
            st.text(f"selected: {o['selected_title'] or 'not found'} ({o['method']}, confidence {o['confidence']:.2f})")
            trace_table(o.get("result") or {})


def trace_table(result: dict[str, Any]) -> None:
    rows = [{"agent": t["agent"], "status": t["status"], "ms": round(t["elapsed_s"] * 1000, 1),
             "top": ", ".join(h["doc_id"] for h in t["top"][:5]), "message": t["message"]}
            for t in result.get("traces", [])]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def show(result: dict[str, Any]) -> None:
    st.markdown(f"**{escape_markdown(result['dataset'])}** · {result['date']}")
    recall_curves(result)
    stage_table(result)
    misses(result)
