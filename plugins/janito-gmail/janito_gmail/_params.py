"""The parameters the mail tools share, each with the description the model reads.

A tool writes ``ids: Ids = None`` and its ``run()`` docstring documents only what is its
own; janito reads a parameter's description from the docstring first, else from the
``Annotated`` text here, so one sentence serves every tool that chooses messages.
"""

from __future__ import annotations

import re
from typing import Annotated

from janito_core.constraints import Format, Ge, Len, MaxLen, Pattern

#: Every character str.splitlines() ends a line at. The email package refuses a header
#: value holding one (a raw ValueError), and a folder name holding one comes back from
#: Dovecot inside its own reply line, which then reads as a second reply.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: The line breaks and NUL as the inside of a regular-expression class, spelled with
#: escapes that Python and ECMA-262 (the dialect of JSON Schema) read alike.
NOT_IN_A_LINE = "".join(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                        for c in LINE_BREAKS + "\x00")
#: Finds a line break or NUL. Dispatch checks ONE_LINE with Python's re, where "$" also
#: matches before a final "\n", so what is sent or written is searched with this too.
BREAK = re.compile(f"[{NOT_IN_A_LINE}]")
#: One line of text: what a header or an IMAP search string can hold.
ONE_LINE = f"^[^{NOT_IN_A_LINE}]*$"
#: One line with something in it besides spaces (a folder or label name).
NAME = f"^[^{NOT_IN_A_LINE}]*[^\\s{NOT_IN_A_LINE}][^{NOT_IN_A_LINE}]*$"
MAX_IDS = 10_000
MAX_ATTACHMENTS = 25
MAX_LABELS = 20

MessageId = Annotated[int, Ge(1)]
Folder = Annotated[str, "The folder holding the messages.", Pattern(NAME)]
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
#: Workspace files to attach; a file's name becomes a header parameter of its part.
Attachments = Annotated[list[Annotated[str, Pattern(ONE_LINE)]], MaxLen(MAX_ATTACHMENTS)]
Labels = Annotated[list[Annotated[str, Pattern(NAME)]], MaxLen(MAX_LABELS)]
#: A message id from ReadEmails (digits), or a Message-ID such as <abc@host>.
MESSAGE_REFERENCE = r"^\s*(?:[1-9][0-9]*|<[^<>\s]+@[^<>\s]+>)\s*$"
UnreadOnly = Annotated[bool, "Only messages that are unread."]
