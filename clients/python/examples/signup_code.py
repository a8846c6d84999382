"""Sign-up by e-mail, the mail side: make an address, wait for the code that is mailed to it.

    TEMPINBOX_URL=http://localhost:8080 python signup_code.py

Prints the new address on the first line; send (or let your app send) a mail with a one-time
code to it, and the code is printed on the second line. Exits 3 when none comes in time.
"""

import os
import sys

from tempinbox_client import TempInboxClient, TempInboxError, WaitTimeout


def main() -> int:
    client = TempInboxClient()  # TEMPINBOX_URL, else http://localhost:8080
    inbox = client.create_inbox()
    print(inbox.address, flush=True)
    # In a real test: fill the sign-up form with inbox.address and submit it here.
    try:
        code, message = inbox.wait_for_code(timeout=float(os.environ.get("TIMEOUT_SECONDS", "60")))
    except WaitTimeout as timeout:
        print(timeout, file=sys.stderr)
        return 3
    except TempInboxError as error:
        print(f"{error.code}: {error}", file=sys.stderr)
        return 1
    print(code, flush=True)
    print(f"from {message['from']}: {message['subject']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
