"""Round trips: constant in the number of messages; one connection per call."""

from __future__ import annotations

from typing import Any

import _gmail_servers as servers
import pytest


def read_and_count(gmail: Any, dovecot: Any, round_trips: Any, folder: str,
                   limit: int) -> tuple[int, list[str], dict[str, Any]]:
    """(client-side tagged commands, server-side commands of the one session, result)."""
    before = len(dovecot.sessions())
    round_trips.reset()
    result = gmail.call("ReadEmails", folder=folder, limit=limit)
    client_count = round_trips.count
    sessions = dovecot.wait_for_sessions(before + 1)
    assert len(sessions) == before + 1, "ReadEmails must use exactly one connection"
    return client_count, dovecot.tagged_commands(sessions[-1]), result


def test_read_emails_round_trips_do_not_grow_with_messages(gmail: Any, dovecot: Any,
                                                           round_trips: Any) -> None:
    servers.seed_many(dovecot, "Bench20", servers.mixed_messages(20))
    servers.seed_many(dovecot, "Bench200", servers.mixed_messages(200))
    small = read_and_count(gmail, dovecot, round_trips, "Bench20", 20)
    large = read_and_count(gmail, dovecot, round_trips, "Bench200", 200)
    assert small[2]["count"] == 20
    assert large[2]["count"] == 200
    assert all(m["body"] for m in large[2]["messages"])
    assert sum(1 for m in large[2]["messages"] if m["attachments"]) == 66
    print("client round trips", small[0], large[0], "server commands", small[1], large[1])
    # the same commands, whatever the number of messages
    assert small[1] == large[1], (small[1], large[1])
    assert small[0] == large[0]
    assert large[1].count("UID FETCH") == 3  # headers and structure, then one per body section
    assert large[0] <= 12, large


@pytest.mark.parametrize("tool,arguments", [
    ("ListFolders", {"include_counts": False}),
    ("CountEmails", {"folder": "INBOX"}),
    ("ReadEmails", {"folder": "INBOX", "limit": 5}),
    ("MarkEmails", {"folder": "INBOX", "mark": "read", "subject": "nothing-matches-this"}),
    ("MoveEmails", {"folder": "INBOX", "destination": "Archive", "ids": [1], "dry_run": True}),
    ("TrashEmails", {"folder": "INBOX", "subject": "nothing-matches-this"}),
    ("DeleteEmails", {"folder": "INBOX", "subject": "nothing-matches-this"}),
    ("SaveAttachment", {"folder": "INBOX", "id": 999}),
])
def test_one_connection_per_call(gmail: Any, dovecot: Any, tool: str,
                                 arguments: dict[str, Any]) -> None:
    before = len(dovecot.sessions())
    gmail.call(tool, arguments)
    assert len(dovecot.wait_for_sessions(before + 1)) == before + 1
