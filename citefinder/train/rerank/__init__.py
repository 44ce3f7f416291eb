"""Train our own cross-encoder reranker from labeled citations (CPU, tens of minutes).

- :mod:`~citefinder.train.examples`: labeled examples from JSONL files and from LaTeX
  projects (``\\cite`` keys resolved through the .bib to library papers).
- :mod:`~citefinder.train.rerank.mining`: hard negatives from our own BM25 + dense retrieval.
- :mod:`~citefinder.train.rerank.train`: the training loop (sentence-transformers ``CrossEncoder``).
- :mod:`~citefinder.train.rerank.validate`: fused order vs reranked order on held-out queries.
- :mod:`~citefinder.train.rerank.card`: the model card and the library's default reranker.

Nothing heavy is imported here: ``card`` is read by :func:`citefinder.rank.rerank.make_reranker`.
"""
