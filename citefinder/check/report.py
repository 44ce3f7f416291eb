"""A check's results as a person or a CI job reads them: a terminal table, a Markdown report, JSON."""

from __future__ import annotations

import json

from citefinder.check.draft import CheckReport
from citefinder.check.model import DOUBTFUL, FITS, WRONG
from citefinder.check.run import CheckedCitation

MARK = {FITS: "ok", DOUBTFUL: "??", WRONG: "XX"}


def _rank(c: CheckedCitation) -> str:
    if c.rank is not None:
        return f"{c.rank}/{c.ranked}"
    return "-" if not c.title else f">50/{c.ranked}"


def _alternative(c: CheckedCitation) -> str:
    if not c.alternatives:
        return ""
    a = c.alternatives[0]
    return f"{a.key or a.doc_id} ({a.probability:.2f})"


def summary(report: CheckReport) -> str:
    n = len(report.citations)
    return (f"{n} citations checked in {report.elapsed_s:.1f} s against {report.library_size} papers: "
            f"{n - len(report.doubtful) - len(report.likely_wrong)} fit, {len(report.doubtful)} doubtful, "
            f"{len(report.likely_wrong)} likely wrong; {len(report.problems)} notes on the .bib")


def table(report: CheckReport, *, width: int = 34) -> str:
    """One line per cited key, in text order; then the .bib's problems."""
    rows = [("#", "where", "key", "verdict", "p", "rank", "better fit")]
    for c in report.citations:
        rows.append((str(c.index + 1), f"{c.file}:{c.line}", c.key[:width], f"{MARK[c.verdict]} {c.verdict}",
                     f"{c.probability:.2f}", _rank(c), _alternative(c)[:width + 8]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append("")
    lines += [f"- {p.kind}: {p.message}" for p in report.problems]
    lines.append(summary(report))
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: CheckReport, title: str = "Citation check") -> str:
    """A report to read or attach to a pull request: what to look at first, then every citation."""
    out = [f"# {title}", "", summary(report), ""]
    flagged = [c for c in report.citations if c.verdict != FITS]
    if flagged:
        out += ["## To look at", ""]
        for c in flagged:
            out.append(f"- **{_md(c.key)}** ({c.file} line {c.line}): *{c.verdict}* (p = {c.probability:.2f}, "
                       f"{_md(c.reason)}) in “{_md(c.sentence)}”")
            for a in c.alternatives:
                out.append(f"  - better fit: `{_md(a.key or a.doc_id)}` {_md(a.title)} ({a.year or 'n.d.'}), "
                           f"p = {a.probability:.2f}: {_md(a.evidence)}")
        out.append("")
    out += ["## Every citation", "", "| # | where | key | verdict | p | rank | better fit |",
            "|---|---|---|---|---|---|---|"]
    for c in report.citations:
        out.append(f"| {c.index + 1} | {c.file}:{c.line} | `{_md(c.key)}` | {c.verdict} | {c.probability:.2f} | "
                   f"{_rank(c)} | {_md(_alternative(c))} |")
    if report.problems:
        out += ["", "## The .bib", ""] + [f"- *{p.kind}*: {_md(p.message)}" for p in report.problems]
    return "\n".join(out) + "\n"


def to_json(report: CheckReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
