"""One slot's way through the engine (query -> agents -> fuse -> rerank -> select), a draft's slots side by side,
and the literature tier beside the user's library (its priors, when it is asked, how often a paper is cited)."""
