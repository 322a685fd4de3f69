"""Gmail labels over IMAP (X-GM-LABELS), where the server announces X-GM-EXT-1."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._errors import UNSUPPORTED, MailError

if TYPE_CHECKING:
    from ._imap import Mailbox

#: Names a person uses for Gmail's own labels, and how X-GM-LABELS writes them.
SYSTEM = {"inbox": "\\Inbox", "starred": "\\Starred", "important": "\\Important"}


def require(mailbox: Mailbox) -> None:
    """MailError(unsupported) unless the server speaks Gmail's extensions."""
    if not mailbox.gmail:
        raise MailError(UNSUPPORTED, f"labels are not available: the IMAP server "
                                     f"{mailbox.server} is not Gmail (it does not announce "
                                     "X-GM-EXT-1); use folders instead (ListFolders, "
                                     "MoveEmails)")


def clean(name: str, values: list[str] | None) -> list[str]:
    """Label names (dispatch checked each against _params.Labels), Gmail's own ones written
    as X-GM-LABELS expects."""
    out = []
    for value in values or []:
        value = value.strip()
        out.append(SYSTEM.get(value.lower().lstrip("\\"), value))
    return list(dict.fromkeys(out))


def is_system_folder(name: str) -> bool:
    return name.upper() == "INBOX" or name.startswith(("[Gmail]", "[Google Mail]"))
