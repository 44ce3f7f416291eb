"""Reading and writing drafts: LaTeX and its cite commands, slots, what a draft cites, filling, LaTeX projects, PDFs,
encodings, and the one writer (safewrite + staging) every output goes through."""
