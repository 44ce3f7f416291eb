"""The citation-context memory of a library: how the literature (and the user) cites its papers.

``records`` reads context packs (the JSONL schema of the README), ``memory`` is the SQLite file in the
library folder, ``sync`` matches its records to the library's papers and embeds the matched ones,
``api`` is what the CLI and the app call (import, learn from a pick, clear, stats, repair).
"""
