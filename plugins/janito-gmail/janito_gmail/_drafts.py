"""Drafts kept the way Gmail and other mail programs sync them: messages in the Drafts
folder (its ``\\Drafts`` special use), flagged ``\\Draft``, replaced whole on each change."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from . import _compose, _mime, _smtp
from ._errors import NOT_FOUND, MailError
from ._imap import SEEN, section

if TYPE_CHECKING:
    from email.message import EmailMessage

    from ._imap import Mailbox

DRAFT = b"\\Draft"
_GUESSES = ("[gmail]/drafts", "[google mail]/drafts", "drafts", "inbox.drafts", "inbox/drafts",
            "draft")


def folder(mailbox: Mailbox) -> str:
    found = mailbox.special_folder("drafts", _GUESSES)
    if found is None:
        raise MailError(NOT_FOUND, "this mailbox has no Drafts folder (none has the \\\\Drafts "
                                   "special use or the name Drafts)")
    return found


def save(mailbox: Mailbox, msg: EmailMessage) -> dict[str, Any]:
    """APPEND ``msg`` to the Drafts folder; its id there and the folder's name."""
    name = folder(mailbox)
    response = mailbox.client.append(name, _smtp.flatten(msg), flags=(DRAFT, SEEN))
    uid = _appended_uid(response)
    if uid is None:  # no UIDPLUS: find it by its Message-ID
        mailbox.select(name, readonly=True)
        found = mailbox.client.search(["HEADER", "Message-ID", str(msg["Message-ID"])])
        uid = max(found) if found else None
    return {"draft_id": uid, "drafts_folder": name}


def _appended_uid(response: Any) -> int | None:
    text = response.decode("utf-8", "replace") if isinstance(response, bytes) else str(response)
    match = re.search(r"\[APPENDUID \d+ (\d+)\]", text)
    return int(match.group(1)) if match else None


def load(mailbox: Mailbox, uid: int) -> tuple[str, EmailMessage]:
    """The Drafts folder (left selected for changes) and draft ``uid`` parsed."""
    name = folder(mailbox)
    mailbox.select(name, readonly=False)
    data = mailbox.client.fetch([uid], ["BODY.PEEK[]"]) if uid > 0 else {}
    item = data.get(uid)
    if item is None:
        raise MailError(NOT_FOUND, f"there is no draft with id {uid} in {name}; ListDrafts "
                                   "lists the drafts there are", id=uid)
    return name, _compose.parse_raw(section(item, b"BODY[]") or b"")


def remove(mailbox: Mailbox, name: str, uid: int) -> None:
    """Remove draft ``uid`` from the Drafts folder ``name`` for good."""
    mailbox.select(name, readonly=False)
    mailbox.expunge_uids([uid])


def raw_values(msg: EmailMessage, name: str) -> list[str]:
    """The fields ``name`` of a parsed draft as stored, unfolded. Reading them through the
    email package would parse them, and its parse of an address header raises ValueError
    when an encoded word in a display name decodes to a line break."""
    return [re.sub(r"\r?\n(?=[ \t])", "", str(value)).strip() for key, value in msg.raw_items()
            if key.lower() == name.lower()]


def addresses_of(msg: EmailMessage, name: str) -> tuple[list[str], list[str]]:
    """(the addresses of header ``name`` a message can name again, those it cannot)."""
    return _compose.usable_addresses(_mime.address_list(raw_values(msg, name)))


def message_id_of(msg: EmailMessage) -> str | None:
    """The draft's Message-ID, when a message can carry it again."""
    found = raw_values(msg, "Message-ID")[:1]
    if found and _compose.MESSAGE_ID.match(found[0]) and \
            _compose.header_fits("Message-ID", found[0]):
        return found[0]
    return None


def parts_of(msg: EmailMessage) -> tuple[str, str | None, list[_compose.Attachment]]:
    """(text body, HTML body or None, attachments) of a stored draft."""
    plain = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    text = str(plain.get_content()) if plain is not None else ""
    markup = str(html.get_content()) if html is not None else None
    found = []
    for part in msg.iter_attachments():
        data = part.get_payload(decode=True)
        found.append(_compose.Attachment.received(part.get_filename() or "attachment",
                                                  part.get_content_type(), bytes(data or b"")))
    return text, markup, found


def thread_of(msg: EmailMessage) -> _compose.Thread | None:
    def ids(name: str) -> list[str]:
        return [r for r in re.findall(r"<[^<>\s]+>", " ".join(raw_values(msg, name)))
                if _compose.header_fits("References", r)]

    replied = ids("In-Reply-To")
    if not replied:
        return None
    return _compose.Thread(replied[0], ids("References") or replied[:1])
