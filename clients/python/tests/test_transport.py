"""Unit tests of the HTTP layer: bounded reads, Retry-After, the session cookie."""

from __future__ import annotations

import email.utils
import io
import time
import unittest

from tempinbox_client import TempInboxClient, TempInboxError
from tempinbox_client.transport import _read_at_most, parse_retry_after  # pyright: ignore[reportPrivateUsage]

from .fake_api import FakeApi


class TransportTests(unittest.TestCase):
    def test_a_body_is_read_up_to_its_bound_and_no_further(self) -> None:
        self.assertEqual(_read_at_most(io.BytesIO(b"x" * 10), 10), b"x" * 10)
        self.assertIsNone(_read_at_most(io.BytesIO(b"x" * 11), 10))
        self.assertEqual(_read_at_most(io.BytesIO(b""), 10), b"")

    def test_retry_after_in_seconds_or_as_a_date(self) -> None:
        self.assertEqual(parse_retry_after("5"), 5.0)
        soon = parse_retry_after(email.utils.formatdate(time.time() + 30, usegmt=True))
        assert soon is not None
        self.assertAlmostEqual(soon, 30, delta=2)
        self.assertEqual(parse_retry_after(email.utils.formatdate(time.time() - 30, usegmt=True)), 0.0)
        for bad in (None, "", "soon", "-1"):
            self.assertIsNone(parse_retry_after(bad))

    def test_the_session_cookie_is_kept_and_never_sent_to_a_redirect_target(self) -> None:
        first, second = FakeApi(), FakeApi()
        self.addCleanup(first.close)
        self.addCleanup(second.close)
        first.scripted = [(200, {"Set-Cookie": "tempinbox_session=new-value; Path=/; HttpOnly"}, {"domains": ["a.test"]})]
        client = TempInboxClient(first.base_url, session="old-value")
        self.assertEqual(client.domains(), ["a.test"])
        self.assertEqual(client.session, "new-value")
        first.scripted = [(302, {"Location": f"{second.base_url}/api/domains"}, {})]
        self.assertEqual(client.domains(), ["fake.test"])
        self.assertEqual(first.cookies, ["tempinbox_session=old-value", "tempinbox_session=new-value"])
        self.assertEqual(second.cookies, [None])

    def test_an_oversized_or_broken_answer_is_invalid_response(self) -> None:
        api = FakeApi()
        self.addCleanup(api.close)
        api.scripted = [(200, {}, "not an object")]
        with self.assertRaises(TempInboxError) as caught:
            TempInboxClient(api.base_url).domains()
        self.assertEqual((caught.exception.status, caught.exception.code), (200, "invalid_response"))


if __name__ == "__main__":
    unittest.main()
