"""The one way CiteFinder talks to an online source: cached, paced, retried, bounded.

Every call of every service goes through :meth:`Http.fetch`:

- **cached**: the answer is looked up in :class:`~citefinder.sources.online.cache.AnswerCache` first (a second
  run sends nothing) and stored as soon as it arrives (a run that stops part-way resumes);
- **paced**: calls to one service are spaced by its documented interval, across threads (:func:`wait_turn`);
- **retried**: 429 and 5xx are asked again after what ``Retry-After`` says (seconds or an HTTP date; a wait
  longer than ``online_max_wait_s`` gives up instead), else after a doubling back-off; a time-out is retried;
- **bounded**: every call has a total deadline (``online_deadline_s``: retries, waits, a status line, headers or body
  sent one byte a second included: a watchdog closes the connection, :mod:`.watchdog`) and a cap on the bytes it reads
  (``online_max_bytes``); a Retry-After longer than what is left of the deadline is not waited out; a redirect is not
  followed (the disclosure names one host); a refused connection (no network) fails at once; each with one line that
  names the source, never a traceback or a hang;
- **quiet about secrets**: the contact address and keys travel in headers, which are neither part of the cache
  key nor logged; the request line logged and cached holds only what the user chose to send.

The services' own clients send on their own terms (a fixed host, no time-out, retries that ignore
``Retry-After``, a fresh HTTP client per call with no hook for a cache), so the services' documented HTTP APIs
are called here and the clients build the queries and read the answers (see each service's module).
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from citefinder.errors import SourceError
from citefinder.sources.online.cache import AnswerCache
from citefinder.sources.online.watchdog import Watchdog, need_urllib3, watched_adapter

log = logging.getLogger(__name__)

DOWN_S = 60.0  # a source found unreachable is not asked again for this long (a fill asks once, not per slot)
USER_AGENT = "CiteFinder/0.1 (https://github.com/citefinder; finds the papers behind a draft's citations)"


class SourceUnreachable(SourceError):
    """The source cannot be asked now (no network, time-outs, a refusal, a wait too long): the run stops asking it;
    what it answered so far is cached, so the next run resumes."""


class BadAnswer(SourceError):
    """One call's answer cannot be used (malformed JSON or XML, a request the service rejected); the call's
    questions stay unanswered and are asked again next run."""


@dataclass(frozen=True)
class Call:
    """One request: ``path`` (with its query) relative to the service's base URL; ``what`` names it in
    messages ("3 DOIs", "a title", "a search")."""

    method: str
    path: str
    body: bytes = b""
    what: str = ""


@dataclass(frozen=True)
class Answer:
    status: int  # 200, or 404: the service has no such work
    body: bytes
    cached: bool


@dataclass(frozen=True)
class CallEvent:
    """What the per-call hook hears after each call (for a progress bar or a count): the service, the call,
    whether the cache answered, the final status (None: failed), seconds spent (waits included), retries
    (-1: the call failed)."""

    service: str
    what: str
    cached: bool
    status: int | None
    seconds: float
    retries: int


@dataclass
class Counts:
    """Calls of one source in this session: ``sent`` over the network, ``cached`` answered from the cache."""

    sent: int = 0
    cached: int = 0
    retried: int = 0
    failed: int = 0
    waited_s: float = 0.0


@dataclass(frozen=True)
class Polite:
    """How a service is asked (from the settings ``online_*``)."""

    timeout_s: float = 20.0
    retries: int = 3
    backoff_s: float = 2.0
    max_wait_s: float = 120.0
    interval_s: float = 1.0
    deadline_s: float = 60.0  # one call, retries and waits included
    max_bytes: int = 32 * 2**20  # the most one answer may hold (decoded)


# Calls to one service are spaced across the whole process (every Source object, every browser session):
# politeness is owed by the machine, not by one object.
_TURNS: dict[str, float] = {}
_TURNS_LOCK = threading.Lock()


def wait_turn(service: str, interval_s: float) -> float:
    """Sleep until ``service`` may be called again; the seconds waited."""
    if interval_s <= 0:
        return 0.0
    with _TURNS_LOCK:
        now = time.monotonic()
        at = max(now, _TURNS.get(service, float("-inf")) + interval_s)
        _TURNS[service] = at
    if at > now:
        time.sleep(at - now)
    return max(0.0, at - now)


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date, RFC 9110 10.2.3), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


Check = Callable[[bytes], bool]
Hook = Callable[[CallEvent], None]


@dataclass
class Http:
    """Calls to one service at ``base_url``. ``headers`` (the contact address, a key) are sent with each call and
    never cached or logged; ``valid(body)`` tells a usable 200 answer from a malformed one."""

    service: str
    base_url: str
    polite: Polite
    cache: AnswerCache | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    valid: Check = lambda body: True
    on_call: Hook | None = None
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        self.host = urlsplit(self.base_url).netloc or self.base_url
        self._session: Any = None
        self._lock = threading.Lock()
        self._down: tuple[float, SourceUnreachable] | None = None
        self._asked = threading.local()  # the cache keys one operation read or stored (see recording())

    def key(self, call: Call) -> str:
        """The cache key: the request as sent, without its headers."""
        body = call.body.decode("utf-8", "replace")
        return f"{call.method} {self.base_url}{call.path}" + (f"\n{body}" if body else "")

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Within: the answers this thread reads or stores are noted, so that :meth:`forget_recorded` can drop
        them from the cache when the service's reader finds them unusable (they would be used again next run)."""
        self._asked.keys = []
        try:
            yield
        finally:
            self._asked.keys = None

    def forget_recorded(self) -> None:
        keys = getattr(self._asked, "keys", None) or []
        if self.cache is not None and keys:
            self.cache.delete(self.service, keys)

    def fetch(self, call: Call) -> Answer:
        """The answer to ``call``: from the cache, else from the service (see the module docstring)."""
        t0 = time.perf_counter()
        key = self.key(call)
        if getattr(self._asked, "keys", None) is not None:
            self._asked.keys.append(key)
        if self.cache is not None and (hit := self.cache.get(self.service, key)) is not None:
            self.counts.cached += 1
            self._tell(call, True, hit[0], t0, 0)
            return Answer(hit[0], hit[1], True)
        down = self._down
        if down is not None and time.monotonic() < down[0]:
            self.counts.failed += 1  # unreachable a moment ago: said once, not asked again for every slot
            self._tell(call, False, None, t0, -1)
            raise SourceUnreachable(str(down[1]))
        try:
            status, body = self._ask(call, t0)
        except SourceError as e:
            self.counts.failed += 1
            if isinstance(e, SourceUnreachable):
                self._down = (time.monotonic() + DOWN_S, e)
            self._tell(call, False, None, t0, -1)
            raise
        if self.cache is not None:
            self.cache.put(self.service, key, status, body)
        return Answer(status, body, False)

    def _ask(self, call: Call, t0: float) -> tuple[int, bytes]:
        import requests

        url = self.base_url + call.path
        last = ""
        deadline = time.monotonic() + self.polite.deadline_s
        tries = 0
        for attempt in range(self.polite.retries + 1):
            self.counts.waited_s += wait_turn(self.service, min(self.polite.interval_s, self._left(deadline)))
            left = self._left(deadline)
            if left <= 0:
                break
            log.debug("%s: %s %s (%s)", self.service, call.method, url, call.what or "call")
            self.counts.sent += 1
            tries += 1
            watchdog = Watchdog(left)  # the deadline holds while the status line and headers arrive too
            try:
                with watchdog, self._http().request(
                        call.method, url, data=call.body or None, timeout=min(self.polite.timeout_s, left),
                        stream=True, allow_redirects=False,
                        headers={"User-Agent": USER_AGENT, **self.headers,
                                 **({"Content-Type": "application/json"} if call.body else {})}) as response:
                    status = response.status_code
                    body = self._body(response, call, deadline) if status == 200 else b""
                    if status != 200 and status < 400:
                        raise SourceUnreachable(
                            f"{self.service}: {self.host} answered with a redirect (HTTP {status}) to "
                            f"{_where(response.headers.get('Location'))}, not followed: what is sent goes to "
                            f"{self.host} only; set {self.service}_url to the service's address.")
                    if status >= 400:
                        text = _read1(response, 200)  # one read: a drip waits no longer
                if watchdog.fired:  # the connection was closed under a read: what came is not the answer
                    raise self._late(call)
            except requests.Timeout:
                if watchdog.fired:
                    raise self._late(call) from None
                last = f"no answer within {min(self.polite.timeout_s, left):g} s"
                wait = self._backoff(attempt)
            except requests.RequestException as e:
                if watchdog.fired:  # the watchdog closed the connection: the deadline's line, not its symptom
                    raise self._late(call) from None
                raise SourceUnreachable(
                    f"{self.service}: cannot reach {self.host} ({_reason(e)}). Check the network, or leave the "
                    "source off; answers received so far are cached and the next run resumes.") from None
            else:
                if status == 200:
                    if not self.valid(body):
                        raise BadAnswer(f"{self.service}: a malformed answer to {call.what or 'a call'} "
                                        f"({len(body)} bytes), not used")
                    self._tell(call, False, status, t0, attempt)
                    return status, body
                if status == 404:
                    self._tell(call, False, status, t0, attempt)
                    return status, b""
                if status in (401, 403):
                    raise SourceUnreachable(f"{self.service}: {self.host} refused the request (HTTP {status}); "
                                            "check the API key or the contact address in the settings.")
                if status != 429 and status < 500:
                    raise BadAnswer(f"{self.service}: {self.host} rejected {call.what or 'a call'} "
                                    f"(HTTP {status}: {text.decode('utf-8', 'replace')!r})")
                last = f"HTTP {status}"
                asked = retry_after(response.headers.get("Retry-After"))
                longest = min(self.polite.max_wait_s, self._left(deadline))
                if asked is not None and asked > longest:
                    raise SourceUnreachable(
                        f"{self.service}: {self.host} asks to wait {asked:.0f} s (HTTP {status}), longer than "
                        f"this run waits ({longest:.0f} s: online_max_wait_s, online_deadline_s); try again later, "
                        "the answers so far are cached.")
                wait = asked if asked is not None else self._backoff(attempt)
            if attempt < self.polite.retries:
                wait = min(wait, self._left(deadline))
                if wait <= 0 and self._left(deadline) <= 0:
                    break
                self.counts.retried += 1
                log.info("%s: %s; asking again in %.1f s", self.service, last, wait)
                self.counts.waited_s += wait
                time.sleep(wait)
        raise SourceUnreachable(f"{self.service}: {self.host} did not answer ({last or 'no time left'}, "
                                f"{tries} tr{'y' if tries == 1 else 'ies'} in {self.polite.deadline_s:g} s at most: "
                                "online_retries, online_deadline_s); try again later, the answers so far are cached.")

    def _body(self, response: Any, call: Call, deadline: float) -> bytes:
        """The body of a 200 answer, read as it arrives until the deadline or the cap (either ends the call)."""
        cap = self.polite.max_bytes
        size = response.headers.get("Content-Length", "")
        if size.isdigit() and int(size) > cap:
            raise BadAnswer(f"{self.service}: an answer to {call.what or 'a call'} of {_mb(int(size))}, more than "
                            f"online_max_bytes ({_mb(cap)}), not read")
        parts: list[bytes] = []
        got = 0
        while chunk := _read1(response, 65536):
            got += len(chunk)
            if got > cap:
                raise BadAnswer(f"{self.service}: an answer to {call.what or 'a call'} longer than "
                                f"online_max_bytes ({_mb(cap)}), not read further")
            parts.append(chunk)
            if time.monotonic() > deadline:
                raise SourceUnreachable(
                    f"{self.service}: {self.host} sent {got} bytes of an answer in {self.polite.deadline_s:g} s "
                    "(online_deadline_s), too slow; try again later, the answers so far are cached.")
        return b"".join(parts)

    def _late(self, call: Call) -> SourceUnreachable:
        return SourceUnreachable(
            f"{self.service}: {self.host} did not finish answering {call.what or 'a call'} within "
            f"{self.polite.deadline_s:g} s (online_deadline_s), too slow; the connection was closed. Try again "
            "later, the answers so far are cached.")

    @staticmethod
    def _left(deadline: float) -> float:
        return max(0.0, deadline - time.monotonic())

    def _backoff(self, attempt: int) -> float:
        return self.polite.backoff_s * (2 ** attempt)

    def _http(self) -> Any:
        import requests

        with self._lock:
            if self._session is None:
                self._session = requests.Session()
                adapter = watched_adapter()  # its connections are closed by the call's watchdog at the deadline
                self._session.mount("http://", adapter)
                self._session.mount("https://", adapter)
            return self._session

    def _tell(self, call: Call, cached: bool, status: int | None, t0: float, retries: int) -> None:
        if self.on_call is not None:
            self.on_call(CallEvent(self.service, call.what, cached, status, time.perf_counter() - t0, retries))


