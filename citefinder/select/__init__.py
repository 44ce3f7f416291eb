"""The selector: the threshold rule (no LLM) or an LLM choosing among the candidates or abstaining, the named-work
rule, the open-world check, the hub and one-paper-per-marker checks."""
