"""Where Gmail differs: its folders, its labels, its threads, its search.

``google`` talks to a second real Dovecot laid out as Gmail presents itself over IMAP
([Gmail]/All Mail, /Drafts, /Sent Mail, /Spam, /Starred, /Trash with their special uses),
through the stand-in proxy that adds the X-GM-* extensions (see _gmail_standin.py).
"""

from __future__ import annotations

from typing import Any

import _gmail_servers as servers
import _gmail_standin as standin


def uids_in(server: Any, folder: str) -> list[int]:
    client = server.client()
    try:
        client.select_folder(folder, readonly=True)
        return sorted(client.search("ALL"))
    finally:
        client.logout()


def subjects(server: Any, folder: str) -> set[str]:
    client = server.client()
    try:
        client.select_folder(folder, readonly=True)
        data = client.fetch(client.search("ALL"), ["BODY.PEEK[HEADER.FIELDS (SUBJECT)]"])
        return {next(v for k, v in item.items() if k.startswith(b"BODY")).decode().strip()
                for item in data.values()}
    finally:
        client.logout()


def test_the_folders_are_gmails(google: Any) -> None:
    listed = google.call("ListFolders")
    assert listed["gmail"] is True
    uses = {row["name"]: row["special_use"] for row in listed["folders"]}
    for name, use in (("[Gmail]/All Mail", "all"), ("[Gmail]/Trash", "trash"),
                      ("[Gmail]/Sent Mail", "sent"), ("[Gmail]/Drafts", "drafts"),
                      ("INBOX", "inbox")):
        assert uses[name] == use


def test_trash_delete_move_and_draft_go_to_gmails_places(
        google: Any, gmail_dovecot: servers.DovecotServer, label: str) -> None:
    uids = servers.seed(gmail_dovecot, label, [servers.plain_message(n, subject=f"G{n}")
                                               for n in (1, 2, 3)])
    trashed = google.call("TrashEmails", folder=label, ids=[uids[0]])
    assert trashed["success"] is True, trashed
    assert trashed["trash_folder"] == "[Gmail]/Trash"
    assert "Subject: G1" in subjects(gmail_dovecot, "[Gmail]/Trash")

    moved = google.call("MoveEmails", folder=label, ids=[uids[1]], destination="[Gmail]/Spam")
    assert moved["success"] is True, moved
    assert "Subject: G2" in subjects(gmail_dovecot, "[Gmail]/Spam")
    assert uids_in(gmail_dovecot, label) == [uids[2]]

    removed = google.call("DeleteEmails", folder=label, ids=[uids[2]])
    assert removed["success"] is True
    assert "only removes that label" in removed["note"]  # what Gmail does with it

    in_trash = google.call("ReadEmails", folder="[Gmail]/Trash", subject="G1")
    (message,) = in_trash["messages"]
    gone = google.call("DeleteEmails", folder="[Gmail]/Trash", ids=[message["id"]])
    assert gone["success"] is True
    assert "Subject: G1" not in subjects(gmail_dovecot, "[Gmail]/Trash")

    draft = google.call("CreateDraft", to=["ann@example.test"], subject="Gmail draft", body="x")
    assert draft["drafts_folder"] == "[Gmail]/Drafts"
    assert "Subject: Gmail draft" in subjects(gmail_dovecot, "[Gmail]/Drafts")
    listed = google.call("ListDrafts")
    assert listed["drafts_folder"] == "[Gmail]/Drafts"
    assert any(d["subject"] == "Gmail draft" for d in listed["drafts"])


def test_labels_are_added_and_removed_in_place(google: Any,
                                               gmail_dovecot: servers.DovecotServer,
                                               label: str) -> None:
    uids = servers.seed(gmail_dovecot, label, [servers.plain_message(n) for n in (1, 2)])
    dry = google.call("LabelEmails", folder=label, ids=uids, add=["Projects/2024"],
                      dry_run=True)
    assert dry["success"] is True and dry["count"] == 2
    added = google.call("LabelEmails", folder=label, ids=uids,
                        add=["Projects/2024", "Reçus", "starred"])
    assert added["success"] is True, added
    assert added["added"] == ["Projects/2024", "Reçus", "\\Starred"]
    read = google.call("ReadEmails", folder=label)
    for message in read["messages"]:
        assert set(message["labels"]) == {"Projects/2024", "Reçus", "\\Starred"}
        assert "thread_id" in message
    removed = google.call("LabelEmails", folder=label, ids=[uids[0]], remove=["Reçus"])
    assert removed["success"] is True
    by_id = {m["id"]: m for m in google.call("ReadEmails", folder=label)["messages"]}
    assert "Reçus" not in by_id[uids[0]]["labels"]
    assert "Reçus" in by_id[uids[1]]["labels"]
    assert uids_in(gmail_dovecot, label) == uids  # labelling moved nothing
    labels = google.call("ListLabels")
    assert labels["success"] is True
    names = {entry["name"] for entry in labels["labels"]}
    assert {"Projects/2024", "Reçus", label} <= names
    assert not any(name.startswith("[Gmail]") for name in names)
    system = {entry["name"]: entry["special_use"] for entry in labels["system"]}
    assert system["[Gmail]/Trash"] == "trash" and system["INBOX"] == "inbox"
    found = google.call("ReadEmails", folder=label, query="label:Projects/2024")
    assert found["count"] == 2  # Gmail search syntax goes to the server as X-GM-RAW


