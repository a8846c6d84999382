"""Unit tests of paging, the wait's corner cases and call retries, against tests/fake_api.py."""

from __future__ import annotations

import threading
import time
import unittest

from tempinbox_client import TempInboxClient, TempInboxError, WaitTimeout

from .fake_api import FakeApi, message

ADDRESS = "x@fake.test"


class FakeApiTestCase(unittest.TestCase):
    page_size = 3

    def setUp(self) -> None:
        self.api = FakeApi(page_size=self.page_size)
        self.addCleanup(self.api.close)
        self.client = TempInboxClient(self.api.base_url, session="s")

    def check_queries(self) -> list:
        return [query for path, query in self.api.requests if path.startswith("/api/check/")]


class PagingTests(FakeApiTestCase):
    def test_messages_walks_every_page_newest_first(self) -> None:
        self.api.add(*[message(f"m{n}") for n in range(1, 8)])
        ids = [m["id"] for m in self.client.inbox(ADDRESS).messages()]
        self.assertEqual(ids, ["m7", "m6", "m5", "m4", "m3", "m2", "m1"])
        self.assertEqual([q.get("before") for q in self.check_queries()], [None, "m5", "m2"])

    def test_a_before_id_deleted_meanwhile_continues_before_the_previous_message(self) -> None:
        self.api.add(*[message(f"m{n}") for n in range(1, 8)])

        def delete_the_page_end(query: dict) -> None:
            if "before" not in query:
                self.api.delete("m5")  # the last of the first page, right after it was answered

        self.api.after_answer = delete_the_page_end
        ids = [m["id"] for m in self.client.inbox(ADDRESS).messages()]
        self.assertEqual(ids, ["m7", "m6", "m5", "m4", "m3", "m2", "m1"])
        self.assertEqual([q.get("before") for q in self.check_queries()], [None, "m5", "m6", "m2"])

    def test_a_whole_page_deleted_meanwhile_starts_over_without_repeating(self) -> None:
        self.api.add(*[message(f"m{n}") for n in range(1, 8)])

        def delete_the_page(query: dict) -> None:
            if "before" not in query and self.api.after_answer is not None:
                self.api.after_answer = None
                for gone in ("m7", "m6", "m5"):
                    self.api.delete(gone)

        self.api.after_answer = delete_the_page
        ids = [m["id"] for m in self.client.inbox(ADDRESS).messages()]
        self.assertEqual(ids, ["m7", "m6", "m5", "m4", "m3", "m2", "m1"])

    def test_a_wait_returns_the_oldest_match_past_the_first_page(self) -> None:
        self.api.add(message("m1", codes=["111111"]), *[message(f"m{n}") for n in range(2, 9)])
        code, found = self.client.inbox(ADDRESS).wait_for_code(timeout=5)
        self.assertEqual((code, found["id"]), ("111111", "m1"))

    def test_a_burst_larger_than_a_page_during_a_hold_gives_its_oldest_message(self) -> None:
        inbox = self.client.inbox(ADDRESS)
        threading.Timer(0.3, self.api.add, [message(f"m{n}") for n in range(1, 8)]).start()
        self.assertEqual(inbox.wait_for_message(timeout=5)["id"], "m1")
        self.assertEqual(inbox.wait_for_message(timeout=5)["id"], "m2")
        held = [q for q in self.check_queries() if "wait" in q]
        self.assertEqual(len(held), 1)
        self.assertNotIn("since", held[0])

    def test_a_hold_starts_after_the_newest_message_listed(self) -> None:
        self.api.add(message("m1"), message("m2"))
        inbox = self.client.inbox(ADDRESS)
        threading.Timer(0.3, self.api.add, [message("m3", codes=["333333"])]).start()
        code, found = inbox.wait_for_code(timeout=5)
        self.assertEqual((code, found["id"]), ("333333", "m3"))
        held = [q for q in self.check_queries() if "wait" in q]
        self.assertEqual([q["since"] for q in held], ["m2"])
        self.assertTrue(all(0 < int(q["wait"]) <= 60 for q in held))

    def test_a_since_ignored_mid_wait_never_gives_a_message_before_the_starting_point(self) -> None:
        # Starting point m1; m2 is listed (no code) and becomes the hold's `since`, then is deleted:
        # the server ignores an unknown `since` and answers every message, m0 and m1 included.
        self.api.add(message("m0", codes=["000000"]), message("m1", codes=["111111"]), message("m2"))
        inbox = self.client.inbox(ADDRESS, after="m1")

        def delete_since(query: dict) -> None:
            if "wait" not in query and "before" not in query and self.api.after_answer is not None:
                self.api.after_answer = None
                self.api.delete("m2")
                self.api.add(message("m3"))

        self.api.after_answer = delete_since
        threading.Timer(0.5, self.api.add, [message("m4", codes=["444444"])]).start()
        code, found = inbox.wait_for_code(timeout=5)
        self.assertEqual((code, found["id"]), ("444444", "m4"))

    def test_timeout_zero_looks_once(self) -> None:
        self.api.add(message("m1"))
        inbox = self.client.inbox(ADDRESS)
        self.assertEqual(inbox.wait_for_message(timeout=0)["id"], "m1")
        started = time.monotonic()
        with self.assertRaises(WaitTimeout):
            inbox.wait_for_message(timeout=0)
        self.assertLess(time.monotonic() - started, 0.5)
        self.assertTrue(all("wait" not in q for q in self.check_queries()))
        for bad in (-1, float("nan")):
            with self.assertRaises(ValueError):
                inbox.wait_for_message(timeout=bad)


