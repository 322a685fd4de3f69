"""The parameters the mail tools share, each with the description the model reads.

A tool writes ``ids: Ids = None`` and its ``run()`` docstring documents only what is its
own; janito reads a parameter's description from the docstring first, else from the
``Annotated`` text here, so one sentence serves every tool that chooses messages.
"""

from __future__ import annotations

from typing import Annotated

Folder = Annotated[str, "The folder holding the messages."]
Ids = Annotated[list[int] | None, "The ids of the messages, as ReadEmails gave them."]
Query = Annotated[
    str | None,
    "Search text. On Gmail, Gmail search syntax (\"from:ann has:attachment newer_than:2d\"); "
    "elsewhere, words to find in the message.",
]
Sender = Annotated[str | None, "Only messages whose From contains this text."]
Subject = Annotated[str | None, "Only messages whose Subject contains this text."]
Since = Annotated[str | None, "Only messages received on or after this day (YYYY-MM-DD)."]
Before = Annotated[str | None, "Only messages received before this day (YYYY-MM-DD)."]
UnreadOnly = Annotated[bool, "Only messages that are unread."]
