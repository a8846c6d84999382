"""The wait semantics against the real server: each message once, oldest first, on held checks."""

from __future__ import annotations

import re
import threading
import time
import unittest
from typing import Any, Dict, List, Optional

from tempinbox_client import TempInboxClient, TempInboxError, WaitTimeout

from .server_process import ServerProcess

#: A free inbox holds 100 messages by default: the page test needs more than a page of them.
INBOX_CAPACITY = "400"

server: Optional[ServerProcess] = None


def setUpModule() -> None:
    global server
    # RATE_LIMITS=off: every test makes inboxes, past the budget of 30 per client address.
    server = ServerProcess({"RATE_LIMITS": "off", "FREE_MAX_MESSAGES": INBOX_CAPACITY})


def tearDownModule() -> None:
    if server is not None:
        server.stop()


class Background:
    """A call run in a thread: its result or exception, and when it returned."""

    def __init__(self, call: Any) -> None:
        self.result: Any = None
        self.error: Optional[BaseException] = None
        self.returned_at = 0.0
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Any) -> None:
        try:
            self.result = call()
        except BaseException as error:  # reported by join()
            self.error = error
        self.returned_at = time.monotonic()

    def join(self, timeout: float = 30.0) -> Any:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError("the call did not return")
        if self.error is not None:
            raise self.error
        return self.result