def _reason(error: BaseException) -> str:
    """The cause of a connection error in a few words ("[Errno 111] Connection refused"), without the URL."""
    found = re.search(r"\[Errno -?\d+\][^'\")\]]*", str(error))
    return found.group(0).strip() if found else type(error).__name__


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


def _where(location: str | None) -> str:
    """Where a redirect points, without its query (which may hold what the call sent)."""
    if not location:
        return "nowhere said"
    parts = urlsplit(location)
    return f"{parts.scheme}://{parts.netloc}{parts.path}" if parts.netloc else parts.path


def _read1(response: Any, size: int) -> bytes:
    """At most ``size`` bytes of the body, from one read of the socket (a body sent one byte at a time is seen byte
    by byte, so the deadline is checked between them); urllib3's errors as requests' (the callers catch those)."""
    import requests
    import urllib3

    read1 = getattr(response.raw, "read1", None)
    if read1 is None:  # urllib3 older than 2.6: said as what to install, not as the service's fault
        need_urllib3()
        raise SourceError("The online sources need urllib3 2.6 or later: pip install 'citefinder[online]'.")
    try:
        return bytes(read1(size, decode_content=True) or b"")
    except urllib3.exceptions.ReadTimeoutError as e:
        raise requests.exceptions.ReadTimeout(str(e)) from None
    except urllib3.exceptions.HTTPError as e:
        raise requests.exceptions.ConnectionError(str(e)) from None
