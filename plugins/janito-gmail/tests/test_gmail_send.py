"""SendEmail through a real SMTP server (aiosmtpd, STARTTLS, AUTH) on loopback."""

from __future__ import annotations

from typing import Any

import _gmail_servers as servers
import pytest


def test_send_plain_with_cc_and_bcc(gmail: Any, outbox: servers.SmtpServer) -> None:
    result = gmail.call("SendEmail", to=["Ann <ann@example.test>"], cc=["cc@example.test"],
                        bcc=["hidden@example.test"], subject="Hello there",
                        body="Line one\nLine two — ünïcödé\n")
    assert result["success"] is True, result
    assert result["recipients"] == 3
    (arrived,) = outbox.wait_for(1)
    assert arrived.mail_from == servers.USER
    assert sorted(arrived.recipients) == ["ann@example.test", "cc@example.test",
                                          "hidden@example.test"]
    msg = arrived.message
    assert msg["From"] == servers.USER
    assert msg["To"] == "Ann <ann@example.test>"
    assert msg["Cc"] == "cc@example.test"
    assert msg["Bcc"] is None
    assert b"hidden@example.test" not in arrived.raw
    assert msg["Subject"] == "Hello there"
    assert msg["Message-ID"] == result["message_id"]
    assert msg.get_content() == "Line one\nLine two — ünïcödé\n"


def test_send_with_html_alternative(gmail: Any, outbox: servers.SmtpServer) -> None:
    result = gmail.call("SendEmail", to=["ann@example.test"], subject="Both",
                        body="plain words", html_body="<p>html <b>words</b></p>")
    assert result["success"] is True
    (arrived,) = outbox.wait_for(1)
    assert arrived.message.get_content_type() == "multipart/alternative"
    plain = arrived.message.get_body(("plain",))
    html = arrived.message.get_body(("html",))
    assert plain.get_content().strip() == "plain words"
    assert "<b>words</b>" in html.get_content()


def test_reply_by_id_threads_under_the_original(gmail: Any, dovecot: Any, folder: str,
                                                outbox: servers.SmtpServer) -> None:
    from email.message import EmailMessage

    original = EmailMessage()
    original["From"] = "Bob <bob@example.test>"
    original["To"] = servers.USER
    original["Subject"] = "Project plan"
    original["Message-ID"] = "<third@example.test>"
    original["In-Reply-To"] = "<second@example.test>"
    original["References"] = "<first@example.test> <second@example.test>"
    original.set_content("What do you think?")
    (uid,) = servers.seed(dovecot, folder, [original.as_bytes()])

    result = gmail.call("SendEmail", to=["bob@example.test"], body="Looks good.",
                        in_reply_to=str(uid), reply_folder=folder)
    assert result["success"] is True, result
    assert result["subject"] == "Re: Project plan"
    (arrived,) = outbox.wait_for(1)
    msg = arrived.message
    assert msg["In-Reply-To"] == "<third@example.test>"
    assert msg["References"].split() == ["<first@example.test>", "<second@example.test>",
                                         "<third@example.test>"]
    assert msg["Subject"] == "Re: Project plan"


def test_reply_by_message_id_header(gmail: Any, outbox: servers.SmtpServer) -> None:
    result = gmail.call("SendEmail", to=["bob@example.test"], body="ok", subject="Re: x",
                        in_reply_to="<abc.123@mail.example.test>")
    assert result["success"] is True
    (arrived,) = outbox.wait_for(1)
    assert arrived.message["In-Reply-To"] == "<abc.123@mail.example.test>"
    assert arrived.message["References"] == "<abc.123@mail.example.test>"


def test_reply_to_an_unknown_message_sends_nothing(gmail: Any, folder: str,
                                                   outbox: servers.SmtpServer) -> None:
    result = gmail.call("SendEmail", to=["bob@example.test"], body="x", in_reply_to="4711",
                        reply_folder=folder)
    assert result["success"] is False
    assert result["error_type"] == "not_found"
    unknown_folder = gmail.call("SendEmail", to=["bob@example.test"], body="x",
                                in_reply_to="1", reply_folder="No such folder")
    assert unknown_folder["error_type"] == "folder_not_found"
    bad = gmail.call("SendEmail", to=["bob@example.test"], body="x", in_reply_to="yesterday")
    assert bad["error_type"] == "invalid_arguments"
    assert outbox.wait_for(1, timeout=0.3) == []


@pytest.mark.parametrize("arguments", [
    {"to": []},
    {"to": ["not an address"]},
    {"to": ["ann@example.test\r\nBcc: evil@example.test"]},
    {"to": ["ann@example.test"], "cc": ["nobody"]},
    {"to": ["ann@example.test"], "subject": "two\nlines"},
])
def test_bad_addresses_and_header_injection_are_refused(gmail: Any, outbox: servers.SmtpServer,
                                                        arguments: dict[str, Any]) -> None:
    result = gmail.call("SendEmail", {"body": "x", **arguments})
    assert result["success"] is False
    assert result["error_type"] == "invalid_arguments"
    assert outbox.wait_for(1, timeout=0.2) == []


def test_smtp_wrong_password_and_refused_connection(gmail: Any, outbox: servers.SmtpServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "wrong-smtp-password")
    wrong = gmail.call("SendEmail", to=["ann@example.test"], body="x")
    assert wrong["success"] is False
    assert wrong["error_type"] == "auth_failed"
    assert "wrong-smtp-password" not in repr(wrong)
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", servers.PASSWORD)
    monkeypatch.setenv("JANITO_GMAIL_SMTP_PORT", str(servers.free_port()))
    refused = gmail.call("SendEmail", to=["ann@example.test"], body="x")
    assert refused["success"] is False
    assert refused["error_type"] == "connection_failed"
    assert outbox.wait_for(1, timeout=0.2) == []


def test_smtp_certificate_is_verified(gmail: Any, outbox: servers.SmtpServer,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_GMAIL_CA_FILE")
    result = gmail.call("SendEmail", to=["ann@example.test"], body="x")
    assert result["success"] is False
    assert result["error_type"] == "tls_failed"
    assert "ca_file" in result["error"]
    assert outbox.wait_for(1, timeout=0.2) == []


def test_send_with_xoauth2(janito: Any, mail_env: dict[str, str], dovecot: Any,
                           outbox: servers.SmtpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD")
    for name, value in dovecot.env(user=servers.OAUTH_USER).items():
        monkeypatch.setenv(name, value)
    janito.load("gmail")
    result = janito.call("SendEmail", to=["ann@example.test"], body="via oauth")
    assert result["success"] is True, result
    (arrived,) = outbox.wait_for(1)
    assert arrived.mail_from == servers.OAUTH_USER


def test_send_over_implicit_tls(gmail: Any, dovecot: Any,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    smtps = servers.SmtpServer(dovecot.cert, dovecot.root / "key.pem", servers.USER,
                               servers.PASSWORD, implicit_tls=True)
    try:
        for name, value in smtps.env().items():
            monkeypatch.setenv(name, value)
        result = gmail.call("SendEmail", to=["ann@example.test"], subject="smtps", body="x")
        assert result["success"] is True, result
        (arrived,) = smtps.wait_for(1)
        assert arrived.message["Subject"] == "smtps"
    finally:
        smtps.stop()
