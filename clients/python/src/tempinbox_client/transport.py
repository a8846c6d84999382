"""HTTP for the client: urllib, the session cookie kept by hand, the API's errors as exceptions."""

from __future__ import annotations

import email.message
import email.utils
import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, cast

from .errors import INVALID_RESPONSE, NETWORK_ERROR, TempInboxError
from .version import __version__

#: The server's session cookie (HttpOnly, so only a program like this one reads it).
SESSION_COOKIE = "tempinbox_session"

#: Where the client talks to when neither ``base_url`` nor ``TEMPINBOX_URL`` says.
DEFAULT_BASE_URL = "http://localhost:8080"

#: Socket timeout of a request that is not held, in seconds: every such answer is one bounded
#: database read on the server, so one that idles this long is a network or server failure.
REQUEST_TIMEOUT = 30.0

#: Largest JSON answer read, in bytes. A check page is at most 8 MiB; a message's detail holds
#: at most 2 Mi characters of text and of HTML (up to 6 bytes each once JSON-escaped), its
#: headers and at most 1,000 attachments. Past this the answer is not the API's.
MAX_JSON_BYTES = 64 * 1024 * 1024

#: Largest raw message read, in bytes: the server's largest MAX_MESSAGE_BYTES (1 GiB) plus the
#: trace and authentication headers it adds on receipt.
MAX_RAW_BYTES = 1024 * 1024 * 1024 + 64 * 1024

#: Largest error body read: the API's error JSON is one short sentence.
MAX_ERROR_BYTES = 64 * 1024

#: Bytes read from the socket at a time: a read asks for a buffer of the size it may return.
READ_CHUNK_BYTES = 1024 * 1024

#: Retries of a call that is not a wait, after a 429 or 503 (the API's documented contract).
CALL_RETRIES = 3

#: Longest Retry-After a call that is not a wait sleeps through, in seconds. The creation and
#: redeem budgets reset after up to an hour; a test is better told at once than frozen for it.
MAX_CALL_RETRY_DELAY = 30.0

#: Backoff when a 429/503 carries no Retry-After, or after a network error: 1, 2, 4, 8, 8… s.
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 8.0

_RETRYABLE_STATUSES = (429, 503)


def backoff(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based) when the server named none."""
    return min(BACKOFF_MAX, BACKOFF_FIRST * (2 ** min(attempt, 8)))


class Response:
    """One HTTP answer: status, headers and body bytes."""

    def __init__(self, status: int, headers: email.message.Message, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Transport:
    """Sends requests to one server with one session; not tied to a thread.

    Redirects are followed as urllib does, but the session cookie goes only to the base URL's
    own requests (an unredirected header), never to a host a redirect names.
    """

    def __init__(self, base_url: str, session: Optional[str]) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.session: Optional[str] = session or None
        self._opener = urllib.request.build_opener()
        self._user_agent = f"tempinbox-client-python/{__version__}"

    def send(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Optional[str]]] = None,
        body: Optional[Dict[str, Any]] = None,
        timeout: float = REQUEST_TIMEOUT,
        max_bytes: int = MAX_JSON_BYTES,
    ) -> Response:
        """One request, no retry. Raises TempInboxError for a non-2xx answer or no answer."""
        url = self.base_url + path
        params = {k: v for k, v in (query or {}).items() if v is not None}
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", self._user_agent)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.session is not None:
            request.add_unredirected_header("Cookie", f"{SESSION_COOKIE}={self.session}")
        try:
            with self._opener.open(request, timeout=timeout) as answer:
                self._keep_cookie(answer.headers)
                payload = _read_at_most(answer, max_bytes)
                if payload is None:
                    raise TempInboxError(answer.status, INVALID_RESPONSE, f"{method} {path}: the answer is larger than {max_bytes} bytes")
                return Response(answer.status, answer.headers, payload)
        except urllib.error.HTTPError as failure:
            raise self._error_from(method, path, failure) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as failure:
            reason = getattr(failure, "reason", None) or failure
            raise TempInboxError(0, NETWORK_ERROR, f"cannot reach {self.base_url}: {reason}") from failure

    def json(self, method: str, path: str, **kwargs: Any) -> Dict[str, Any]:
        """One request whose answer is a JSON object."""
        answer = self.send(method, path, **kwargs)
        return parse_object(answer.body, answer.status, f"{method} {path}")

    def call(self, method: str, path: str, **kwargs: Any) -> Response:
        """A request retried up to CALL_RETRIES times after a 429 or 503."""
        for attempt in range(CALL_RETRIES + 1):
            try:
                return self.send(method, path, **kwargs)
            except TempInboxError as failure:
                if failure.status not in _RETRYABLE_STATUSES or attempt == CALL_RETRIES:
                    raise
                delay = failure.retry_after if failure.retry_after is not None else backoff(attempt)
                if delay > MAX_CALL_RETRY_DELAY:
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def call_json(self, method: str, path: str, **kwargs: Any) -> Dict[str, Any]:
        """``call`` whose answer is a JSON object."""
        answer = self.call(method, path, **kwargs)
        return parse_object(answer.body, answer.status, f"{method} {path}")

    def _keep_cookie(self, headers: email.message.Message) -> None:
        for header in headers.get_all("Set-Cookie") or []:
            name, _, rest = str(header).partition("=")
            if name.strip() == SESSION_COOKIE:
                self.session = rest.split(";", 1)[0].strip() or None

    def _error_from(self, method: str, path: str, failure: urllib.error.HTTPError) -> TempInboxError:
        try:
            self._keep_cookie(failure.headers)
            raw = failure.read(MAX_ERROR_BYTES)
        except (http.client.HTTPException, OSError):
            raw = b""
        finally:
            failure.close()
        retry_after = parse_retry_after(failure.headers.get("Retry-After"))
        try:
            error = json.loads(raw.decode("utf-8"))["error"]
            return TempInboxError(failure.code, str(error["code"]), str(error["message"]), retry_after)
        except (ValueError, KeyError, TypeError):
            return TempInboxError(failure.code, INVALID_RESPONSE, f"{method} {path}: HTTP {failure.code} without the API's error body", retry_after)


def _read_at_most(answer: Any, max_bytes: int) -> Optional[bytes]:
    """The whole body, read READ_CHUNK_BYTES at a time; None once it passes ``max_bytes``."""
    chunks: List[bytes] = []
    total = 0
    while total <= max_bytes:
        chunk: bytes = answer.read(min(READ_CHUNK_BYTES, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    return None


def parse_object(body: bytes, status: int, what: str) -> Dict[str, Any]:
    """The JSON object of an answer, or TempInboxError(invalid_response)."""
    try:
        value: Any = json.loads(body.decode("utf-8"))
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise TempInboxError(status, INVALID_RESPONSE, f"{what}: the answer is not a JSON object")
    return cast(Dict[str, Any], value)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), else None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def path_part(value: str) -> str:
    """One path segment, percent-encoded (``@`` kept: the API takes full addresses)."""
    return urllib.parse.quote(value, safe="@")
