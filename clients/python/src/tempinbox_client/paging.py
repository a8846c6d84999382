"""Walking a check listing newest first across its pages (``has_more`` and ``before``)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Set, cast

from .errors import INVALID_RESPONSE, TempInboxError

#: Messages asked for per page: the API's largest ``limit``, so the fewest requests.
PAGE_SIZE = 100

#: Times a walk starts again from the newest message after every message of the page it stood
#: on was deleted (no ``before`` left to continue from). Deletions race a walk only briefly.
MAX_RESTARTS = 3

#: Fetches one page: the check answer for ``before`` (``None``: the newest page).
FetchPage = Callable[[Optional[str]], Dict[str, Any]]


def page_messages(answer: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The ``emails`` of a check answer, checked to be message objects with an ``id``."""
    emails: Any = answer.get("emails")
    if not isinstance(emails, list):
        raise TempInboxError(200, INVALID_RESPONSE, "a check answer without its list of messages")
    messages = cast(List[Any], emails)
    if not all(isinstance(m, dict) and isinstance(cast(Dict[str, Any], m).get("id"), str) for m in messages):
        raise TempInboxError(200, INVALID_RESPONSE, "a check answer with a message that has no id")
    return cast(List[Dict[str, Any]], messages)


def walk(fetch: FetchPage, first: Optional[Dict[str, Any]] = None) -> Iterator[Dict[str, Any]]:
    """Every message of a listing, newest first, each once, across all its pages.

    ``first`` is the newest page when it is already at hand (a held wait's answer). A page's
    ``before`` id deleted meanwhile is ``400 invalid_request``: the walk then continues before
    the page's previous message (what lies between was deleted too), and only when the whole
    page is gone starts over from the newest, skipping what it already gave.
    """
    seen: Set[str] = set()
    restarts = 0
    answer = first if first is not None else fetch(None)
    while True:
        messages = page_messages(answer)
        for message in messages:
            if message["id"] not in seen:
                seen.add(message["id"])
                yield message
        if not answer.get("has_more") or not messages:
            return
        older = _older_page(fetch, [m["id"] for m in messages])
        if older is None:
            restarts += 1
            if restarts > MAX_RESTARTS:
                raise TempInboxError(400, "invalid_request", "the messages being listed kept being deleted; list again")
            older = fetch(None)
        answer = older


def _older_page(fetch: FetchPage, ids: List[str]) -> Optional[Dict[str, Any]]:
    """The page before the oldest of ``ids`` still there, or None when all of them are gone."""
    for before in reversed(ids):
        try:
            return fetch(before)
        except TempInboxError as failure:
            if failure.status != 400 or failure.code != "invalid_request":
                raise
    return None
