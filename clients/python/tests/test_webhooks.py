"""Webhooks against the real server: set, delivered and signed, listed, removed; and refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional

from tempinbox_client import TempInboxClient, TempInboxError

from .server_process import ServerProcess

#: How long a delivery may take to reach the receiver: the first attempt starts within 1 s of
#: the 250; the rest is room for a loaded machine.
DELIVERY_TIMEOUT = 15.0
#: How often the test looks at what the receiver got, in seconds.
POLL_INTERVAL = 0.05
#: Largest body the receiver reads: the tests' messages are short.
MAX_RECEIVED_BYTES = 1024 * 1024

server: Optional[ServerProcess] = None


def setUpModule() -> None:
    global server
    # Loopback is not public, so the receiver below is reachable only through this opening.
    server = ServerProcess({"RATE_LIMITS": "off", "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"})


def tearDownModule() -> None:
    if server is not None:
        server.stop()


class Receiver:
    """An HTTP server on 127.0.0.1 that answers 200 and keeps each request's headers and body."""

    def __init__(self) -> None:
        self.received: List[Dict[str, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
                pass

            def do_POST(self) -> None:  # noqa: N802 (the base's name)
                length = min(int(self.headers.get("Content-Length") or 0), MAX_RECEIVED_BYTES)
                body = self.rfile.read(length)
                received.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def wait_for(self, count: int) -> List[Dict[str, Any]]:
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        while len(self.received) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.received)} of {count} deliveries arrived within {DELIVERY_TIMEOUT} s")
            time.sleep(POLL_INTERVAL)
        return list(self.received)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def signed_by(secret: str, header: str, body: bytes) -> bool:
    """The receiver's check, written from the documented header: t=<unix seconds>,v1=<hex HMAC>."""
    parts = dict(part.split("=", 1) for part in header.split(","))
    expected = hmac.new(secret.encode("utf-8"), parts["t"].encode("ascii") + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"]) and abs(time.time() - int(parts["t"])) < 300


class WebhookTests(unittest.TestCase):
    def setUp(self) -> None:
        assert server is not None
        self.server = server
        self.client = TempInboxClient(server.base_url)
        self.receiver = Receiver()
        self.addCleanup(self.receiver.close)

    def premium(self) -> None:
        self.client.redeem(self.server.cli("license", "create").strip())

    def test_a_webhook_is_set_delivers_signed_mail_lists_the_attempt_and_is_removed(self) -> None:
        self.premium()
        inbox = self.client.create_inbox()
        secret = "py-client-secret-0123456789"
        created = inbox.set_webhook(self.receiver.url, secret=secret)
        self.assertEqual(set(created), {"url", "secret", "created_at"})
        self.assertEqual((created["url"], created["secret"]), (self.receiver.url, secret))

        self.server.send(inbox.address, "to the hook")
        [delivery] = self.receiver.wait_for(1)
        self.assertTrue(signed_by(secret, delivery["headers"]["tempinbox-signature"], delivery["body"]))
        payload = json.loads(delivery["body"])
        self.assertEqual((payload["event"], payload["inbox"], payload["message"]["subject"]), ("message.received", inbox.address, "to the hook"))

        state = inbox.webhook()
        self.assertEqual(state["webhook"], {"url": self.receiver.url, "created_at": created["created_at"]})
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        while not state["deliveries"] and time.monotonic() < deadline:
            time.sleep(POLL_INTERVAL)
            state = inbox.webhook()
        [attempt] = state["deliveries"]
        self.assertEqual(
            (attempt["id"], attempt["message_id"], attempt["attempt"], attempt["status"], attempt["error"]),
            (delivery["headers"]["tempinbox-delivery"], payload["message"]["id"], 1, 200, None),
        )

        inbox.delete_webhook()
        self.assertEqual(inbox.webhook()["webhook"], None)

    def test_without_a_secret_the_server_makes_one_and_a_second_set_replaces_the_first(self) -> None:
        self.premium()
        inbox = self.client.create_inbox()
        first = inbox.set_webhook(self.receiver.url)
        self.assertRegex(first["secret"], r"^[A-Za-z0-9_-]{43}$")
        second = inbox.set_webhook(self.receiver.url + "?second")
        self.assertNotEqual(second["secret"], first["secret"])
        self.assertEqual(inbox.webhook()["webhook"]["url"], self.receiver.url + "?second")

    def test_refusals_carry_status_and_code(self) -> None:
        free = self.client.create_inbox()
        with self.assertRaises(TempInboxError) as caught:
            free.set_webhook(self.receiver.url)
        self.assertEqual((caught.exception.status, caught.exception.code), (403, "premium_required"))
        self.assertEqual(free.webhook(), {"webhook": None, "deliveries": []})

        self.premium()
        with self.assertRaises(TempInboxError) as caught:
            free.set_webhook("http://10.1.2.3/hook")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "webhook_url_forbidden"))
        with self.assertRaises(TempInboxError) as caught:
            free.set_webhook("ftp://127.0.0.1/hook")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_request"))
        with self.assertRaises(TempInboxError) as caught:
            free.set_webhook(self.receiver.url, secret="short")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_request"))
        with self.assertRaises(TempInboxError) as caught:
            self.client.inbox("nobody-here").webhook()
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "inbox_not_found"))


if __name__ == "__main__":
    unittest.main()
