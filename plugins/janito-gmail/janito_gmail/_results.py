"""What the mail tools answer: the pieces several of them share, as TypedDicts (each tool
declares its own answer from these, and so has an MCP output schema).

A field's description is written in ``Annotated``, as the parameters' are (``_params``),
not in a docstring: a type built on another keeps its base's descriptions that way
(typing's TypedDict forgets its bases before Python 3.12, docstrings with them), and a
message has a ``from``, which only the functional form of TypedDict can name.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
    from typing import TypedDict as TypedDict
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired as NotRequired
    from typing_extensions import TypedDict as TypedDict

MissingIds = Annotated[list[int], "Ids asked for that are not in the folder."]
Recipients = Annotated[list[str], 'Addresses, each "Name <addr>" or "addr".']
Refused = Annotated[list[str], "Addresses the SMTP server refused; the others got the message."]
LeftOut = Annotated[list[str], "Addresses of the message that no header can carry, left out."]
Method = Annotated[Literal["MOVE", "COPY and EXPUNGE"], "How the server moved them."]


class AttachmentInfo(TypedDict):
    index: Annotated[int, "Its number in the message, for SaveAttachment."]
    filename: Annotated[str, "Its name (one made up when it has none)."]
    content_type: str
    size: Annotated[int, "Bytes (estimated from the encoded size)."]
    inline: Annotated[bool, "Whether the message shows it in its body rather than attached."]


Message = TypedDict("Message", {
    "folder": NotRequired[Annotated[str, "The folder holding it (in a conversation)."]],
    "id": Annotated[int, "Its id in its folder, for the other tools."],
    "message_id": Annotated[str | None, "Its Message-ID header."],
    "from": str,
    "to": Recipients,
    "cc": list[str],
    "subject": str,
    "date": Annotated[str | None, "When it was written (ISO 8601), else when it arrived."],
    "unread": bool,
    "flagged": Annotated[bool, "Flagged (starred on Gmail)."],
    "flags": Annotated[list[str], "Its IMAP flags."],
    "size": Annotated[int, "Its size in bytes."],
    "bcc": NotRequired[list[str]],
    "reply_to": NotRequired[list[str]],
    "in_reply_to": NotRequired[Annotated[str, "The Message-ID of the message it answers."]],
    "labels": NotRequired[Annotated[list[str], "Its Gmail labels."]],
    "thread_id": NotRequired[Annotated[str, "Its Gmail conversation."]],
    "body": NotRequired[Annotated[str, "Its text, up to max_body_chars."]],
    "body_format": NotRequired[Literal["text", "html converted to text"] | None],
    "body_truncated": NotRequired[Annotated[bool, "Whether the text goes on."]],
    "attachments": Annotated[list[AttachmentInfo], "Its attachments (not downloaded)."],
})

Summary = TypedDict("Summary", {
    "id": int,
    "from": str,
    "subject": str,
    "date": Annotated[str | None, "When it was written (ISO 8601), else when it arrived."],
    "unread": bool,
})


class Selected(TypedDict):
    """The choice of messages a call made, as it was given."""

    ids: NotRequired[Annotated[list[int], "The ids asked for."]]
    query: NotRequired[Annotated[str, "The search asked for."]]
    sender: NotRequired[Annotated[str, "The From text asked for."]]
    subject: NotRequired[Annotated[str, "The Subject text asked for."]]
    since: NotRequired[Annotated[str, "The first day asked for."]]
    before: NotRequired[Annotated[str, "The day asked for, excluded."]]
    unread_only: NotRequired[Annotated[bool, "Only unread messages were asked for."]]


class Changed(Selected):
    """What a tool that changes messages answers (MarkEmails, MoveEmails, ...)."""

    success: Literal[True]
    folder: Annotated[str, "The folder of the messages."]
    dry_run: Annotated[bool, "True when nothing changed: the messages are those that would."]
    count: Annotated[int, "The messages changed (on a dry run: that would be)."]
    affected_ids: Annotated[list[int], "Their ids."]
    would_affect: NotRequired[Annotated[list[Summary], "On a dry run, the first of them."]]
    would_affect_shown: NotRequired[Annotated[int, "How many would_affect shows."]]
    missing_ids: NotRequired[MissingIds]
    note: NotRequired[str]


#: The files a message written by a tool carries.
AttachedFiles = Annotated[list[str], "The files attached."]


class Addressed(TypedDict):
    """Whom a message a tool wrote goes to, and its subject."""

    to: Recipients
    cc: list[str]
    bcc: list[str]
    subject: str


class Renamed(TypedDict):
    filename: Annotated[str, "The name it was sent under."]
    original: Annotated[str, "Its name in the message, which held a line break."]


class DraftSaved(TypedDict):
    """Where a draft was saved."""

    draft_id: Annotated[int | None, "The draft's id, for UpdateDraft and SendDraft (null "
                                    "when the server did not say)."]
    drafts_folder: str


class SentOrSaved(TypedDict):
    """What a reply or forward says it did: sent it, or saved it as a draft."""

    sent: NotRequired[Annotated[bool, "True when it was sent."]]
    recipients: NotRequired[Annotated[int, "The recipients the server took."]]
    refused: NotRequired[Refused]
    draft_id: NotRequired[Annotated[int | None, "The draft's id, when saved as a draft (null "
                                                "when the server did not say)."]]
    drafts_folder: NotRequired[Annotated[str, "Where the draft was saved."]]
