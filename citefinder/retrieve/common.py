"""What the retriever agents share: run the query and its variants, catch failures, trace it all."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from citefinder.types import Hit, Query, StageTrace

log = logging.getLogger(__name__)

SearchFn = Callable[[str, int], list[Hit]]
Rankings = dict[str, tuple[Hit, ...]]


def run_retriever(name: str, search: SearchFn, query: Query, k: int) -> tuple[Rankings, StageTrace]:
    """Retrieve ``query.text`` and each of ``query.variants`` with ``search(text, k)``.

    Rankings are keyed ``name`` for the main query and ``name#1``, ``name#2``... for the
    variants (each is fused later). A failure is caught and recorded: status "error" when
    every query failed (empty rankings), "ok" with the failures in the message otherwise.
    Empty queries are not sent; with nothing to send the status is "skipped".
    """
    start = time.perf_counter()
    texts = [(name, query.text)] + [(f"{name}#{i}", v) for i, v in enumerate(query.variants, 1)]
    texts = [(key, t) for key, t in texts if t.strip()]
    rankings: Rankings = {}
    errors: dict[str, str] = {}
    for key, text in texts:
        try:
            rankings[key] = tuple(search(text, k))
        except Exception as e:  # noqa: BLE001 - a retriever failure is recorded, the pipeline decides
            log.warning("%s retrieval failed for %r: %s", name, text[:80], e)
            errors[key] = f"{type(e).__name__}: {e}"

    if not texts:
        status, message = "skipped", "skipped: empty query"
    elif not rankings:
        status, message = "error", "; ".join(f"{key}: {msg}" for key, msg in errors.items())
    else:
        status = "ok"
        n_hits = sum(len(h) for h in rankings.values())
        message = f"{n_hits} hits from {len(rankings)} quer{'y' if len(rankings) == 1 else 'ies'}"
        if errors:
            message += f"; {len(errors)} failed: " + "; ".join(f"{key}: {msg}" for key, msg in errors.items())
    trace = StageTrace(
        agent=name,
        status=status,  # type: ignore[arg-type]
        message=message,
        inputs={"text": query.text, "variants": list(query.variants)},
        params={"k": k},
        top=rankings.get(name, ()),
        elapsed_s=time.perf_counter() - start,
        details={
            "variants": {key: [h.to_dict() for h in hits] for key, hits in rankings.items() if key != name},
            "errors": errors,
        },
    )
    return rankings, trace
