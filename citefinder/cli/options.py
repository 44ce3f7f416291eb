"""Options every ``citefinder`` command shares, logging set-up and progress bars for the terminal.

Global options are accepted before or after the subcommand (``citefinder --library DIR fill ...``
and ``citefinder fill ... --library DIR``): the top-level parser defines them with real defaults,
each subcommand defines them again with ``argparse.SUPPRESS`` as default, so a subcommand that
does not repeat an option leaves the value given before it in place (and one that repeats it wins).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any, Callable

# Libraries that log at INFO/DEBUG on their own (bm25s sets its logger to DEBUG at import).
NOISY_LOGGERS = ("bm25s", "httpx", "httpcore", "chromadb", "sentence_transformers", "transformers", "urllib3",
                 "LiteLLM", "litellm", "openai", "dspy", "asyncio", "filelock")


def _default(top: bool, value: Any) -> Any:
    return value if top else argparse.SUPPRESS


def add_library_options(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--library``, ``--chroma-host``, ``--embedder`` and ``-v`` (see the module docstring for ``top``)."""
    g = p.add_argument_group("library (also accepted before the command)")
    g.add_argument("--library", metavar="DIR", default=_default(top, None),
                   help="library folder (env CITEFINDER_LIBRARY, default ./library)")
    g.add_argument("--chroma-host", metavar="HOST:PORT", default=_default(top, None),
                   help="use a Chroma server (env CITEFINDER_CHROMA_HOST)")
    g.add_argument("--embedder", default=_default(top, None),
                   help="minilm (default), mpnet, or a sentence-transformers name/folder")
    g.add_argument("-v", "--verbose", action="count", default=_default(top, 0),
                   help="log details: -v for CiteFinder's debug messages, -vv for every library's too")


def add_model_options(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--reranker``, ``--llm-model`` and ``--llm-api-base``."""
    g = p.add_argument_group("models (also accepted before the command)")
    g.add_argument("--reranker", default=_default(top, None),
                   help="cross-encoder folder or name; none skips reranking "
                        "(default: the library's trained default, else none)")
    g.add_argument("--llm-model", default=_default(top, None),
                   help="LLM for the selector, e.g. openai/gpt-4o-mini (env CITEFINDER_LLM_MODEL; "
                        "needs pip install 'citefinder[llm]')")
    g.add_argument("--llm-api-base", default=_default(top, None),
                   help="OpenAI-compatible base URL (env CITEFINDER_LLM_API_BASE)")


def add_common_options(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    """Every global option: library and models."""
    add_library_options(p, top=top)
    add_model_options(p, top=top)


def configure_logging(verbosity: int) -> None:
    """Quiet by default (warnings and errors only); ``-v``: CiteFinder's debug messages; ``-vv``: everything."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    if verbosity < 2:  # no "Loading weights" bars from transformers (read when huggingface_hub is imported)
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")  # no-op when a handler exists
    logging.getLogger().setLevel(level)
    logging.getLogger("citefinder").setLevel(logging.DEBUG if verbosity >= 1 else logging.NOTSET)
    floor = logging.DEBUG if verbosity >= 2 else logging.WARNING
    for name in NOISY_LOGGERS:
        noisy = logging.getLogger(name)
        noisy.setLevel(floor)
        # a filter too: bm25s sets its own logger to DEBUG when it is imported, which happens later
        quiet = next((f for f in noisy.filters if isinstance(f, _MinLevel)), None)
        if quiet is None:
            quiet = _MinLevel()
            noisy.addFilter(quiet)
        quiet.level = floor


class _MinLevel(logging.Filter):
    """Drops records below ``level``, whatever level the library sets on its logger."""

    level = logging.WARNING

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level


def progress_bar(desc: str, unit: str) -> tuple[Callable[[int, int | None], None], Callable[[], None]]:
    """``(update(done, total), close)`` for a tqdm bar on standard error.

    The bar is drawn from the first update on, so it starts with its total when the caller knows
    one ("importing: 0/300 papers") and counts ("importing: 12 papers") when it does not.
    """
    from tqdm import tqdm

    bar: list[Any] = []

    def update(done: int, total: int | None) -> None:
        if not bar:
            # "12 papers" while the total is unknown; "3/300 [..., 5.1papers/s]" once it is
            bar.append(tqdm(desc=desc, unit=unit if total else f" {unit}", total=total, file=sys.stderr,
                            dynamic_ncols=True))
        elif total and bar[0].total != total:
            bar[0].total = total
            bar[0].refresh()
        bar[0].update(done - bar[0].n)

    def close() -> None:
        if bar:
            bar[0].close()

    return update, close


def tqdm_bar(desc: str, unit: str, total: int | None = None, **options: Any) -> Any:
    """A tqdm bar on standard error that the caller updates and closes (``options``: tqdm's, e.g. mininterval)."""
    from tqdm import tqdm

    return tqdm(desc=desc, unit=unit, total=total, file=sys.stderr, dynamic_ncols=True, **options)
