"""Saved runs read as scenario outcomes: bench/calibration_eval.py's scenario runs and bench/drafts_eval.py --traces
runs (each whole draft as the ``natural`` scenario). Read by calibration_eval.py (its report) and tune.py (the
confidence's adjustment), so neither imports the other for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def drafts_outcomes(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A bench/drafts_eval.py --traces run as scenario outcomes: each whole draft against its own .bib."""
    sizes = data.get("library_sizes") or {}
    slots: dict[str, int] = {}
    for o in data["outcomes"]:
        paper = o["id"].split(":")[0]
        slots[paper] = slots.get(paper, 0) + 1
    out = []
    for o in data["outcomes"]:
        paper, n = o["id"].split(":")[0], o["id"].split(":")[-1]
        result = o.get("result") or {}
        cands = result.get("candidates") or []
        top = cands[0]["paper"]["doc_id"] if cands else None
        select = next((t for t in result.get("traces", []) if t["agent"] == "select"), None)
        conf = {h["doc_id"]: h["score"] for h in (select or {}).get("top", [])}
        out.append({**o, "id": f"{paper}:long:natural:{n}", "library_size": sizes.get(paper, 0),
                    "draft_slots": slots[paper], "top1": top, "top1_p": conf.get(top, 0.0) if top else 0.0})
    return out


def load_outcomes(paths: list[Path]) -> list[dict[str, Any]]:
    """Scenario runs and bench/drafts_eval.py --traces runs (as the ``natural`` scenario) together."""
    outs: list[dict[str, Any]] = []
    for p in paths:
        data = json.loads(p.read_text())
        outs += data["outcomes"] if data.get("dataset") == "drafts-dev scenarios" else drafts_outcomes(data)
    return outs
