"""The two exceptions the client raises: every failure is a TempInboxError."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

#: ``code`` when the server could not be reached (``status`` is then 0).
NETWORK_ERROR = "network_error"
#: ``code`` when the server answered something that is not the API's JSON (wrong URL, proxy page).
INVALID_RESPONSE = "invalid_response"
#: ``code`` of :class:`WaitTimeout`.
TIMEOUT = "timeout"


class TempInboxError(Exception):
    """A failed call.

    ``status`` is the HTTP status (0 when no HTTP answer came), ``code`` the API's error code
    (``inbox_not_found``, ``rate_limited``…; ``network_error`` when the server could not be
    reached; ``timeout`` for :class:`WaitTimeout`) and ``retry_after`` the seconds the server
    asked to wait (``Retry-After`` of a 429 or 503), else ``None``.
    """

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after

    def __reduce__(self) -> Tuple[Any, ...]:
        # Exceptions cross process boundaries (multiprocessing, pytest-xdist) by pickling, which
        # calls the class with self.args: keep every field, not only the message.
        return (type(self), (self.status, self.code, self.message, self.retry_after))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r}, retry_after={self.retry_after!r})"


class WaitTimeout(TempInboxError):
    """A wait found no message in time. ``code`` is ``'timeout'``, ``status`` 0.

    ``timeout`` is the wait's timeout in seconds and ``filters`` what it waited for
    (``to``, ``from``, ``subject``, and ``code`` or ``link`` for the code and link waits); the
    message names them.
    """

    def __init__(self, timeout: float, filters: Mapping[str, str]) -> None:
        self.timeout = timeout
        self.filters: Dict[str, str] = dict(filters)
        super().__init__(0, TIMEOUT, f"timed out after {timeout:g} s waiting for a message{describe_filters(self.filters)}")

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.timeout, self.filters))


def describe_filters(filters: Mapping[str, str]) -> str:
    """`` to 'a+x@' from 'shop' with subject 'Code' with a code`` (``''`` for no filters)."""
    parts: List[str] = []
    for key, label in (("to", "to"), ("from", "from"), ("subject", "with subject")):
        if key in filters:
            parts.append(f"{label} {filters[key]!r}")
    if "code" in filters:
        parts.append("with a code")
    if "link" in filters:
        parts.append("with a link" if filters["link"] == "" else f"with a link matching {filters['link']!r}")
    return "".join(" " + part for part in parts)
