"""Ranking: weighted reciprocal rank fusion, the calibrated confidence, the reranker protocol and its cards."""
