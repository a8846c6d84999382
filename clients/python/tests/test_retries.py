"""Retries against the real server: its Retry-After waited out, and a server that goes away."""

from __future__ import annotations

import threading
import time
import unittest
import urllib.request
from typing import List

from tempinbox_client import TempInboxClient, TempInboxError

from .server_process import ServerProcess

#: Held requests one session may have open at once on the server (docs/api.md, fair use).
HELD_PER_SESSION = 10
#: The Retry-After the server gives a hold over that cap, in seconds.
HELD_RETRY_AFTER = 5
#: How long the test's own holds last, in seconds: they end before the client's retry.
OTHER_HOLDS = 3


class RetryAfterTests(unittest.TestCase):
    def setUp(self) -> None:
        # Rate limits on (the default): the held-request cap is the budget this test spends.
        self.server = ServerProcess()
        self.addCleanup(self.server.stop)

    def hold(self, address: str, session: str) -> None:
        request = urllib.request.Request(f"{self.server.base_url}/api/check/{address}?wait={OTHER_HOLDS}")
        request.add_header("Cookie", f"tempinbox_session={session}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()

    def test_a_wait_over_the_held_request_cap_waits_out_retry_after(self) -> None:
        client = TempInboxClient(self.server.base_url)
        inbox = client.create_inbox()
        assert client.session is not None
        holders: List[threading.Thread] = [
            threading.Thread(target=self.hold, args=(inbox.address, client.session), daemon=True) for _ in range(HELD_PER_SESSION)
        ]
        for holder in holders:
            holder.start()
        time.sleep(0.5)  # all ten held: the session's cap is reached

        # The mail arrives once the other holds have ended, while the client sleeps out the 429.
        threading.Timer(OTHER_HOLDS + 1, self.server.send, (inbox.address, "after the 429")).start()
        started = time.monotonic()
        message = inbox.wait_for_message(timeout=20)
        elapsed = time.monotonic() - started
        self.assertEqual(message["subject"], "after the 429")
        # Refused at once with Retry-After: 5, asked again 5 s later (not sooner) and held then.
        self.assertGreaterEqual(elapsed, HELD_RETRY_AFTER - 0.1)
        self.assertLess(elapsed, HELD_RETRY_AFTER + 2)
        for holder in holders:
            holder.join(10)
        # The one refused hold was the client's (the test's own ten were all held), asked once.
        self.assertEqual(self.server.responses("/api/check/:username", 429), 1)

    def test_a_wait_whose_server_stops_retries_then_fails_with_network_error(self) -> None:
        client = TempInboxClient(self.server.base_url)
        inbox = client.create_inbox()
        threading.Timer(0.5, self.server.stop).start()
        started = time.monotonic()
        with self.assertRaises(TempInboxError) as caught:
            inbox.wait_for_message(timeout=4)
        elapsed = time.monotonic() - started
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "network_error"))
        # The stopping server answers the hold at once; the next hold, a second later, finds the
        # port closed (at ~1 s); the retry 1 s after that fails too, and the next (2 s later)
        # would pass the deadline: so the error comes at ~2 s, not at the first refusal.
        self.assertGreater(elapsed, 1.7)
        self.assertLess(elapsed, 5.0)

if __name__ == "__main__":
    unittest.main()
