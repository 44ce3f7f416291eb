"""Training what CiteFinder ships: the query encoder (embedder/), the cross-encoder (rerank/), the DSPy
optimisation of the selector, and the examples they learn from."""
