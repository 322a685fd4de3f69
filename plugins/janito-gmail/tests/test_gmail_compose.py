"""Composing as people do: attachments from the workspace, size limits, reply-all, forward."""

from __future__ import annotations

import datetime
import os
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import _gmail_servers as servers
import pytest


def original(**headers: str) -> bytes:
    msg = EmailMessage()
    defaults = {
        "From": "Bob Sender <bob@example.test>",
        "To": f"Alice <{servers.USER}>, carol@example.test",
        "Cc": "dave@example.test, ALICE@example.test",
        "Subject": "Quarterly numbers",
        "Message-ID": "<q1@example.test>",
        "References": "<q0@example.test>",
        "In-Reply-To": "<q0@example.test>",
    }
    for name, value in {**defaults, **headers}.items():
        if value:
            msg[name] = value
    msg["Date"] = datetime.datetime(2024, 5, 2, 9, 30, tzinfo=datetime.timezone.utc)
    msg.set_content("The numbers are in.\nSee the sheet.\n")
    msg.add_alternative("<p>The numbers are <b>in</b>.</p>", subtype="html")
    msg.add_attachment(b"q,total\n1,42\n", maintype="text", subtype="csv",
                       filename="numbers.csv")
    return msg.as_bytes()


# -- attachments --------------------------------------------------------------------------


def test_send_with_workspace_attachments_and_html(gmail: Any,
                                                  outbox: servers.SmtpServer) -> None:
    (gmail.workspace / "docs").mkdir()
    (gmail.workspace / "docs" / "report.pdf").write_bytes(b"%PDF-1.4 " + bytes(range(256)) * 40)
    (gmail.workspace / "notes.txt").write_text("plain notes\n", encoding="utf-8")
    result = gmail.call("SendEmail", to=["ann@example.test"], subject="Files", body="See both.",
                        html_body="<p>See <b>both</b>.</p>",
                        attachments=["docs/report.pdf", "notes.txt"])
    assert result["success"] is True, result
    assert [a["filename"] for a in result["attachments"]] == ["report.pdf", "notes.txt"]
    (arrived,) = outbox.wait_for(1)
    msg = arrived.message
    assert msg.get_content_type() == "multipart/mixed"
    assert msg.get_body(("plain",)).get_content().strip() == "See both."
    assert "<b>both</b>" in msg.get_body(("html",)).get_content()
    parts = {p.get_filename(): p for p in msg.iter_attachments()}
    assert parts["report.pdf"].get_content_type() == "application/pdf"
    assert parts["report.pdf"].get_content() == (gmail.workspace / "docs" / "report.pdf") \
        .read_bytes()
    assert parts["notes.txt"].get_content_type() == "text/plain"
    assert parts["notes.txt"].get_content() == "plain notes\n"


@pytest.mark.parametrize("path, error_type", [
    ("../outside.txt", "outside_workspace"),
    ("/etc/hostname", "outside_workspace"),
    ("missing.txt", "not_found"),
    ("a-folder", "invalid_arguments"),
])
def test_attachments_come_only_from_the_workspace(gmail: Any, outbox: servers.SmtpServer,
                                                  path: str, error_type: str) -> None:
    (gmail.workspace / "a-folder").mkdir()
    (gmail.workspace.parent / "outside.txt").write_text("secret outside", encoding="utf-8")
    result = gmail.call("SendEmail", to=["ann@example.test"], body="x", attachments=[path])
    assert result["success"] is False
    assert result["error_type"] == error_type, result
    assert outbox.wait_for(1, timeout=0.3) == []


def test_attachment_limits_are_enforced_before_reading_or_sending(
        gmail: Any, outbox: servers.SmtpServer) -> None:
    big = gmail.workspace / "big.bin"
    with open(big, "wb") as handle:  # sparse: its size says 26 MB, nothing needs reading
        handle.truncate(26_000_000)
    result = gmail.call("SendEmail", to=["ann@example.test"], body="x", attachments=["big.bin"])
    assert result["error_type"] == "too_large"
    assert "26.0 MB" in result["error"] and "25.0 MB" in result["error"]
    for n in range(26):
        (gmail.workspace / f"f{n}.txt").write_text("x", encoding="utf-8")
    many = gmail.call("SendEmail", to=["ann@example.test"], body="x",
                      attachments=[f"f{n}.txt" for n in range(26)])
    assert many["error_type"] == "invalid_arguments" and "at most 25" in many["error"]
    assert outbox.wait_for(1, timeout=0.3) == []


