"""The real server for the end-to-end tests, started as users start it, and mail sent to it.

``node dist/main.js serve`` from the repository root on port 0 for HTTP and SMTP, with a SQLite
file in a temporary folder; the ports come from its ``"msg":"listening"`` log line. The Node.js
is ``TEMPINBOX_NODE`` (the test runner that spawns these tests passes its own), else ``node``.
Sender checks are off (``MAIL_AUTH=off``): they would ask the machine's DNS.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import smtplib
import subprocess
import tempfile
import threading
import unittest
import urllib.request
from pathlib import Path
from typing import Deque, Dict, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parents[3]
MAIN = REPO_ROOT / "dist" / "main.js"

#: How long the server may take to print its listening line, in seconds.
START_TIMEOUT = 20.0
#: How long a SIGTERM'd server may take to exit (it drains held requests first), in seconds.
STOP_TIMEOUT = 15.0
#: Log lines kept for a failure's message: the last ones tell what went wrong.
LOG_LINES_KEPT = 200

#: Set by the Node test run that runs these tests; every process it starts carries it.
RUN_MARKER = "TEMPINBOX_TEST_RUN"

#: 1 in CI: a tool these tests need that is missing fails the run instead of skipping it.
TOOLS_REQUIRED = os.environ.get("TEMPINBOX_REQUIRE_TOOLS") == "1"


def skip_or_fail(reason: str) -> None:
    """Skips the test with ``reason``, or fails it when TEMPINBOX_REQUIRE_TOOLS=1."""
    if TOOLS_REQUIRED:
        raise AssertionError(f"{reason} (TEMPINBOX_REQUIRE_TOOLS=1 requires it)")
    raise unittest.SkipTest(reason)


class ServerProcess:
    """A started ``tempinbox serve``; ``stop()`` sends SIGTERM and waits."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        node = os.environ.get("TEMPINBOX_NODE") or shutil.which("node")
        if node is None:
            skip_or_fail("no node on PATH to start the server with")
        self.node = str(node)
        if not MAIN.is_file():
            raise AssertionError(f"{MAIN} is missing: run `npm run build` first")
        self._dir = tempfile.mkdtemp(prefix="tempinbox-py-")
        full_env = {
            "PATH": os.environ.get("PATH", ""),
            "PORT": "0",
            "SMTP_PORT": "0",
            "HOST": "127.0.0.1",
            "LOG_LEVEL": "info",
            "MAIL_AUTH": "off",
            "DATABASE_URL": f"sqlite:{os.path.join(self._dir, 'tempinbox.db')}",
            # The Node test run's marker (test/helpers/child-processes.ts), so that its end-of-run
            # check finds a server these tests failed to stop.
            **({RUN_MARKER: os.environ[RUN_MARKER]} if RUN_MARKER in os.environ else {}),
            **(env or {}),
        }
        self.env = full_env
        self.log: Deque[str] = collections.deque(maxlen=LOG_LINES_KEPT)
        self._listening = threading.Event()
        self.http_port = 0
        self.smtp_port = 0
        self._process = subprocess.Popen(
            [self.node, str(MAIN), "serve"],
            cwd=str(REPO_ROOT),
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        if not self._listening.wait(START_TIMEOUT) or self.http_port == 0:
            self.stop()
            raise AssertionError("the server did not start:\n" + "\n".join(self.log))
        self.base_url = f"http://127.0.0.1:{self.http_port}"

    def _read_log(self) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.log.append(line)
            if '"msg":"listening"' in line and not self._listening.is_set():
                try:
                    fields = json.loads(line)
                    self.http_port, self.smtp_port = int(fields["http_port"]), int(fields["smtp_port"])
                finally:
                    self._listening.set()
        self._listening.set()

    def stop(self) -> Optional[int]:
        """SIGTERM, then the exit status (SIGKILL past STOP_TIMEOUT)."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join(STOP_TIMEOUT)
        if self._process.stdout is not None:
            self._process.stdout.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        return self._process.returncode

    def responses(self, route: str, status: int) -> int:
        """HTTP answers of ``route`` (a route pattern) with ``status`` so far, from /metrics."""
        with urllib.request.urlopen(f"{self.base_url}/metrics", timeout=10) as answer:
            text = answer.read().decode("utf-8")
        total = 0
        for line in text.splitlines():
            if line.startswith("tempinbox_http_requests_total{") and f'route="{route}"' in line and f'status="{status}"' in line:
                total += int(float(line.rsplit(" ", 1)[1]))
        return total

    def cli(self, *args: str) -> str:
        """Runs a command of the program (``license create``…) on this server's database."""
        done = subprocess.run([self.node, str(MAIN), *args], cwd=str(REPO_ROOT), env=self.env, capture_output=True, timeout=30, check=True)
        return done.stdout.decode("utf-8")

    def send(self, to: str, subject: str, body: str = "Hello.", sender: str = "sender@example.org") -> None:
        """One plain text mail to ``to`` over SMTP; returns after the server's 250."""
        self.send_many([to], [(subject, body)], sender)

    def send_many(self, recipients: Sequence[str], mails: Sequence[tuple], sender: str = "sender@example.org") -> None:
        """Mails (subject, body) over one SMTP connection, each to ``recipients``, in order."""
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=30) as smtp:
            for subject, body in mails:
                text = f"From: {sender}\r\nTo: {', '.join(recipients)}\r\nSubject: {subject}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
                smtp.sendmail(sender, list(recipients), text.encode("utf-8"))

    def send_raw(self, to: str, data: bytes, sender: str = "sender@example.org") -> None:
        """A message given as bytes (CRLF line ends), announced as 8BITMIME."""
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=30) as smtp:
            smtp.sendmail(sender, [to], data, mail_options=["BODY=8BITMIME"])
