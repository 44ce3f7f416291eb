"""Errors a user can act on. Every message says what went wrong and what to do next."""

from __future__ import annotations


class CitefinderError(Exception):
    """Base class for every error CiteFinder raises on purpose."""


class ConfigError(CitefinderError):
    """A setting is missing or invalid (the message names the setting)."""


class ModelLoadError(CitefinderError):
    """A model could not be loaded (the message names the setting and the package to install)."""


class LibraryError(CitefinderError):
    """The paper library cannot be opened, read or written."""


class EmptyLibraryError(LibraryError):
    """The library holds no papers yet."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"The library at {path} is empty. Import papers first: "
            f"`citefinder library import refs.bib` (BibTeX, JSONL, CSL-JSON or PDF), "
            f"or load the sample library from the app's Library page."
        )


class EmbedderMismatchError(LibraryError):
    """The library's vectors were made by another embedder than the one configured."""


class InputError(CitefinderError):
    """A file or text given by the user cannot be used (corrupt, encrypted, empty, too large...)."""


class NoSlotsError(InputError):
    """The text contains no citation slot."""

    def __init__(self) -> None:
        super().__init__(
            "No citation slot found. Mark each place that needs a reference with [CITATION] "
            "(also recognised: [CITATIONS], [CITE], [?], \\cite{?})."
        )


class LLMError(CitefinderError):
    """The configured LLM endpoint failed (connection, timeout, HTTP error)."""


class LibraryDamagedError(LibraryError):
    """Part of the library is missing or damaged; the message names it and how to repair."""


class StoreUnavailableError(LibraryError):
    """The store cannot be written or reached: a lost Chroma server, a full disk, a read-only folder."""


class ImportAbortedError(LibraryError):
    """An import stopped part-way; ``report`` says what was stored before it stopped."""

    def __init__(self, message: str, report: object | None = None) -> None:
        super().__init__(message)
        self.report = report


class ImportInterrupted(KeyboardInterrupt):
    """Ctrl-C during an import or embed; the message says what was kept and how to resume."""

    def __init__(self, message: str, report: object | None = None) -> None:
        super().__init__(message)
        self.report = report


class SourceError(CitefinderError):
    """A source of the literature cannot answer (a missing literature library, no network, a service's refusal);
    the message names the source and what to do."""
