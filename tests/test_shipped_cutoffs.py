"""The cut-offs the docs give are the shipped ones, and confidence.json holds one threshold, the one read:
``adjust.threshold`` (config.shipped_threshold), no unread top-level ``threshold``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from citefinder.config import Settings, shipped_threshold
from citefinder.rank.calibration import word_cutoffs

ROOT = Path(__file__).resolve().parent.parent


def test_confidence_json_holds_only_the_threshold_that_is_read() -> None:
    data = json.loads((ROOT / "citefinder" / "data" / "confidence.json").read_text(encoding="utf-8"))
    assert "threshold" not in data, "an unread threshold beside the one read"
    assert shipped_threshold() == data["adjust"]["threshold"] == Settings().confidence_threshold


def test_contracts_give_the_shipped_cut_offs() -> None:
    likely, unsure = word_cutoffs()
    text = " ".join((ROOT / "docs" / "CONTRACTS.md").read_text(encoding="utf-8").split())
    said = re.search(r'"likely right" \(>= ([\d.]+)\), "unsure" \(>= ([\d.]+)\)', text)
    assert said is not None and (float(said.group(1)), float(said.group(2))) == (likely, unsure)
    assert f"`adjust.threshold` ({shipped_threshold():g}" in text
