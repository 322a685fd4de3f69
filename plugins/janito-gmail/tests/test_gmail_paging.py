"""ReadEmails past the newest batch (a cursor of ids), and whole conversations by References."""

from __future__ import annotations

import datetime
from email.message import EmailMessage
from typing import Any

import _gmail_servers as servers
import pytest


def test_pages_walk_back_through_the_folder(gmail: Any, dovecot: servers.DovecotServer,
                                            folder: str, round_trips: Any) -> None:
    uids = servers.seed(dovecot, folder, [servers.plain_message(n) for n in range(1, 12)])
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        arguments: dict[str, Any] = {"folder": folder, "limit": 4, "max_body_chars": 0}
        if cursor is not None:
            arguments["before_id"] = cursor
        round_trips.reset()
        result = gmail.call("ReadEmails", arguments)
        assert result["success"] is True, result
        assert result["matching"] == 11
        pages += 1
        seen += [m["id"] for m in result["messages"]]
        if not result["has_more"]:
            assert "next_before_id" not in result
            break
        cursor = result["next_before_id"]
        assert cursor == min(m["id"] for m in result["messages"])
    assert seen == uids[::-1]  # every message once, newest first
    assert pages == 3
    # a page costs the same few round trips however deep it is
    assert round_trips.count <= 8


def test_pages_with_criteria_and_after_new_mail(gmail: Any, dovecot: servers.DovecotServer,
                                                folder: str) -> None:
    uids = servers.seed(dovecot, folder, [
        servers.plain_message(n, sender="ann@example.test" if n % 2 else "bob@example.test")
        for n in range(1, 9)])
    first = gmail.call("ReadEmails", folder=folder, sender="ann@", limit=2)
    assert [m["id"] for m in first["messages"]] == [uids[6], uids[4]]
    assert first["matching"] == 4 and first["has_more"] is True
    # mail arriving meanwhile does not shift the next page (unlike an offset would)
    servers.seed(dovecot, folder, [servers.plain_message(99, sender="ann@example.test")])
    second = gmail.call("ReadEmails", folder=folder, sender="ann@", limit=2,
                        before_id=first["next_before_id"])
    assert [m["id"] for m in second["messages"]] == [uids[2], uids[0]]
    assert second["has_more"] is False
    beyond = gmail.call("ReadEmails", folder=folder, before_id=uids[0])
    assert (beyond["count"], beyond["has_more"]) == (0, False)
    past_the_end = gmail.call("ReadEmails", folder=folder, before_id=uids[-1] + 1000, limit=3)
    assert past_the_end["messages"][0]["subject"] == "Message number 99"


@pytest.mark.parametrize("value", [0, -5])
def test_a_cursor_must_be_an_id(gmail: Any, folder: str, value: int) -> None:
    result = gmail.call("ReadEmails", folder=folder, before_id=value)
    assert result["error_type"] == "invalid_arguments"


def message(number: int, subject: str, *, sender: str = "Bob <bob@example.test>",
            parent: str | None = None, references: list[str] | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = servers.USER
    msg["Subject"] = subject
    msg["Date"] = datetime.datetime(2024, 6, 1, 8, 0, tzinfo=datetime.timezone.utc) + \
        datetime.timedelta(hours=number)
    msg["Message-ID"] = f"<t{number}@example.test>"
    if parent:
        msg["In-Reply-To"] = parent
        msg["References"] = " ".join(references or [parent])
    msg.set_content(f"text {number}\n")
    return msg.as_bytes()


def test_a_thread_by_references_includes_the_sent_replies(
        gmail: Any, dovecot: servers.DovecotServer, folder: str) -> None:
    root = message(1, "Offsite")
    mine = message(2, "Re: Offsite", sender=servers.USER, parent="<t1@example.test>")
    # a client that writes only In-Reply-To: found through the reply it answers
    late = message(3, "Re: Offsite", parent="<t2@example.test>",
                   references=["<t2@example.test>"])
    unrelated = message(4, "Other")
    inbox = servers.seed(dovecot, folder, [root, late, unrelated])
    servers.seed(dovecot, "Sent", [mine])
    result = gmail.call("ReadEmails", folder=folder, thread_of=inbox[0], max_body_chars=50)
    assert result["success"] is True, result
    assert result["thread_by"] == "References"
    assert result["order"] == "oldest first"
    assert [(m["folder"], m["message_id"]) for m in result["messages"]] == [
        (folder, "<t1@example.test>"), ("Sent", "<t2@example.test>"),
        (folder, "<t3@example.test>")]
    assert result["messages"][1]["body"] == "text 2\n"
    # asked from the middle, the same conversation
    middle = gmail.call("ReadEmails", folder=folder, thread_of=inbox[1])
    assert [m["message_id"] for m in middle["messages"]] == [
        "<t1@example.test>", "<t2@example.test>", "<t3@example.test>"]
    newest = gmail.call("ReadEmails", folder=folder, thread_of=inbox[0], limit=2)
    assert [m["message_id"] for m in newest["messages"]] == ["<t2@example.test>",
                                                             "<t3@example.test>"]
    assert newest["has_more"] is True


def test_a_thread_is_one_conversation_only(gmail: Any, folder: str) -> None:
    refused = gmail.call("ReadEmails", folder=folder, thread_of=1, sender="bob")
    assert refused["error_type"] == "invalid_arguments"
    missing = gmail.call("ReadEmails", folder=folder, thread_of=31337)
    assert missing["error_type"] == "not_found"