def test_the_size_the_smtp_server_announces_is_respected(
        gmail: Any, dovecot: servers.DovecotServer, monkeypatch: pytest.MonkeyPatch) -> None:
    small = servers.SmtpServer(dovecot.cert, dovecot.root / "key.pem", servers.USER,
                               servers.PASSWORD, size_limit=4000)
    try:
        for name, value in small.env().items():
            monkeypatch.setenv(name, value)
        (gmail.workspace / "photo.jpg").write_bytes(os.urandom(6000))
        result = gmail.call("SendEmail", to=["ann@example.test"], body="x",
                            attachments=["photo.jpg"])
        assert result["error_type"] == "too_large"
        assert f"the SMTP server 127.0.0.1:{small.port} accepts at most 4.0 kB" in result["error"]
        assert result["limit"] == 4000
        assert small.wait_for(1, timeout=0.3) == []
        assert gmail.call("SendEmail", to=["ann@example.test"], body="small")["success"] is True
    finally:
        small.stop()


# -- replies --------------------------------------------------------------------------------


def test_reply_all_works_out_the_recipients(gmail: Any, dovecot: servers.DovecotServer,
                                            folder: str, outbox: servers.SmtpServer) -> None:
    (uid,) = servers.seed(dovecot, folder, [original()])
    result = gmail.call("ReplyToEmail", id=uid, folder=folder, reply_all=True,
                        body="Thanks, looks good.", html_body="<p>Thanks, looks <i>good</i>.</p>")
    assert result["success"] is True, result
    # the author first, then the others; the account's own address (any case) left out
    assert result["to"] == ["Bob Sender <bob@example.test>", "carol@example.test"]
    assert result["cc"] == ["dave@example.test"]
    assert result["subject"] == "Re: Quarterly numbers"
    (arrived,) = outbox.wait_for(1)
    assert sorted(arrived.recipients) == ["bob@example.test", "carol@example.test",
                                          "dave@example.test"]
    msg = arrived.message
    assert msg["In-Reply-To"] == "<q1@example.test>"
    assert msg["References"] == "<q0@example.test> <q1@example.test>"
    text = msg.get_body(("plain",)).get_content()
    assert text.startswith("Thanks, looks good.\n\nOn Thu, 02 May 2024 at 09:30, "
                           "Bob Sender <bob@example.test> wrote:\n> The numbers are in.")
    assert "> See the sheet." in text
    html = msg.get_body(("html",)).get_content()
    assert html.startswith("<p>Thanks, looks <i>good</i>.</p>")
    assert "<blockquote>The numbers are in.<br>" in html


def test_reply_goes_to_reply_to_and_can_skip_the_quote(
        gmail: Any, dovecot: servers.DovecotServer, folder: str,
        outbox: servers.SmtpServer) -> None:
    (uid,) = servers.seed(dovecot, folder, [original(**{"Reply-To": "list@example.test",
                                                        "Subject": "Re: Quarterly numbers"})])
    result = gmail.call("ReplyToEmail", id=uid, folder=folder, body="Noted.", quote=False,
                        cc=["boss@example.test"])
    assert result["success"] is True, result
    assert (result["to"], result["cc"]) == (["list@example.test"], ["boss@example.test"])
    assert result["subject"] == "Re: Quarterly numbers"  # no "Re: Re:"
    (arrived,) = outbox.wait_for(1)
    assert arrived.message.get_content().strip() == "Noted."


def test_replying_to_ones_own_message_goes_to_its_recipients(
        gmail: Any, dovecot: servers.DovecotServer, folder: str) -> None:
    mine = original(From=f"Alice <{servers.USER}>", To="bob@example.test",
                    Cc="carol@example.test")
    (uid,) = servers.seed(dovecot, folder, [mine])
    one = gmail.call("ReplyToEmail", id=uid, folder=folder, body="Reminder", draft=True)
    assert (one["to"], one["cc"]) == (["bob@example.test"], [])
    everyone = gmail.call("ReplyToEmail", id=uid, folder=folder, body="Reminder",
                          reply_all=True, draft=True)
    assert (everyone["to"], everyone["cc"]) == (["bob@example.test"], ["carol@example.test"])


