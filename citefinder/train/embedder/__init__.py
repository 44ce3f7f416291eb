"""Fine-tune a bi-encoder (the library's embedder) on real citing sentences, on CPU.

- :mod:`~citefinder.train.embedder.pack`: (citing sentence -> cited paper) pairs from a citation-context
  pack (the JSONL schema of ``../shared/data/cite-contexts``), the query built as the dense agent builds
  it, the cited paper's text as the library embeds it, hard negatives from the same citing paper.
- :mod:`~citefinder.train.embedder.train`: the training loop (in-batch + hard negatives, plain PyTorch).
- :mod:`~citefinder.train.embedder.validate`: exact dense recall of held-out sentences, trained vs base.
- :mod:`~citefinder.train.embedder.card`: the model card and the library's trained embedders.

Nothing heavy is imported here.
"""
