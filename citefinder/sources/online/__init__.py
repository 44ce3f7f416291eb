"""The scholarly services as sources of the literature, on request: OpenAlex (:mod:`.openalex`, through
``pyalex``), Semantic Scholar (:mod:`.s2`, ``semanticscholar``), arXiv (:mod:`.arxiv_api`, ``arxiv``) and
Crossref (:mod:`.crossref`, ``habanero``), the optional extra ``citefinder[online]``. Each is opened by name
(:mod:`citefinder.sources.registry`), never while off; every call goes through :mod:`.http` (cached in
:mod:`.cache`, paced, retried, bounded) and every service shares :mod:`.service`."""
