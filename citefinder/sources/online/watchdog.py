"""The total deadline of one call, held from outside the reading thread: a watchdog that closes the connection.

A per-read time-out bounds each wait for the next bytes, not the call: a server that sends its status line and
headers one byte a second (or a TLS handshake as slowly) keeps ``requests`` reading for as long as it drips. So
each call of :class:`~citefinder.sources.online.http.Http` runs under a :class:`Watchdog`: a timer that, when the
call's deadline passes, shuts the connection's socket down; the blocked read then returns at once and the call
fails with the deadline's message (the caller asks :attr:`Watchdog.fired`).

The connection in use is known through the session's adapter (:func:`watched_adapter`): its connections tell the
watchdog of the calling thread that they are connecting or sending a request (urllib3's public ``ConnectionCls``
of a pool and ``pool_classes_by_scheme`` of its pool manager). urllib3 2.6 or later is required (``read1``, and a
``read1`` that decodes at most what it was asked for); :func:`need_urllib3` says so in one line.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Any

from citefinder.errors import SourceError

URLLIB3_AT_LEAST = (2, 6)
_CURRENT = threading.local()  # the watchdog of the call this thread is making


class Watchdog:
    """Within ``with Watchdog(seconds):``, the connection this thread opens or sends on is shut down once
    ``seconds`` have passed (:attr:`fired` then says so)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = max(0.0, seconds)
        self.fired = False
        self._conn: Any = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(self.seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> Watchdog:
        _CURRENT.watch = self
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._timer.cancel()
        _CURRENT.watch = None
        with self._lock:
            self._conn = None

    def watch(self, conn: Any) -> None:
        """``conn`` is the connection of this call (closed at once if the deadline has already passed)."""
        with self._lock:
            self._conn = conn
            late = self.fired
        if late:
            _shut(conn)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            conn = self._conn
        if conn is not None:
            _shut(conn)


def _shut(conn: Any) -> None:
    """Shut the connection's socket down (a read blocked on it in another thread returns at once)."""
    sock = getattr(conn, "sock", None)
    if sock is None:
        return
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's: under TLS too, without its state
    except OSError:
        pass  # already closed


def _tell(conn: Any) -> None:
    watch = getattr(_CURRENT, "watch", None)
    if watch is not None:
        watch.watch(conn)


def need_urllib3() -> None:
    """Nothing if the installed urllib3 streams as the transport reads (2.6 or later); else one line that says
    what to install (not the service's fault)."""
    import urllib3

    version = getattr(urllib3, "__version__", "0")
    try:
        found = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        found = (0, 0)
    if found < URLLIB3_AT_LEAST:
        raise SourceError(f"The online sources need urllib3 {'.'.join(map(str, URLLIB3_AT_LEAST))} or later "
                          f"(installed: {version}): pip install 'citefinder[online]' (or 'urllib3>=2.6').")


def _watched(connection: Any) -> Any:
    """A subclass of the urllib3 ``connection`` class that tells the calling thread's :class:`Watchdog` about
    itself as it connects and as it sends."""

    class Watched(connection):
        def connect(self) -> None:
            _tell(self)
            super().connect()

        def request(self, *args: Any, **kwargs: Any) -> None:
            _tell(self)
            super().request(*args, **kwargs)

    Watched.__name__ = Watched.__qualname__ = f"Watched{connection.__name__}"
    return Watched


def watched_adapter() -> Any:
    """A ``requests`` transport adapter whose connections tell the calling thread's :class:`Watchdog` about
    themselves as they connect and send."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class WatchedPool(HTTPConnectionPool):
        ConnectionCls = _watched(HTTPConnection)

    class WatchedTLSPool(HTTPSConnectionPool):
        ConnectionCls = _watched(HTTPSConnection)

    class WatchedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": WatchedPool, "https": WatchedTLSPool}

    return WatchedAdapter()
