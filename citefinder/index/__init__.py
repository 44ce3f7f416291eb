"""Derived indexes over the stored papers and the citation memory (vectors, static vectors, titles, names,
authors, keys, anchors, citations, cocitation, cited names), each saved beside the library and rebuilt when stale."""