class WaitTests(unittest.TestCase):
    def setUp(self) -> None:
        assert server is not None
        self.server = server
        self.client = TempInboxClient(server.base_url)
        self.inbox = self.client.create_inbox()

    def subjects(self, messages: List[Dict[str, Any]]) -> List[str]:
        return [m["subject"] for m in messages]

    def test_a_held_wait_is_answered_within_a_second_of_the_250(self) -> None:
        waiting = Background(lambda: self.inbox.wait_for_message(timeout=20))
        time.sleep(0.5)  # the wait is held on the server by now
        self.server.send(self.inbox.address, "live")
        accepted_at = time.monotonic()
        message = waiting.join()
        self.assertEqual(message["subject"], "live")
        self.assertLess(waiting.returned_at - accepted_at, 1.0)

    def test_mail_that_arrived_before_the_wait_is_returned_at_once(self) -> None:
        self.server.send(self.inbox.address, "earlier")
        started = time.monotonic()
        message = self.inbox.wait_for_message(timeout=20)
        self.assertEqual(message["subject"], "earlier")
        self.assertLess(time.monotonic() - started, 1.0)

    def test_two_waits_return_two_messages_in_arrival_order_and_then_time_out(self) -> None:
        self.server.send_many([self.inbox.address], [("one", "1"), ("two", "2")])
        self.assertEqual(self.inbox.wait_for_message(timeout=10)["subject"], "one")
        self.assertEqual(self.inbox.wait_for_message(timeout=10)["subject"], "two")
        with self.assertRaises(WaitTimeout):
            self.inbox.wait_for_message(timeout=1)
        # A new handle has its own memory: it sees both again, oldest first.
        again = self.client.inbox(self.inbox.address)
        self.assertEqual(again.wait_for_message(timeout=10)["subject"], "one")

    def test_filtered_waits_in_reverse_order_each_get_their_own_message(self) -> None:
        self.server.send_many([self.inbox.address], [("alpha", "a"), ("beta", "b")])
        self.assertEqual(self.inbox.wait_for_message(subject="BETA", timeout=10)["subject"], "beta")
        self.assertEqual(self.inbox.wait_for_message(subject="alpha", timeout=10)["subject"], "alpha")
        # Unfiltered, nothing is left: both were returned.
        with self.assertRaises(WaitTimeout):
            self.inbox.wait_for_message(timeout=0)

    def test_held_waits_in_threads_each_get_their_own_message(self) -> None:
        second = Background(lambda: self.inbox.wait_for_message(subject="second", timeout=20))
        first = Background(lambda: self.inbox.wait_for_message(subject="first", timeout=20))
        time.sleep(0.5)  # both held on the server by now
        self.server.send_many([self.inbox.address], [("first", "1"), ("second", "2"), ("third", "3")])
        self.assertEqual(first.join()["subject"], "first")
        self.assertEqual(second.join()["subject"], "second")
        self.assertEqual(self.inbox.wait_for_message(timeout=10)["subject"], "third")

    def test_the_to_filter_matches_the_envelope_recipient_with_its_tag(self) -> None:
        user, domain = self.inbox.address.split("@")
        self.server.send(f"{user}+other@{domain}", "for other")
        self.server.send(f"{user}+signup@{domain}", "for signup")
        message = self.inbox.wait_for_message(to=f"{user}+signup@", timeout=10)
        self.assertEqual(message["subject"], "for signup")

    def test_a_wait_times_out_within_its_timeout_plus_a_second_naming_its_filters(self) -> None:
        self.server.send(self.inbox.address, "not it")
        started = time.monotonic()
        with self.assertRaises(WaitTimeout) as caught:
            self.inbox.wait_for_message(subject="never", from_="nobody", timeout=2)
        elapsed = time.monotonic() - started
        self.assertGreaterEqual(elapsed, 2.0)
        self.assertLess(elapsed, 3.0)
        error = caught.exception
        self.assertIsInstance(error, TempInboxError)
        self.assertEqual((error.status, error.code), (0, "timeout"))
        self.assertIn("'never'", str(error))
        self.assertIn("'nobody'", str(error))
        self.assertEqual(error.filters, {"subject": "never", "from": "nobody"})

    def test_wait_for_code_skips_mail_without_a_code_and_leaves_it_for_other_waits(self) -> None:
        self.server.send_many([self.inbox.address], [("Welcome", "No code in here."), ("Your code", "Your verification code is 482913.")])
        code, message = self.inbox.wait_for_code(timeout=10)
        self.assertEqual((code, message["subject"]), ("482913", "Your code"))
        self.assertEqual(self.inbox.wait_for_message(timeout=10)["subject"], "Welcome")

    def test_wait_for_link_by_substring_or_pattern(self) -> None:
        body = "Read https://example.org/blog first.\nThen confirm: https://example.org/confirm?token=abc123\n"
        self.server.send_many([self.inbox.address], [("Links", body), ("More links", "See https://example.org/CONFIRM?token=zz")])
        url, message = self.inbox.wait_for_link("Confirm", timeout=10)
        self.assertEqual(url, "https://example.org/confirm?token=abc123")
        self.assertEqual(message["subject"], "Links")
        url, _ = self.inbox.wait_for_link(re.compile(r"token=[a-z]{2}$"), timeout=10)
        self.assertEqual(url, "https://example.org/CONFIRM?token=zz")

    def test_a_wait_finds_the_oldest_message_behind_more_than_a_page_of_newer_ones(self) -> None:
        # The code mail, then 150 without a code: the code is on the second page of the listing
        # (pages hold at most 100), where a client that reads only the newest page misses it.
        fillers = [(f"filler {n:03}", "Nothing to type here.") for n in range(150)]
        self.server.send_many([self.inbox.address], [("Your code", "Code: 739204")] + fillers)
        code, message = self.inbox.wait_for_code(timeout=10)
        self.assertEqual((code, message["subject"]), ("739204", "Your code"))
        # The oldest unreturned is the first filler, also on the second page.
        self.assertEqual(self.inbox.wait_for_message(timeout=10)["subject"], "filler 000")
        self.assertEqual(self.inbox.wait_for_message(subject="filler 149", timeout=10)["subject"], "filler 149")
        self.assertEqual(self.inbox.wait_for_message(timeout=10)["subject"], "filler 001")
        listed = list(self.inbox.messages())
        self.assertEqual(len(listed), 151)
        self.assertEqual(self.subjects(listed[:2]), ["filler 149", "filler 148"])
        self.assertEqual(listed[-1]["subject"], "Your code")

    def test_a_handle_with_a_starting_point_sees_only_later_mail(self) -> None:
        self.server.send(self.inbox.address, "before the start")
        start = self.inbox.wait_for_message(timeout=10)["id"]
        self.server.send(self.inbox.address, "after the start")
        later = self.client.inbox(self.inbox.address.upper(), after=start)
        self.assertEqual(later.wait_for_message(timeout=10)["subject"], "after the start")
        self.assertEqual([m["subject"] for m in later.messages()], ["after the start"])
        with self.assertRaises(WaitTimeout):
            later.wait_for_message(timeout=0)

    def test_a_wait_on_a_deleted_inbox_fails_with_the_api_error(self) -> None:
        self.inbox.delete()
        with self.assertRaises(TempInboxError) as caught:
            self.inbox.wait_for_message(timeout=5)
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "inbox_not_found"))


if __name__ == "__main__":
    unittest.main()
