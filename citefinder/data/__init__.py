"""Tuned data, each file with the split and score it was tuned on: fusion, confidence, known names, the literature
tier, the named-work rule, the open-world check, the check model."""