def test_labelling_refuses_what_cannot_work(google: Any, label: str) -> None:
    for nothing in ({}, {"add": [], "remove": ["x"]}, {"add": None, "remove": None}):
        refused = google.call("LabelEmails", {"folder": label, "ids": [1], **nothing})
        # refused by dispatch, as the schema says ("Give at least one of add or remove.")
        assert refused["error_type"] == "invalid_arguments" and refused["details"], refused
    every = google.call("LabelEmails", folder=label, add=["x"])
    assert every["error_type"] == "invalid_arguments" and "every message" in every["error"]
    both = google.call("LabelEmails", folder=label, ids=[1], add=["x"], remove=["x"])
    assert both["error_type"] == "invalid_arguments"


def test_on_a_plain_imap_server_labels_are_not_available(gmail: Any, dovecot: Any,
                                                         folder: str) -> None:
    (uid,) = servers.seed(dovecot, folder, [servers.plain_message(1)])
    for result in (gmail.call("ListLabels"),
                   gmail.call("LabelEmails", folder=folder, ids=[uid], add=["Work"])):
        assert result["success"] is False
        assert result["error_type"] == "unsupported"
        assert result["error"].startswith("labels are not available")
        assert "X-GM-EXT-1" in result["error"]


def test_a_whole_thread_comes_from_all_mail_by_gmails_thread_id(
        google: Any, gmail_dovecot: servers.DovecotServer) -> None:
    root = servers.plain_message(501, subject="Trip")
    reply = _reply(502, "<msg-501@example.test>", ["<msg-501@example.test>"],
                   sender=servers.USER)
    again = _reply(503, "<msg-502@example.test>",
                   ["<msg-501@example.test>", "<msg-502@example.test>"])
    other = servers.plain_message(504, subject="Unrelated")
    # on Gmail every message is in All Mail; the inbox holds those received
    servers.seed(gmail_dovecot, "[Gmail]/All Mail", [root, reply, again, other])
    inbox = servers.seed(gmail_dovecot, "INBOX", [again])
    result = google.call("ReadEmails", folder="INBOX", thread_of=inbox[0])
    assert result["success"] is True, result
    assert result["thread_by"] == "X-GM-THRID"
    assert [m["message_id"] for m in result["messages"]] == [
        "<msg-501@example.test>", "<msg-502@example.test>", "<msg-503@example.test>"]
    assert {m["folder"] for m in result["messages"]} == {"[Gmail]/All Mail"}
    assert len({m["thread_id"] for m in result["messages"]}) == 1


def test_the_stand_in_keeps_labels_out_of_flags(gmail_standin: standin.GmailStandIn,
                                                gmail_dovecot: servers.DovecotServer,
                                                label: str) -> None:
    (uid,) = servers.seed(gmail_dovecot, label, [servers.plain_message(1)])
    client = gmail_standin.client()
    try:
        client.select_folder(label)
        client.add_gmail_labels([uid], ["Work"], silent=True)
        flags = client.get_flags([uid])[uid]
        assert not any(f.startswith(b"gl_") for f in flags)
        assert client.get_gmail_labels([uid])[uid] == ["Work"]
    finally:
        client.logout()


def _reply(number: int, parent: str, references: list[str], *,
           sender: str = "bob@example.test") -> bytes:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "someone@example.test"
    msg["Subject"] = "Re: Trip"
    msg["Date"] = f"Sat, 02 Mar 2024 1{number % 10}:00:00 +0100"
    msg["Message-ID"] = f"<msg-{number}@example.test>"
    msg["In-Reply-To"] = parent
    msg["References"] = " ".join(references)
    msg.set_content(f"reply {number}\n")
    return msg.as_bytes()
