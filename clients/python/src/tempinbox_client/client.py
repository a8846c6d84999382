"""The client: one server, one session."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, cast

from .errors import INVALID_RESPONSE, TempInboxError
from .inbox import Inbox
from .transport import DEFAULT_BASE_URL, Transport


class TempInboxClient:
    """Talks to one tempinbox server as one session.

    ``base_url``: default the ``TEMPINBOX_URL`` environment variable, else
    ``http://localhost:8080``. ``session``: a session cookie value to resume (what
    :attr:`session` gave earlier); without one the first :meth:`create_inbox` or
    :meth:`redeem` makes a session.
    """

    def __init__(self, base_url: Optional[str] = None, session: Optional[str] = None) -> None:
        url = base_url or os.environ.get("TEMPINBOX_URL") or DEFAULT_BASE_URL
        self._transport = Transport(url, session)

    @property
    def base_url(self) -> str:
        """The server's base URL, without a trailing slash."""
        return self._transport.base_url

    @property
    def session(self) -> Optional[str]:
        """The session cookie's value (None before the session exists): keep it to resume."""
        return self._transport.session

    def __repr__(self) -> str:
        return f"TempInboxClient({self.base_url!r})"

    def domains(self) -> List[str]:
        """The domains the server gives addresses on; the first is the default."""
        answer = self._transport.call_json("GET", "/api/domains")
        domains: Any = answer.get("domains")
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in cast(List[Any], domains)):
            raise TempInboxError(200, INVALID_RESPONSE, "GET /api/domains: no list of domains")
        return cast(List[str], domains)

    def create_inbox(self, username: Optional[str] = None, domain: Optional[str] = None) -> Inbox:
        """A new inbox (a free session's current one when it has one). ``username`` needs a
        premium session (:meth:`redeem`). Its handle's waits see every message of the inbox."""
        answer = self._transport.call_json("GET", "/api/create", query={"username": username, "domain": domain})
        return _inbox_from(self._transport, answer, "GET /api/create")

    def redeem(self, key: str) -> Dict[str, Any]:
        """Makes the session premium with a license key: ``{premium, premium_until, limits}``."""
        answer = self._transport.call_json("POST", "/api/premium/redeem", body={"key": key})
        return {name: answer.get(name) for name in ("premium", "premium_until", "limits")}

    def inboxes(self) -> List[Inbox]:
        """Handles on the session's active inboxes, newest first (each sees all its messages)."""
        answer = self._transport.call_json("GET", "/api/session")
        listed: Any = answer.get("inboxes")
        if not isinstance(listed, list):
            raise TempInboxError(200, INVALID_RESPONSE, "GET /api/session: no list of inboxes")
        return [_inbox_from(self._transport, item, "GET /api/session") for item in cast(List[Any], listed)]

    def inbox(self, name_or_address: str, after: Optional[str] = None) -> Inbox:
        """A handle on an inbox of the session, by username or address; sends no request.

        Its waits and listings see the messages after message id ``after`` (None: every
        message). A ``+tag`` in the address is dropped, as in delivery.
        """
        local, at, domain = name_or_address.strip().rpartition("@")
        if not at:
            local, domain = domain, ""
        username = local.split("+", 1)[0].lower()
        if not username or (at and not domain):
            raise ValueError(f"not a username or address: {name_or_address!r}")
        return Inbox(self._transport, username, domain.lower() or None, None, after)


def _inbox_from(transport: Transport, item: Any, what: str) -> Inbox:
    """A handle from an inbox object of the API (create or session)."""
    fields = cast(Dict[str, Any], item) if isinstance(item, dict) else {}
    username: Any = fields.get("username")
    domain: Any = fields.get("domain")
    if not isinstance(username, str) or not isinstance(domain, str):
        raise TempInboxError(200, INVALID_RESPONSE, f"{what}: no inbox in the answer")
    return Inbox(transport, username, domain, parse_time(fields.get("expires_at")))


def parse_time(value: Any) -> Optional[datetime]:
    """An API timestamp (``2026-11-21T16:34:05.424Z``) as an aware UTC datetime, else None."""
    if not isinstance(value, str):
        return None
    try:
        # fromisoformat reads a trailing Z only from Python 3.11 on.
        parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)
