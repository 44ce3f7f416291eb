"""Is an online source reachable, and does it answer as the service does? One small call, before it is accepted.

The Settings page's *Test* (and its *Apply* of a service) asks this before the setting ``literature`` names a
service: a choice that cannot answer is found out now, not at the next fill. The call is one search for a fixed
word (:data:`PROBE`: nothing of the user's), sent past the answer cache (a cached answer says nothing about the
service now), without retries and under a short deadline; the outcome is a :class:`Reach`:

- reachable: the service answered in the shape it documents (a search may find nothing: still an answer);
- not reachable: no connection, a refusal, a time-out, a redirect (the line :mod:`.online.http` gives);
- wrong shape: something answered, but not as the service does (an HTML page, another API at that address).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from citefinder.errors import SourceError

log = logging.getLogger(__name__)

PROBE = "attention"  # the one word the check searches for
DEADLINE_S = 15.0  # the longest the check waits (less if online_deadline_s is shorter)


@dataclass(frozen=True)
class Reach:
    """The outcome of :func:`check_reachable`: ``kind`` (reachable, unreachable, wrong-shape), one line to show,
    the seconds it took."""

    kind: Literal["reachable", "unreachable", "wrong-shape"]
    message: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.kind == "reachable"


def probe_text(service: str) -> str:
    """What the check sends, said where it is offered."""
    return f"one search for the word {PROBE!r} to {service}, nothing of yours"


def check_reachable(spec: str, settings: Any) -> Reach:
    """One search for :data:`PROBE` at the online service ``spec`` names, past the cache, no retries, a short
    deadline. A name that is not a service raises :class:`SourceError` (a folder is checked by
    :func:`citefinder.sources.registry.check_literature`); so does a missing client."""
    from citefinder.sources.online.http import BadAnswer, SourceUnreachable
    from citefinder.sources.registry import open_source, resolve

    named = resolve(spec)
    if named.kind != "service":
        raise SourceError(f"{spec} is not an online source: nothing to reach.")
    probe_settings = settings.with_overrides(sources_cache_days=0, online_retries=0,
                                             online_deadline_s=min(DEADLINE_S, settings.online_deadline_s),
                                             online_timeout_s=min(DEADLINE_S, settings.online_timeout_s))
    source = open_source(spec, probe_settings)
    host = getattr(getattr(source, "http", None), "host", named.service)
    start = time.monotonic()
    try:
        found = source.search(PROBE, 1)
    except BadAnswer as e:
        return Reach("wrong-shape", f"{host} answered, but not as {named.service} does: {e}. Check "
                                    f"{named.service}_url.", time.monotonic() - start)
    except SourceUnreachable as e:
        return Reach("unreachable", f"{named.service} cannot be reached now: {e}", time.monotonic() - start)
    seconds = time.monotonic() - start
    log.info("%s answered the reachability check in %.1f s (%d works)", named.service, seconds, len(found))
    return Reach("reachable", f"{named.service} answered at {host} in {seconds:.1f} s.", seconds)