class CallRetryTests(FakeApiTestCase):
    page_size = 100

    def test_a_call_waits_out_retry_after(self) -> None:
        self.api.scripted = [(429, {"Retry-After": "1"}, {"success": False, "error": {"code": "rate_limited", "message": "Slow down."}})]
        started = time.monotonic()
        self.assertEqual(self.client.domains(), ["fake.test"])
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        self.assertEqual(len(self.api.requests), 2)

    def test_a_call_gives_up_after_three_retries(self) -> None:
        refusal = (503, {"Retry-After": "0"}, {"success": False, "error": {"code": "unavailable", "message": "Database down."}})
        self.api.scripted = [refusal] * 5
        with self.assertRaises(TempInboxError) as caught:
            self.client.domains()
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.retry_after), (503, "unavailable", 0.0))
        self.assertEqual(len(self.api.requests), 4)

    def test_a_call_does_not_sleep_through_a_long_retry_after(self) -> None:
        self.api.scripted = [(429, {"Retry-After": "600"}, {"success": False, "error": {"code": "rate_limited", "message": "Budget spent."}})]
        with self.assertRaises(TempInboxError) as caught:
            self.client.domains()
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("rate_limited", 600.0))
        self.assertEqual(len(self.api.requests), 1)

    def test_a_wait_fails_at_once_when_retry_after_passes_its_deadline(self) -> None:
        self.api.scripted = [(429, {"Retry-After": "30"}, {"success": False, "error": {"code": "rate_limited", "message": "Too many held requests."}})]
        started = time.monotonic()
        with self.assertRaises(TempInboxError) as caught:
            self.client.inbox(ADDRESS).wait_for_message(timeout=5)
        self.assertEqual((caught.exception.status, caught.exception.retry_after), (429, 30.0))
        self.assertLess(time.monotonic() - started, 1.0)

    def test_a_wait_retries_a_503_no_sooner_than_a_second_even_with_retry_after_0(self) -> None:
        self.api.add(message("m1"))
        self.api.scripted = [(503, {"Retry-After": "0"}, {"success": False, "error": {"code": "unavailable", "message": "Database down."}})]
        started = time.monotonic()
        self.assertEqual(self.client.inbox(ADDRESS).wait_for_message(timeout=5)["id"], "m1")
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        self.assertEqual(len(self.api.requests), 2)

    def test_an_answer_that_is_not_the_api_is_invalid_response(self) -> None:
        self.api.scripted = [(502, {}, ["not", "the", "api"])]
        with self.assertRaises(TempInboxError) as caught:
            self.client.inbox(ADDRESS).message("m1")
        self.assertEqual((caught.exception.status, caught.exception.code), (502, "invalid_response"))


if __name__ == "__main__":
    unittest.main()