def test_a_reply_can_be_drafted_instead(gmail: Any, dovecot: servers.DovecotServer,
                                        folder: str, outbox: servers.SmtpServer) -> None:
    (uid,) = servers.seed(dovecot, folder, [original()])
    result = gmail.call("ReplyToEmail", id=uid, folder=folder, body="Draft answer",
                        reply_all=True, bcc=["me-too@example.test"], draft=True)
    assert result["success"] is True, result
    assert result["drafts_folder"] == "Drafts" and "sent" not in result
    assert outbox.wait_for(1, timeout=0.3) == []
    client = dovecot.client()
    try:
        client.select_folder("Drafts", readonly=True)
        item = client.fetch([result["draft_id"]], ["FLAGS", "BODY.PEEK[]"])[result["draft_id"]]
    finally:
        client.logout()
    assert b"\\Draft" in item[b"FLAGS"]
    stored = item[b"BODY[]"]
    assert b"In-Reply-To: <q1@example.test>" in stored
    assert b"Bcc: me-too@example.test" in stored


def test_replying_to_a_missing_message(gmail: Any, folder: str) -> None:
    result = gmail.call("ReplyToEmail", id=4242, folder=folder, body="x")
    assert result["error_type"] == "not_found"


# -- forwards -------------------------------------------------------------------------------


def test_forward_with_its_attachments(gmail: Any, dovecot: servers.DovecotServer, folder: str,
                                      outbox: servers.SmtpServer) -> None:
    (gmail.workspace / "extra.txt").write_text("added\n", encoding="utf-8")
    (uid,) = servers.seed(dovecot, folder, [original()])
    result = gmail.call("ForwardEmail", id=uid, folder=folder, to=["erin@example.test"],
                        body="FYI, see below.", attachments=["extra.txt"])
    assert result["success"] is True, result
    assert result["subject"] == "Fwd: Quarterly numbers"
    assert result["attachments"] == ["numbers.csv", "extra.txt"]
    (arrived,) = outbox.wait_for(1)
    msg = arrived.message
    text = msg.get_body(("plain",)).get_content()
    assert text.startswith("FYI, see below.\n\n---------- Forwarded message ---------\n"
                           "From: Bob Sender <bob@example.test>\n")
    assert "Subject: Quarterly numbers" in text and "The numbers are in." in text
    assert "<b>in</b>" in msg.get_body(("html",)).get_content()
    parts = {p.get_filename(): p.get_content() for p in msg.iter_attachments()}
    assert parts == {"numbers.csv": "q,total\n1,42\n", "extra.txt": "added\n"}
    assert msg["In-Reply-To"] == "<q1@example.test>"


def test_forward_without_attachments(gmail: Any, dovecot: servers.DovecotServer, folder: str,
                                     outbox: servers.SmtpServer) -> None:
    (uid,) = servers.seed(dovecot, folder, [original(Subject="Fwd: Quarterly numbers")])
    result = gmail.call("ForwardEmail", id=uid, folder=folder, to=["erin@example.test"],
                        include_attachments=False)
    assert result["success"] is True, result
    assert result["subject"] == "Fwd: Quarterly numbers"
    (arrived,) = outbox.wait_for(1)
    assert list(arrived.message.iter_attachments()) == []
    assert arrived.message.get_body(("plain",)).get_content().startswith(
        "---------- Forwarded message ---------")


def test_forwarding_needs_recipients(gmail: Any, folder: str) -> None:
    result = gmail.call("ForwardEmail", id=1, folder=folder, to=[])
    assert result["error_type"] == "invalid_arguments"


def test_an_attachment_path_escape_is_refused_for_every_composing_tool(
        gmail: Any, dovecot: servers.DovecotServer, folder: str, tmp_path: Path,
        outbox: servers.SmtpServer) -> None:
    (uid,) = servers.seed(dovecot, folder, [original()])
    outside = ["../../etc/passwd"]
    calls = [
        ("ReplyToEmail", {"id": uid, "folder": folder, "body": "x", "attachments": outside}),
        ("ForwardEmail", {"id": uid, "folder": folder, "to": ["e@example.test"],
                          "attachments": outside}),
        ("CreateDraft", {"body": "x", "attachments": outside}),
    ]
    for name, arguments in calls:
        result = gmail.call(name, arguments)
        assert result["error_type"] == "outside_workspace", (name, result)
    assert outbox.wait_for(1, timeout=0.3) == []
