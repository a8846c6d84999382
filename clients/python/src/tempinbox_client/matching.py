"""What the code and link waits look for in a message (the server finds codes and links)."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Union, cast

#: ``match`` of wait_for_link: a case-insensitive substring, or a compiled pattern searched for.
LinkMatch = Union[str, re.Pattern[str], None]


def first_code(message: Dict[str, Any]) -> Optional[str]:
    """The message's most likely one-time code (``codes[0]``), or None."""
    codes: Any = message.get("codes")
    if isinstance(codes, list) and codes:
        first: Any = cast(List[Any], codes)[0]
        if isinstance(first, str):
            return first
    return None


def first_link(message: Dict[str, Any], match: LinkMatch) -> Optional[str]:
    """The URL of the message's first link whose ``url`` or ``text`` matches, or None."""
    links: Any = message.get("links")
    if not isinstance(links, list):
        return None
    for item in cast(List[Any], links):
        if not isinstance(item, dict):
            continue
        link = cast(Dict[str, Any], item)
        url: Any = link.get("url")
        text: Any = link.get("text")
        if not isinstance(url, str):
            continue
        if not isinstance(text, str):
            text = ""
        if link_matches(url, text, match):
            return url
    return None


def link_matches(url: str, text: str, match: LinkMatch) -> bool:
    """Whether a link fits ``match`` (None: every link)."""
    if match is None:
        return True
    if isinstance(match, str):
        needle = match.casefold()
        return needle in url.casefold() or needle in text.casefold()
    return match.search(url) is not None or match.search(text) is not None


def check_link_match(match: object) -> LinkMatch:
    """``match`` as given, or TypeError when it is neither a string nor a compiled pattern."""
    if match is None or isinstance(match, (str, re.Pattern)):
        return match  # type: ignore[return-value]
    raise TypeError(f"match must be a str or a compiled re.Pattern, not {type(match).__name__}")
