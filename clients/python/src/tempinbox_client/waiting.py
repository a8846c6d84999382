"""The wait: the oldest matching message after a handle's starting point that no earlier wait
on the handle returned, found with the server's held check (``wait`` with ``since``)."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Set, Tuple

from .errors import NETWORK_ERROR, TempInboxError, WaitTimeout
from .paging import PAGE_SIZE, page_messages, walk
from .transport import REQUEST_TIMEOUT, Transport, backoff

#: The API's largest ``wait``, in seconds: a longer wait is several held requests.
MAX_HOLD_SECONDS = 60

#: Socket timeout past a held request's ``wait``: the server answers when the hold ends, so an
#: answer this late means the server or the network is gone.
HOLD_GRACE = 10.0

#: Shortest time between two held requests that came back empty (the server answers every hold
#: at once while it shuts down, or when the inbox expires): never poll faster than this.
MIN_HOLD_INTERVAL = 1.0

#: Ids of returned messages one handle remembers: far more than an inbox holds at once
#: (PREMIUM_MAX_MESSAGES, 1,000 by default), about 10 MB. Past it the oldest are forgotten.
MAX_REMEMBERED = 100_000

#: What a wait looks for in a message besides the server-side filters: the value it returns
#: (the message, its code, its link's URL), or None to pass over it.
Accept = Callable[[Dict[str, Any]], Optional[Any]]


class ReturnedIds:
    """The ids a handle's waits returned, safe to share between threads."""

    def __init__(self) -> None:
        self._ids: "OrderedDict[str, None]" = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, message_id: object) -> bool:
        with self._lock:
            return message_id in self._ids

    def claim(self, message_id: str) -> bool:
        """Records ``message_id`` as returned; False when another wait returned it first."""
        with self._lock:
            if message_id in self._ids:
                return False
            self._ids[message_id] = None
            if len(self._ids) > MAX_REMEMBERED:
                self._ids.popitem(last=False)
            return True


class _Pages:
    """Check pages for one wait, retried after 429/503 and network errors while time is left."""

    def __init__(self, transport: Transport, path: str, filters: Mapping[str, str], deadline: float) -> None:
        self._transport = transport
        self._path = path
        self._filters = filters
        self._deadline = deadline

    def get(self, since: Optional[str], before: Optional[str] = None, hold: int = 0) -> Dict[str, Any]:
        query: Dict[str, Optional[str]] = {"since": since, "before": before, "limit": str(PAGE_SIZE)}
        query.update(self._filters)
        if hold > 0:
            query["wait"] = str(hold)
        timeout = hold + HOLD_GRACE if hold > 0 else REQUEST_TIMEOUT
        attempt = 0
        while True:
            try:
                return self._transport.json("GET", self._path, query=query, timeout=timeout)
            except TempInboxError as failure:
                if failure.status in (429, 503):
                    # Never sooner than MIN_HOLD_INTERVAL, even for a Retry-After of 0.
                    delay = max(MIN_HOLD_INTERVAL, failure.retry_after if failure.retry_after is not None else backoff(attempt))
                elif failure.code == NETWORK_ERROR:
                    delay = backoff(attempt)
                else:
                    raise
                if time.monotonic() + delay >= self._deadline:
                    raise
                time.sleep(delay)
                attempt += 1


class _Scan:
    """What one pass over a listing (newest first) found."""

    def __init__(self) -> None:
        self.newest: Optional[str] = None
        self.found: Optional[Tuple[Dict[str, Any], Any]] = None
        self.overlaps = False


def _scan(messages: Iterable[Dict[str, Any]], accept: Accept, returned: ReturnedIds, known: Set[str]) -> _Scan:
    """Walks ``messages`` to the oldest; the oldest accepted one not returned yet wins.

    ``known`` holds the ids this wait saw before; meeting one again means the server ignored
    ``since`` (its message was deleted), and the scan stops so the wait can list again.
    """
    scan = _Scan()
    for message in messages:
        if message["id"] in known:
            scan.overlaps = True
            return scan
        known.add(message["id"])
        if scan.newest is None:
            scan.newest = message["id"]
        if message["id"] not in returned:
            value = accept(message)
            if value is not None:
                scan.found = (message, value)
    return scan


def wait_for(
    transport: Transport,
    path: str,
    after: Optional[str],
    returned: ReturnedIds,
    filters: Mapping[str, str],
    accept: Accept,
    timeout: float,
    wanted: Mapping[str, str],
) -> Tuple[Dict[str, Any], Any]:
    """The oldest accepted message after ``after`` not in ``returned``, and its value.

    First one listing from the starting point (every page of it); then held checks with
    ``since`` the newest message seen, each up to MAX_HOLD_SECONDS, until ``timeout`` seconds
    have passed: then WaitTimeout naming ``wanted``.
    """
    if math.isnan(timeout) or timeout < 0:
        raise ValueError(f"timeout must be a number of seconds >= 0, not {timeout!r}")
    deadline = time.monotonic() + timeout
    pages = _Pages(transport, path, filters, deadline)
    known: Set[str] = set()
    listed = False
    cursor = after
    # Bounded by the deadline: each turn holds a request, pauses MIN_HOLD_INTERVAL, or takes
    # messages that arrived since the last turn (and a relist follows only such a turn).
    while True:
        if not listed:
            known.clear()
            if after is not None:
                # The starting point itself in an answer means that ``since`` was ignored too.
                known.add(after)
            scan = _scan(walk(lambda before: pages.get(after, before)), accept, returned, known)
            listed = True
            cursor = scan.newest or after
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(timeout, wanted)
            since = cursor
            started = time.monotonic()
            first = pages.get(since, hold=min(MAX_HOLD_SECONDS, max(1, math.ceil(remaining))))
            if not page_messages(first):
                pause = min(MIN_HOLD_INTERVAL - (time.monotonic() - started), deadline - time.monotonic())
                if pause > 0:
                    time.sleep(pause)
                continue
            scan = _scan(walk(lambda before: pages.get(since, before), first), accept, returned, known)
            if scan.overlaps:
                listed = False
                continue
            cursor = scan.newest or cursor
        if scan.found is not None:
            message, value = scan.found
            if returned.claim(message["id"]):
                return message, value
            # Another wait on this handle (another thread) returned it meanwhile: list again.
            listed = False
            continue
        if time.monotonic() >= deadline:
            raise WaitTimeout(timeout, wanted)
