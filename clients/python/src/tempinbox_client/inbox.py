"""A handle on one inbox: its address, its waits and its messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, Iterator, Optional, Tuple

from .matching import LinkMatch, check_link_match, first_code, first_link
from .paging import PAGE_SIZE, walk
from .transport import MAX_RAW_BYTES, Transport, path_part
from .waiting import Accept, ReturnedIds, wait_for

#: A wait's timeout when none is given, in seconds.
DEFAULT_TIMEOUT = 60.0


class Inbox:
    """A handle on an inbox of the client's session. Making one sends no request.

    Its waits return each message at most once, oldest first: see :meth:`wait_for_message`.
    A handle may be shared between threads.
    """

    def __init__(
        self,
        transport: Transport,
        username: str,
        domain: Optional[str] = None,
        expires_at: Optional[datetime] = None,
        after: Optional[str] = None,
    ) -> None:
        self._transport = transport
        self._username = username
        self._domain = domain
        self._expires_at = expires_at
        self._after = after
        self._returned = ReturnedIds()

    @property
    def username(self) -> str:
        """The local part, lowercase."""
        return self._username

    @property
    def domain(self) -> Optional[str]:
        """The domain; None for a handle made from a bare username."""
        return self._domain

    @property
    def address(self) -> str:
        """``username@domain`` (the bare username when the domain is not known)."""
        return self._username if self._domain is None else f"{self._username}@{self._domain}"

    @property
    def expires_at(self) -> Optional[datetime]:
        """When the inbox expires (UTC); None for a handle made from a name."""
        return self._expires_at

    @property
    def after(self) -> Optional[str]:
        """The starting point: waits and listings see messages after this message id (None: all)."""
        return self._after

    def __repr__(self) -> str:
        return f"Inbox({self.address!r})"

    def wait_for_message(
        self,
        to: Optional[str] = None,
        from_: Optional[str] = None,
        subject: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Dict[str, Any]:
        """The oldest message that matches, arrived after the starting point, and that no earlier
        wait on this handle returned; waits for one up to ``timeout`` seconds.

        ``to`` (the envelope recipient, ``+tag`` kept), ``from_`` and ``subject`` are
        case-insensitive substrings, all of which must match. Raises WaitTimeout when none
        came in time. The message is the API's message object (a dict).
        """
        message, _ = self._wait(to, from_, subject, timeout, lambda m: m, {})
        return message

    def wait_for_code(
        self,
        to: Optional[str] = None,
        from_: Optional[str] = None,
        subject: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Tuple[str, Dict[str, Any]]:
        """As :meth:`wait_for_message`, for a message with a one-time code: ``(code, message)``,
        ``code`` being the most likely one (``message['codes'][0]``)."""
        message, code = self._wait(to, from_, subject, timeout, first_code, {"code": ""})
        return code, message

    def wait_for_link(
        self,
        match: LinkMatch = None,
        to: Optional[str] = None,
        from_: Optional[str] = None,
        subject: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Tuple[str, Dict[str, Any]]:
        """As :meth:`wait_for_message`, for a message with a link: ``(url, message)``.

        ``match``: a string that the link's URL or text contains (case-insensitive), or a
        compiled pattern searched for in either; None takes the message's first link.
        """
        pattern = check_link_match(match)
        label = "" if pattern is None else pattern if isinstance(pattern, str) else pattern.pattern
        message, url = self._wait(to, from_, subject, timeout, lambda m: first_link(m, pattern), {"link": label})
        return url, message

    def messages(self, to: Optional[str] = None, from_: Optional[str] = None, subject: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """Every message after the starting point that matches, newest first, page by page
        (bodies in a listing are cut at 256 KiB; :meth:`message` has the whole text)."""
        filters = _filters(to, from_, subject)

        def page(before: Optional[str]) -> Dict[str, Any]:
            query: Dict[str, Optional[str]] = {"since": self._after, "before": before, "limit": str(PAGE_SIZE), **filters}
            return self._transport.call_json("GET", self._path("check"), query=query)

        return walk(page)

    def message(self, message_id: str) -> Dict[str, Any]:
        """The whole message, with its headers (``GET /api/messages/<id>``)."""
        detail = self._transport.call_json("GET", f"/api/messages/{path_part(message_id)}")
        detail.pop("success", None)
        return detail

    def raw(self, message_id: str) -> bytes:
        """The message as received, byte for byte, after the server's trace headers."""
        return self._transport.call("GET", f"/api/messages/{path_part(message_id)}/raw", max_bytes=MAX_RAW_BYTES).body

    def set_webhook(self, url: str, secret: Optional[str] = None) -> Dict[str, Any]:
        """Sets the inbox's webhook (Premium), replacing the one it had: each message stored from
        now on is POSTed to ``url``, signed with ``secret`` (16 to 128 characters; the server
        makes one when it is None). Returns ``{"url", "secret", "created_at"}``, the one answer
        that shows the secret."""
        body: Dict[str, Any] = {"url": url} if secret is None else {"url": url, "secret": secret}
        webhook = self._transport.call_json("PUT", self._path("inbox") + "/webhook", body=body)["webhook"]
        return {"url": webhook["url"], "secret": webhook["secret"], "created_at": webhook["created_at"]}

    def webhook(self) -> Dict[str, Any]:
        """The inbox's webhook and its last 20 delivery attempts, newest first:
        ``{"webhook": {"url", "created_at"} or None, "deliveries": [{"id", "message_id",
        "attempt", "status", "error", "at"}, ...]}``."""
        answer = self._transport.call_json("GET", self._path("inbox") + "/webhook")
        return {"webhook": answer["webhook"], "deliveries": answer["deliveries"]}

    def delete_webhook(self) -> None:
        """Removes the inbox's webhook and drops the deliveries it still owed."""
        self._transport.call_json("DELETE", self._path("inbox") + "/webhook")

    def delete(self) -> None:
        """Discards the inbox and all its messages."""
        self._transport.call_json("DELETE", self._path("inbox"))

    def _path(self, route: str) -> str:
        return f"/api/{route}/{path_part(self.address)}"

    def _wait(
        self,
        to: Optional[str],
        from_: Optional[str],
        subject: Optional[str],
        timeout: float,
        accept: Accept,
        extra: Dict[str, str],
    ) -> Tuple[Dict[str, Any], Any]:
        filters = _filters(to, from_, subject)
        wanted = {**filters, **extra}
        return wait_for(self._transport, self._path("check"), self._after, self._returned, filters, accept, timeout, wanted)


def _filters(to: Optional[str], from_: Optional[str], subject: Optional[str]) -> Dict[str, str]:
    """The check's filter parameters that are set."""
    given = {"to": to, "from": from_, "subject": subject}
    return {key: value for key, value in given.items() if value is not None}
