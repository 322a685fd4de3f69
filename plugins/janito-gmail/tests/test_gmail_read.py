"""ListFolders, CountEmails and ReadEmails against the real Dovecot."""

from __future__ import annotations

import datetime
from typing import Any

import _gmail_servers as servers

PDF = b"%PDF-1.4\n" + bytes(range(256)) * 8


def seed_mix(dovecot: servers.DovecotServer, folder: str) -> list[int]:
    return servers.seed(dovecot, folder, [
        servers.plain_message(1),
        servers.html_message(2),
        servers.attachment_message(3, PDF),
        servers.plain_message(4, sender="zed@example.test", subject="Café déjà vu",
                              body="Grüße aus Köln — ünïcödé body.\n",
                              date=datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)),
    ])


def test_list_folders_with_counts_and_special_use(gmail: Any, dovecot: Any, folder: str) -> None:
    seed_mix(dovecot, folder)
    result = gmail.call("ListFolders", include_counts=True)
    assert result["success"] is True
    assert result["gmail"] is False
    by_name = {row["name"]: row for row in result["folders"]}
    assert by_name["INBOX"]["special_use"] == "inbox"
    assert by_name["Trash"]["special_use"] == "trash"
    assert by_name["Sent"]["special_use"] == "sent"
    assert by_name[folder]["messages"] == 4
    assert by_name[folder]["unread"] == 4
    assert result["count"] == len(result["folders"])
    plain = gmail.call("ListFolders")
    assert "messages" not in plain["folders"][0]


def test_count_emails_total_unread_and_search(gmail: Any, dovecot: Any, folder: str) -> None:
    seed_mix(dovecot, folder)
    servers.seed(dovecot, folder, [servers.plain_message(9)], seen=True)
    result = gmail.call("CountEmails", folder=folder)
    assert (result["success"], result["count"], result["total"], result["unread"]) == \
        (True, 5, 5, 4)
    assert gmail.call("CountEmails", folder=folder, unread_only=True)["count"] == 4
    assert gmail.call("CountEmails", folder=folder, sender="carol")["count"] == 1
    assert gmail.call("CountEmails", folder=folder, subject="number")["count"] == 2
    assert gmail.call("CountEmails", folder=folder, query="paragraph")["count"] == 1
    assert gmail.call("CountEmails", folder=folder, since="2024-04-01")["count"] == 1
    assert gmail.call("CountEmails", folder=folder, before="2024-03-02")["count"] == 2
    missing = gmail.call("CountEmails", folder="No such folder")
    assert missing["success"] is False
    assert missing["error_type"] == "folder_not_found"


def test_read_emails_fields_html_and_attachments(gmail: Any, dovecot: Any, folder: str) -> None:
    uids = seed_mix(dovecot, folder)
    result = gmail.call("ReadEmails", folder=folder)
    assert result["success"] is True
    assert result["count"] == result["matching"] == 4
    messages = result["messages"]
    assert [m["id"] for m in messages] == uids[::-1]  # newest first
    by_id = {m["id"]: m for m in messages}

    plain = by_id[uids[0]]
    assert plain["from"] == "Bob Sender <bob@example.test>"
    assert plain["to"] == [servers.USER]
    assert plain["subject"] == "Message number 1"
    assert plain["date"] == "2024-03-01T12:01:00+00:00"
    assert plain["message_id"] == "<msg-1@example.test>"
    assert plain["body"] == "Hello, this is message 1.\n"
    assert plain["body_format"] == "text"
    assert plain["unread"] is True and plain["flagged"] is False
    assert plain["attachments"] == []

    html = by_id[uids[1]]
    assert html["body_format"] == "html converted to text"
    assert "Big news" in html["body"]
    assert "First paragraph with bold text." in html["body"]
    assert "Second & last paragraph." in html["body"]
    assert "- one" in html["body"]
    for leak in ("<", "color: red", "var x"):
        assert leak not in html["body"]

    report = by_id[uids[2]]
    assert report["cc"] == ["dave@example.test"]
    assert report["body"] == "Please find the report attached.\n"
    names = [(a["index"], a["filename"], a["content_type"]) for a in report["attachments"]]
    assert names == [(1, "report.pdf", "application/pdf"), (2, "data.csv", "text/csv")]
    assert abs(report["attachments"][0]["size"] - len(PDF)) <= 3
    assert abs(report["attachments"][1]["size"] - len(b"a,b\n1,2\n")) <= 3

    unicode = by_id[uids[3]]
    assert unicode["subject"] == "Café déjà vu"
    assert unicode["body"] == "Grüße aus Köln — ünïcödé body.\n"


def test_reading_does_not_mark_messages_read(gmail: Any, dovecot: Any, folder: str) -> None:
    seed_mix(dovecot, folder)
    gmail.call("ReadEmails", folder=folder)
    again = gmail.call("ReadEmails", folder=folder, unread_only=True)
    assert again["count"] == 4


