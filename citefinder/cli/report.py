"""Plain-text rendering of results and traces for the terminal."""

from __future__ import annotations

from typing import Any, Sequence

from citefinder.types import Candidate, Paper, SlotResult, StageTrace


def paper_line(p: Paper) -> str:
    authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
    bits = [p.title]
    meta = ", ".join(str(x) for x in (authors, p.venue, p.year) if x)
    if meta:
        bits.append(f"— {meta}")
    bits.append(f"[{p.doc_id}]")
    return " ".join(bits)


def stage_columns(cands: Sequence[Candidate], agents: Sequence[str] = ()) -> list[str]:
    """The agents that ran (given, or those any candidate has a rank from), then fused and rerank."""
    names = list(agents) or list(dict.fromkeys(
        s.stage for c in cands for s in c.scores if s.stage not in ("fused", "rerank") and "#" not in s.stage))
    return names + ["fused", "rerank"]


def candidate_table(cands: Sequence[Candidate], top: int = 5, agents: Sequence[str] = ()) -> list[str]:
    columns = stage_columns(cands, agents)
    lines = ["    #  " + "  ".join(f"{c[:7]:>7}" for c in columns) + "  paper"]
    for i, c in enumerate(cands[:top], start=1):
        cells = []
        for stage in columns:
            s = c.stage(stage)
            cells.append(f"{s.rank:>7}" if s else f"{'-':>7}")
        lines.append(f"   {i:>2}  " + "  ".join(cells) + "  " + paper_line(c.paper))
    return lines


def trace_lines(t: StageTrace, top: int = 3) -> list[str]:
    head = f"    {t.agent:<11} {t.status:<8} {t.elapsed_s * 1000:8.1f} ms"
    if t.message:
        head += f"  {t.message}"
    lines = [head]
    if t.top:
        lines.append("                " + ", ".join(f"{h.doc_id} ({h.score:.3f})" for h in t.top[:top]))
    return lines


def render_result(r: SlotResult, *, top: int = 5) -> str:
    lines: list[str] = []
    if r.slot is not None:
        lines.append(f"Slot {r.slot.index + 1}: {r.slot.sentence}")
    else:
        lines.append(f"Question: {r.query.text}")
    sel = r.selection
    if sel.status == "found" and sel.paper:
        lines.append(f"  -> {paper_line(sel.paper)}")
        lines.append(f"     confidence {sel.confidence:.2f} via {sel.method}")
    else:
        lines.append(f"  -> not found in your library ({sel.method})")
    if sel.reasoning:
        lines.append(f"     reasoning: {sel.reasoning}")
    lines.append("  Top candidates (rank in each stage):")
    lines += candidate_table(r.candidates, top, [t.agent for t in r.traces if t.kind == "retriever"])
    lines.append("  Trace:")
    for t in r.traces:
        lines += trace_lines(t)
    return "\n".join(lines)


def metrics_table(first: str, metrics: dict[str, dict[str, Any]], names: Sequence[str]) -> str:
    """A Markdown table: a row per entry of ``metrics`` (its name under the heading ``first``), its query count,
    then each metric of ``names`` to three decimals (0 where one is missing)."""
    lines = [f"| {first} | queries | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for name, m in metrics.items():
        lines.append(f"| {name} | {m.get('queries', 0)} | " + " | ".join(f"{m.get(k, 0):.3f}" for k in names) + " |")
    return "\n".join(lines)
