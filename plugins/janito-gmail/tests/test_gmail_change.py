"""MarkEmails, MoveEmails, TrashEmails and DeleteEmails: explicit selections, dry runs, counts."""

from __future__ import annotations

from typing import Any

import _gmail_servers as servers
import pytest

CHANGING = ("MarkEmails", "MoveEmails", "TrashEmails", "DeleteEmails")


def extra_arguments(tool: str) -> dict[str, Any]:
    return {"MarkEmails": {"mark": "read"}, "MoveEmails": {"destination": "Archive"}}.get(tool, {})


def seed_three(dovecot: servers.DovecotServer, folder: str) -> list[int]:
    return servers.seed(dovecot, folder, [servers.plain_message(n) for n in (1, 2, 3)])


def flags_of(dovecot: servers.DovecotServer, folder: str) -> dict[int, set[str]]:
    client = dovecot.client()
    try:
        client.select_folder(folder, readonly=True)
        data = client.fetch(client.search("ALL"), ["FLAGS"])
        return {uid: {f.decode() for f in item[b"FLAGS"]} for uid, item in data.items()}
    finally:
        client.logout()


def uids_in(dovecot: servers.DovecotServer, folder: str) -> list[int]:
    return sorted(flags_of(dovecot, folder))


def subjects_in(dovecot: servers.DovecotServer, folder: str) -> list[str]:
    client = dovecot.client()
    try:
        client.select_folder(folder, readonly=True)
        data = client.fetch(client.search("ALL"), ["BODY.PEEK[HEADER.FIELDS (SUBJECT)]"])
        return sorted(next(iter(v for k, v in item.items() if k.startswith(b"BODY")))
                      .decode().split(":", 1)[1].strip() for item in data.values())
    finally:
        client.logout()


@pytest.mark.parametrize("tool", CHANGING)
def test_a_selection_meaning_everything_is_refused(gmail: Any, dovecot: Any, folder: str,
                                                   tool: str) -> None:
    seed_three(dovecot, folder)
    for selection in ({}, {"ids": []}, {"query": "  "}):
        result = gmail.call(tool, {"folder": folder, **extra_arguments(tool), **selection})
        assert result["success"] is False, (tool, selection)
        assert result["error_type"] == "invalid_arguments"
    assert len(uids_in(dovecot, folder)) == 3
    assert all("\\Seen" not in f for f in flags_of(dovecot, folder).values())


@pytest.mark.parametrize("tool", CHANGING)
def test_dry_run_lists_and_changes_nothing(gmail: Any, dovecot: Any, folder: str,
                                           tool: str) -> None:
    uids = seed_three(dovecot, folder)
    before = flags_of(dovecot, folder)
    result = gmail.call(tool, {"folder": folder, **extra_arguments(tool), "ids": uids[:2],
                               "dry_run": True})
    assert result["success"] is True
    assert result["dry_run"] is True
    assert result["count"] == 2
    assert result["affected_ids"] == uids[:2]
    assert [row["subject"] for row in result["would_affect"]] == \
        ["Message number 1", "Message number 2"]
    assert flags_of(dovecot, folder) == before


@pytest.mark.parametrize("tool", CHANGING)
def test_unknown_folder_and_unknown_ids(gmail: Any, dovecot: Any, folder: str,
                                        tool: str) -> None:
    seed_three(dovecot, folder)
    unknown = gmail.call(tool, {"folder": "Nowhere", **extra_arguments(tool), "ids": [1]})
    assert unknown["success"] is False
    assert unknown["error_type"] == "folder_not_found"
    missing = gmail.call(tool, {"folder": folder, **extra_arguments(tool), "ids": [77, 78]})
    assert missing["success"] is False
    assert missing["error_type"] == "not_found"
    assert missing["missing_ids"] == [77, 78]
    assert len(uids_in(dovecot, folder)) == 3


