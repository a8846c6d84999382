"""tempinbox_client: temporary inboxes for tests, with waits that return each message once.

    from tempinbox_client import TempInboxClient
    inbox = TempInboxClient().create_inbox()
    code, message = inbox.wait_for_code(timeout=30)
"""

from .client import TempInboxClient
from .errors import TempInboxError, WaitTimeout
from .inbox import Inbox
from .version import __version__

__all__ = ["Inbox", "TempInboxClient", "TempInboxError", "WaitTimeout", "__version__"]
