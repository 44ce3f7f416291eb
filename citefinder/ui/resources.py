"""Shared heavy objects behind ``st.cache_resource``: embedder, library, reranker.

Keys are the settings that change the object (library folder, Chroma host, embedder, reranker);
the per-session parts (LLM, k values, thresholds) go into a Pipeline built per run, which is
cheap. Never mutate what these return: every browser session shares it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import streamlit as st

from citefinder.config import Settings
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.link import sync_all
from citefinder.library.store import Library
from citefinder.pipeline.pipeline import Pipeline
from citefinder.rank.rerank import Reranker, make_reranker, reranker_key
from citefinder.retrieve.registry import keep_indexes_current

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
SAMPLE_BIB = ASSETS / "sample-library.bib"
LOGO_SVG = ASSETS / "logo.svg"
LOGO_PNG = ASSETS / "logo.png"
FAVICON = str(LOGO_PNG)  # served by the app itself (a Material icon favicon is fetched from fonts.gstatic.com)

_sample_lock = threading.Lock()


@st.cache_resource(show_spinner=False)
def configure_logging() -> None:
    """Configure logging once per server process (the library itself never does)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "chromadb", "sentence_transformers", "LiteLLM", "litellm", "urllib3", "bm25s"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@st.cache_resource(show_spinner=False, max_entries=4)
def _embedder(name: str, max_seq_length: int, batch_size: int) -> Embedder:
    return Embedder(name, max_seq_length, batch_size)


@st.cache_resource(show_spinner=False, max_entries=8)  # layout.open_library shows the status
def _library(path: str, chroma_host: str | None, collection: str, embedder: str, max_seq_length: int,
             batch_size: int, _settings: Settings) -> Library:
    library = Library.open(_settings, embedder=_embedder(embedder, max_seq_length, batch_size))
    keep_indexes_current(_settings, library)  # the agents' indexes are rebuilt after every write
    sync_all(library)  # linked .bib / CSL-JSON files: re-imported when they changed
    library.embedder.encode(["warm-up"])  # load the model now, not during the first slot
    return library


@st.cache_resource(show_spinner="Loading the reranker...", max_entries=4)
def _reranker(key: str, max_seq_length: int, batch_size: int, _settings: Settings) -> Reranker:
    return make_reranker(_settings)


def library_key(settings: Settings) -> tuple[str, str | None, str, str, int, int]:
    """What identifies a library: sessions with equal keys share one Library object."""
    return (
        str(Path(settings.library).expanduser().resolve()),
        settings.chroma_host,
        settings.collection,
        settings.embedder,
        settings.embed_max_seq_length,
        settings.embed_batch_size,
    )


def get_library(settings: Settings) -> Library:
    """The shared Library for these settings (opened once per process). Raises CitefinderError."""
    return _library(*library_key(settings), _settings=settings)


def get_reranker(settings: Settings) -> Reranker:
    """The shared reranker for these settings: rebuilt when the reranker, its blend, ``rrf_k``, the
    library or the library's default reranker (``citefinder reranker use``) changed."""
    return _reranker(reranker_key(settings), settings.embed_max_seq_length, settings.embed_batch_size,
                     _settings=settings)


def make_pipeline(settings: Settings) -> Pipeline:
    """A Pipeline for this session's settings over the shared library and reranker.

    The selector (LLM or threshold rule) is built here, per session, from ``settings``; it passes
    its LM with ``dspy.context``, so sessions with different LLMs do not interfere.
    """
    return Pipeline(settings, get_library(settings), reranker=get_reranker(settings))


def needs_sample(library: Library) -> bool:
    """True for a brand-new empty library (never written to): the app then loads the sample.

    A library the user emptied by hand has a write generation above 0 and stays empty.
    """
    if library.count() > 0:
        return False
    return int(library.stats().get("generation", 0)) == 0


def load_sample(library: Library, progress=None):
    """Import the sample library (assets/sample-library.bib); one import at a time per process."""
    with _sample_lock:
        return library.import_files([SAMPLE_BIB], progress=progress)
