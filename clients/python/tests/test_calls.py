"""The calls besides the waits, against the real server: sessions, messages, raw bytes, errors."""

from __future__ import annotations

import os
import pickle
import socket
import unittest
from datetime import datetime, timezone
from typing import Optional
from unittest import mock

from tempinbox_client import TempInboxClient, TempInboxError, WaitTimeout

from .server_process import ServerProcess

server: Optional[ServerProcess] = None


def setUpModule() -> None:
    global server
    server = ServerProcess({"RATE_LIMITS": "off", "DOMAINS": "tempinbox.test,other.test"})


def tearDownModule() -> None:
    if server is not None:
        server.stop()


def eight_bit_message(to: str) -> bytes:
    """A multipart message whose text and attachment are raw 8-bit bytes (no transfer encoding)
    with a line that starts with a dot (SMTP dot-stuffs it on the wire and removes it again)."""
    attachment = bytes(b for b in range(256) if b not in (10, 13)) + b"\r\n.dot line\r\n\xff\xfe\x00end"
    return (
        f"From: sender@example.org\r\nTo: {to}\r\nSubject: eight bit\r\nMIME-Version: 1.0\r\n".encode("ascii")
        + b'Content-Type: multipart/mixed; boundary="b0undary"\r\n\r\n'
        + b"--b0undary\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
        + "Grüße, ça va ? Код 1234.\r\n".encode("utf-8")
        + b"--b0undary\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: 8bit\r\n"
        + b'Content-Disposition: attachment; filename="bytes.bin"\r\n\r\n'
        + attachment
        + b"\r\n--b0undary--\r\n"
    )


class CallTests(unittest.TestCase):
    def setUp(self) -> None:
        assert server is not None
        self.server = server
        self.client = TempInboxClient(server.base_url)

    def test_a_new_inbox_and_its_handle(self) -> None:
        self.assertIsNone(self.client.session)
        inbox = self.client.create_inbox(domain="other.test")
        self.assertRegex(inbox.address, r"^[a-z][a-z0-9]{9}@other\.test$")
        self.assertEqual(inbox.address, f"{inbox.username}@{inbox.domain}")
        assert inbox.expires_at is not None
        self.assertEqual(inbox.expires_at.tzinfo, timezone.utc)
        self.assertGreater(inbox.expires_at, datetime.now(timezone.utc))
        self.assertIsNotNone(self.client.session)
        # A free session has one inbox: asking again gives the same one.
        self.assertEqual(self.client.create_inbox().address, inbox.address)
        self.assertEqual([i.address for i in self.client.inboxes()], [inbox.address])
        self.assertEqual(self.client.domains(), ["tempinbox.test", "other.test"])

    def test_the_session_resumes_in_a_new_client(self) -> None:
        inbox = self.client.create_inbox()
        self.server.send(inbox.address, "for the second client")
        resumed = TempInboxClient(self.server.base_url, session=self.client.session)
        self.assertEqual(resumed.session, self.client.session)
        self.assertEqual([i.address for i in resumed.inboxes()], [inbox.address])
        message = resumed.inbox(inbox.address).wait_for_message(timeout=10)
        self.assertEqual(message["subject"], "for the second client")
        # Without the session the inbox is not there for a client.
        stranger = TempInboxClient(self.server.base_url)
        with self.assertRaises(TempInboxError) as caught:
            stranger.inbox(inbox.address).wait_for_message(timeout=1)
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "session_required"))

    def test_raw_is_byte_for_byte_what_was_sent(self) -> None:
        inbox = self.client.create_inbox()
        sent = eight_bit_message(inbox.address)
        self.server.send_raw(inbox.address, sent)
        message = inbox.wait_for_message(timeout=10)
        raw = inbox.raw(message["id"])
        self.assertIsInstance(raw, bytes)
        # The server prepends its trace headers and changes nothing else.
        self.assertTrue(raw.startswith(b"Return-Path: <sender@example.org>\r\nReceived: "), raw[:80])
        self.assertTrue(raw.endswith(sent))
        self.assertEqual(message["attachments"][0]["filename"], "bytes.bin")
        detail = inbox.message(message["id"])
        self.assertNotIn("success", detail)
        self.assertEqual(detail["size"], len(raw))
        self.assertIn("Grüße, ça va ?", detail["body"])

    def test_messages_lists_every_message_newest_first_with_filters(self) -> None:
        inbox = self.client.create_inbox()
        self.server.send_many([inbox.address], [("apple", "a"), ("banana", "b"), ("apple pie", "c")])
        self.assertEqual([m["subject"] for m in inbox.messages()], ["apple pie", "banana", "apple"])
        self.assertEqual([m["subject"] for m in inbox.messages(subject="APPLE")], ["apple pie", "apple"])
        self.assertEqual(list(inbox.messages(from_="nobody")), [])

    def test_a_premium_session_names_its_inboxes(self) -> None:
        key = self.server.cli("license", "create").strip()
        limits = self.client.redeem(key)
        self.assertTrue(limits["premium"])
        self.assertEqual(limits["limits"]["custom_usernames"], True)
        named = self.client.create_inbox(username="Py-Client.Test")
        self.assertEqual(named.address, "py-client.test@tempinbox.test")
        with self.assertRaises(TempInboxError) as caught:
            TempInboxClient(self.server.base_url).redeem("TI-00000000-00000000-00000000-00000000")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "license_invalid"))

    def test_api_errors_carry_status_and_code(self) -> None:
        with self.assertRaises(TempInboxError) as caught:
            self.client.create_inbox(domain="elsewhere.example")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_domain"))
        self.client.create_inbox()
        with self.assertRaises(TempInboxError) as caught:
            self.client.create_inbox(username="wanted")
        self.assertEqual((caught.exception.status, caught.exception.code), (403, "premium_required"))

    def test_an_unreachable_server_is_status_0_network_error(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        # Nothing listens on the port once the socket is closed.
        with self.assertRaises(TempInboxError) as caught:
            TempInboxClient(f"http://127.0.0.1:{port}").domains()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "network_error"))
        self.assertIsNone(caught.exception.retry_after)

    def test_the_base_url_comes_from_tempinbox_url_by_default(self) -> None:
        with mock.patch.dict(os.environ, {"TEMPINBOX_URL": self.server.base_url + "/"}):
            self.assertEqual(TempInboxClient().base_url, self.server.base_url)
            self.assertEqual(TempInboxClient().domains()[0], "tempinbox.test")
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(TempInboxClient().base_url, "http://localhost:8080")
        with self.assertRaises(ValueError):
            TempInboxClient("localhost:8080")

    def test_handles_from_names_and_addresses(self) -> None:
        self.assertEqual(self.client.inbox("Alice+Signup@TempInbox.Test").address, "alice@tempinbox.test")
        bare = self.client.inbox("alice")
        self.assertEqual((bare.address, bare.domain, bare.expires_at), ("alice", None, None))
        for bad in ("", "@tempinbox.test", "alice@"):
            with self.assertRaises(ValueError):
                self.client.inbox(bad)

    def test_errors_survive_pickling(self) -> None:
        error = pickle.loads(pickle.dumps(TempInboxError(429, "rate_limited", "Slow down.", 5.0)))
        self.assertEqual((error.status, error.code, str(error), error.retry_after), (429, "rate_limited", "Slow down.", 5.0))
        timeout = pickle.loads(pickle.dumps(WaitTimeout(2, {"subject": "x"})))
        self.assertEqual((timeout.code, timeout.filters, str(timeout)), ("timeout", {"subject": "x"}, str(WaitTimeout(2, {"subject": "x"}))))


if __name__ == "__main__":
    unittest.main()