def test_limit_search_ids_and_body_cap(gmail: Any, dovecot: Any, folder: str) -> None:
    uids = seed_mix(dovecot, folder)
    newest = gmail.call("ReadEmails", folder=folder, limit=2)
    assert [m["id"] for m in newest["messages"]] == [uids[3], uids[2]]
    # every message of the folder matches; two more lie past this page
    assert (newest["matching"], newest["has_more"], newest["next_before_id"]) == \
        (4, True, uids[2])

    by_sender = gmail.call("ReadEmails", folder=folder, sender="news@example.test")
    assert [m["subject"] for m in by_sender["messages"]] == ["Newsletter 2"]

    unicode = gmail.call("ReadEmails", folder=folder, subject="déjà")
    assert [m["id"] for m in unicode["messages"]] == [uids[3]]

    chosen = gmail.call("ReadEmails", folder=folder, ids=[uids[0], 999])
    assert [m["id"] for m in chosen["messages"]] == [uids[0]]
    assert chosen["missing_ids"] == [999]

    capped = gmail.call("ReadEmails", folder=folder, ids=[uids[0]], max_body_chars=5)
    assert capped["messages"][0]["body"] == "Hello"
    assert capped["messages"][0]["body_truncated"] is True

    headers_only = gmail.call("ReadEmails", folder=folder, max_body_chars=0)
    assert all("body" not in m for m in headers_only["messages"])
    assert headers_only["count"] == 4


def test_long_bodies_are_cut_from_a_partial_fetch(gmail: Any, dovecot: Any, folder: str) -> None:
    long_text = "".join(f"line {n:05d} of a long message\n" for n in range(20000))
    (uid,) = servers.seed(dovecot, folder, [servers.plain_message(1, body=long_text)])
    result = gmail.call("ReadEmails", folder=folder, max_body_chars=1000)
    message = result["messages"][0]
    assert message["id"] == uid
    assert message["body"] == long_text[:1000]
    assert message["body_truncated"] is True


def test_empty_folder_and_bad_arguments(gmail: Any, folder: str) -> None:
    empty = gmail.call("ReadEmails", folder=folder)
    assert empty["success"] is True and empty["messages"] == [] and empty["count"] == 0
    for arguments, field in (
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"max_body_chars": -1}, "max_body_chars"),
        ({"since": "last tuesday"}, "since"),
        ({"ids": []}, "ids"),
        ({"ids": [0]}, "ids"),
        ({"subject": "a\r\nb"}, "subject"),
    ):
        result = gmail.call("ReadEmails", {"folder": folder, **arguments})
        assert result["success"] is False, arguments
        assert result["error_type"] == "invalid_arguments", arguments
        assert field in result["error"], arguments


def test_unknown_folder_and_unknown_ids(gmail: Any, dovecot: Any, folder: str) -> None:
    seed_mix(dovecot, folder)
    unknown = gmail.call("ReadEmails", folder=folder + "x")
    assert unknown["success"] is False
    assert unknown["error_type"] == "folder_not_found"
    assert folder in unknown["suggestions"]
    missing = gmail.call("ReadEmails", folder=folder, ids=[4242])
    assert missing["success"] is False
    assert missing["error_type"] == "not_found"
    assert missing["missing_ids"] == [4242]


def test_search_text_with_imap_special_characters(gmail: Any, dovecot: Any, folder: str) -> None:
    servers.seed(dovecot, folder, [servers.plain_message(1, subject='Quote "this" (and) *that*')])
    for text in ('"this"', "(and)", "*that*", "\\"):
        result = gmail.call("ReadEmails", folder=folder, subject=text)
        assert result["success"] is True, result
    assert gmail.call("CountEmails", folder=folder, subject="(and) *that*")["count"] == 1


def test_many_distinct_body_sections_stay_bounded(gmail: Any, dovecot: Any, folder: str,
                                                  round_trips: Any) -> None:
    from email.mime.application import MIMEApplication
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    raw = []
    for k in range(9):  # the body is section k+1: k attachments come first
        outer = MIMEMultipart("mixed")
        outer["Subject"] = f"layout {k}"
        outer["From"] = "layouts@example.test"
        for n in range(k):
            part = MIMEApplication(b"\x00\x01" * 50)
            part.add_header("Content-Disposition", "attachment", filename=f"f{n}.bin")
            outer.attach(part)
        outer.attach(MIMEText(f"body of layout {k}", "plain"))
        raw.append(outer.as_bytes())
    servers.seed(dovecot, folder, raw)
    round_trips.reset()
    result = gmail.call("ReadEmails", folder=folder, limit=50)
    assert result["success"] is True
    by_subject = {m["subject"]: m for m in result["messages"]}
    for k in range(9):
        message = by_subject[f"layout {k}"]
        assert message["body"].strip() == f"body of layout {k}"
        assert message["body_truncated"] is False
        assert len(message["attachments"]) == k
    # connect+login 2, EXAMINE, CAPABILITY, SEARCH, structure FETCH, 6 section FETCHes,
    # one FETCH for the rest, LOGOUT
    assert round_trips.count == 14


def test_folder_names_beyond_ascii(gmail: Any, dovecot: Any, folder: str) -> None:
    name = f"{folder}-Reçus/Été"
    servers.seed(dovecot, name, [servers.plain_message(1)])
    listed = [row["name"] for row in gmail.call("ListFolders")["folders"]]
    assert name in listed
    result = gmail.call("ReadEmails", folder=name)
    assert result["success"] is True and result["count"] == 1
    moved = gmail.call("MoveEmails", folder=name, destination=folder, ids=[1])
    assert moved["success"] is True and moved["count"] == 1
