"""The parameters the mail tools share, each with the description the model reads.

A tool writes ``ids: Ids = None`` and its ``run()`` docstring documents only what is its
own; janito reads a parameter's description from the docstring first, else from the
``Annotated`` text here, so one sentence serves every tool that chooses messages.
"""

from __future__ import annotations

from typing import Annotated

from janito_core.constraints import Format, Ge, Len, MaxLen, Pattern

#: One line of text: what a header or an IMAP search string can hold.
ONE_LINE = r"^[^\r\n\x00]*$"
#: One line with something in it besides spaces (a folder or label name).
NAME = r"^[^\r\n\x00]*[^\s\x00][^\r\n\x00]*$"
MAX_IDS = 10_000
MAX_ATTACHMENTS = 25
MAX_LABELS = 20

MessageId = Annotated[int, Ge(1)]
Folder = Annotated[str, "The folder holding the messages."]
Ids = Annotated[list[MessageId] | None, "The ids of the messages, as ReadEmails gave them.",
                Len(1, MAX_IDS)]
Query = Annotated[
    str | None,
    "Search text. On Gmail, Gmail search syntax (\"from:ann has:attachment newer_than:2d\"); "
    "elsewhere, words to find in the message.",
    Pattern(ONE_LINE),
]
Sender = Annotated[str | None, "Only messages whose From contains this text.", Pattern(ONE_LINE)]
Subject = Annotated[str | None, "Only messages whose Subject contains this text.",
                    Pattern(ONE_LINE)]
Since = Annotated[str | None, "Only messages received on or after this day (YYYY-MM-DD).",
                  Format("date")]
Before = Annotated[str | None, "Only messages received before this day (YYYY-MM-DD).",
                   Format("date")]
OneLine = Annotated[str, Pattern(ONE_LINE)]
#: Addresses, each "ann@example.com" or "Ann Lee <ann@example.com>".
Addresses = list[Annotated[str, Pattern(ONE_LINE)]]
#: Workspace files to attach.
Attachments = Annotated[list[str], MaxLen(MAX_ATTACHMENTS)]
Labels = Annotated[list[Annotated[str, Pattern(NAME)]], MaxLen(MAX_LABELS)]
#: A message id from ReadEmails (digits), or a Message-ID such as <abc@host>.
MESSAGE_REFERENCE = r"^\s*(?:[1-9][0-9]*|<[^<>\s]+@[^<>\s]+>)\s*$"
UnreadOnly = Annotated[bool, "Only messages that are unread."]