def test_mark_read_unread_flagged_unflagged(gmail: Any, dovecot: Any, folder: str) -> None:
    uids = seed_three(dovecot, folder)
    result = gmail.call("MarkEmails", folder=folder, mark="read", ids=uids[:2])
    assert (result["success"], result["count"], result["affected_ids"]) == (True, 2, uids[:2])
    flags = flags_of(dovecot, folder)
    assert ["\\Seen" in flags[u] for u in uids] == [True, True, False]

    gmail.call("MarkEmails", folder=folder, mark="unread", ids=[uids[0]])
    gmail.call("MarkEmails", folder=folder, mark="flagged", subject="number 3")
    flags = flags_of(dovecot, folder)
    assert ["\\Seen" in flags[u] for u in uids] == [False, True, False]
    assert ["\\Flagged" in flags[u] for u in uids] == [False, False, True]

    gmail.call("MarkEmails", folder=folder, mark="unflagged", ids=uids)
    assert all("\\Flagged" not in f for f in flags_of(dovecot, folder).values())

    by_search = gmail.call("MarkEmails", folder=folder, mark="read", unread_only=True)
    assert by_search["count"] == 2
    nothing = gmail.call("MarkEmails", folder=folder, mark="read", unread_only=True)
    assert (nothing["success"], nothing["count"]) == (True, 0)

    partly = gmail.call("MarkEmails", folder=folder, mark="unread", ids=[uids[0], 555])
    assert (partly["count"], partly["missing_ids"]) == (1, [555])

    bad = gmail.call("MarkEmails", folder=folder, mark="starred", ids=uids)
    assert bad["success"] is False and bad["error_type"] == "invalid_arguments"


def test_move_to_a_folder_and_to_a_missing_one(gmail: Any, dovecot: Any, folder: str) -> None:
    uids = seed_three(dovecot, folder)
    destination = folder + "-dest"
    client = dovecot.client()
    client.create_folder(destination)
    client.logout()

    missing = gmail.call("MoveEmails", folder=folder, destination=folder + "-nope", ids=uids)
    assert missing["success"] is False and missing["error_type"] == "folder_not_found"
    same = gmail.call("MoveEmails", folder=folder, destination=folder, ids=uids)
    assert same["success"] is False and same["error_type"] == "invalid_arguments"

    moved = gmail.call("MoveEmails", folder=folder, destination=destination,
                       subject="number 2")
    assert (moved["success"], moved["count"], moved["destination"]) == (True, 1, destination)
    assert subjects_in(dovecot, destination) == ["Message number 2"]
    assert subjects_in(dovecot, folder) == ["Message number 1", "Message number 3"]


def test_trash_moves_to_the_special_use_trash(gmail: Any, dovecot: Any, folder: str) -> None:
    uids = seed_three(dovecot, folder)
    client = dovecot.client()
    client.select_folder("Trash")
    before = len(client.search("ALL"))
    client.logout()
    result = gmail.call("TrashEmails", folder=folder, ids=[uids[0]])
    assert (result["success"], result["count"], result["trash_folder"]) == (True, 1, "Trash")
    assert len(uids_in(dovecot, folder)) == 2
    client = dovecot.client()
    client.select_folder("Trash")
    assert len(client.search("ALL")) == before + 1
    client.logout()
    already = gmail.call("TrashEmails", folder="Trash", ids=[1])
    assert already["success"] is False and already["error_type"] == "invalid_arguments"


def test_delete_expunges_only_the_chosen_messages(gmail: Any, dovecot: Any, folder: str) -> None:
    uids = seed_three(dovecot, folder)
    # A message flagged \Deleted by someone else must survive our expunge.
    client = dovecot.client()
    client.select_folder(folder)
    client.add_flags([uids[2]], [b"\\Deleted"])
    client.logout()
    result = gmail.call("DeleteEmails", folder=folder, ids=[uids[0]])
    assert (result["success"], result["count"], result["affected_ids"]) == (True, 1, [uids[0]])
    assert uids_in(dovecot, folder) == uids[1:]
    by_search = gmail.call("DeleteEmails", folder=folder, subject="number 2")
    assert by_search["count"] == 1
    assert uids_in(dovecot, folder) == [uids[2]]
