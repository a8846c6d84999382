"""A stand-in for the check API on loopback, for the unit tests of paging, retries and the
wait's corner cases that the real server produces only by chance (a deleted ``before``, a page
cut by the byte budget, a burst larger than a page, a 429 on a plain call).

It models one inbox the way docs/api.md describes check: newest first, ``since`` ignored when
it names no message, ``before`` that names none is ``400 invalid_request``, ``has_more``, and
``wait`` held until a message arrives. Everything else is scripted per test.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

#: An answer to send instead of the modelled one: status, headers, body.
Scripted = Tuple[int, Dict[str, str], Any]


def message(message_id: str, subject: str = "", codes: Optional[List[str]] = None) -> Dict[str, Any]:
    """A message object with the fields the client reads."""
    return {"id": message_id, "subject": subject, "codes": codes or [], "links": [], "from": "a@example.org"}


class FakeApi:
    """One inbox, ``x@fake.test``, served at ``base_url`` until ``close()``."""

    def __init__(self, page_size: int = 100) -> None:
        #: The inbox, oldest first.
        self.messages: List[Dict[str, Any]] = []
        #: Largest page answered (the real server also cuts pages by bytes).
        self.page_size = page_size
        #: Answers to give first, in order, whatever the request.
        self.scripted: List[Scripted] = []
        #: (path, query) of every request, in order.
        self.requests: List[Tuple[str, Dict[str, str]]] = []
        #: The Cookie header of every request (None when absent), in order.
        self.cookies: List[Optional[str]] = []
        #: Called after each check answer is computed, with its query: tests change the inbox here.
        self.after_answer: Optional[Callable[[Dict[str, str]], None]] = None
        self._changed = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, *messages: Dict[str, Any]) -> None:
        """Delivers messages (all at once, as one burst)."""
        with self._changed:
            self.messages.extend(messages)
            self._changed.notify_all()

    def delete(self, message_id: str) -> None:
        with self._changed:
            self.messages = [m for m in self.messages if m["id"] != message_id]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def check(self, query: Dict[str, str]) -> Tuple[int, Dict[str, Any]]:
        """The modelled check answer; with ``wait``, held until a message matches or time is up."""
        wait = float(query.get("wait", "0"))
        with self._changed:
            status, answer = self._page(query)
            if status == 200 and not answer["emails"] and wait > 0 and "before" not in query:
                self._changed.wait_for(lambda: bool(self._page(query)[1].get("emails")), timeout=wait)
                status, answer = self._page(query)
            return status, answer

    def _page(self, query: Dict[str, str]) -> Tuple[int, Dict[str, Any]]:
        ids = [m["id"] for m in self.messages]
        newer = self.messages[ids.index(query["since"]) + 1 :] if query.get("since") in ids else list(self.messages)
        if "before" in query:
            if query["before"] not in ids:
                return 400, {"success": False, "error": {"code": "invalid_request", "message": "before is not a message of this inbox."}}
            cut = ids.index(query["before"])
            newer = [m for m in newer if ids.index(m["id"]) < cut]
        newest_first = list(reversed(newer))
        limit = min(int(query.get("limit", "100")), self.page_size)
        page = newest_first[:limit]
        return 200, {"success": True, "count": len(page), "emails": page, "has_more": len(newest_first) > limit}

    def _handler(self) -> type:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
                pass

            def do_GET(self) -> None:  # noqa: N802 (the base's name)
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                api.requests.append((url.path, query))
                api.cookies.append(self.headers.get("Cookie"))
                if api.scripted:
                    status, headers, body = api.scripted.pop(0)
                elif url.path == "/api/domains":
                    status, headers, body = 200, {}, {"domains": ["fake.test"]}
                elif url.path.startswith("/api/check/"):
                    status, body = api.check(query)
                    headers = {}
                    if api.after_answer is not None:
                        api.after_answer(query)
                else:
                    status, headers, body = 404, {}, {"success": False, "error": {"code": "not_found", "message": "No such route."}}
                data = json.dumps(body).encode("utf-8")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
