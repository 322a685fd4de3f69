"""No secret value ever shows in a result, an error, a report or a log line."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import _gmail_servers as servers
import pytest

WRONG = "wr0ng-Secret-Value-42"


def forms(secret: str) -> list[str]:
    return [secret, base64.b64encode(secret.encode()).decode()]


def client_logs(caplog: pytest.LogCaptureFixture) -> str:
    """Every log line of this process except the test SMTP server's own ("mail.log")."""
    return "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("mail."))


def test_sweep_every_tool_success_and_failure(gmail: Any, dovecot: Any, folder: str,
                                              monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("imapclient", "imapclient.imaplib", "imapclient.imapclient"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    uids = servers.seed(dovecot, folder, [
        servers.plain_message(1),
        servers.attachment_message(2, b"%PDF"),
        # a message that quotes the password must not carry it into a result
        servers.plain_message(3, subject=f"your password is {servers.PASSWORD}",
                              body=f"It is {servers.PASSWORD}.\n"),
    ])
    calls: list[tuple[str, dict[str, Any]]] = [
        ("ListFolders", {"include_counts": True}),
        ("CountEmails", {"folder": folder}),
        ("ReadEmails", {"folder": folder}),
        ("ReadEmails", {"folder": servers.PASSWORD}),
        ("MarkEmails", {"folder": folder, "mark": "read", "ids": [uids[0]]}),
        ("MarkEmails", {"folder": folder, "mark": "read", "subject": servers.PASSWORD}),
        ("MoveEmails", {"folder": folder, "destination": servers.PASSWORD, "ids": [uids[0]]}),
        ("TrashEmails", {"folder": folder, "ids": [uids[0]], "dry_run": True}),
        ("DeleteEmails", {"folder": folder, "ids": [999]}),
        ("SaveAttachment", {"folder": folder, "id": uids[1], "index": 1}),
        ("SendEmail", {"to": ["ann@example.test"], "body": "hi"}),
        ("SendEmail", {"to": ["ann@example.test"], "body": "hi", "in_reply_to": str(uids[2]),
                       "reply_folder": folder}),
    ]
    results = [gmail.call(name, arguments) for name, arguments in calls]
    assert [r["success"] for r in results] == [True, True, True, False, True, True, False,
                                               True, False, True, True, True]
    read = results[2]["messages"]
    assert any("[redacted]" in m["subject"] for m in read)

    # From here the configured password is WRONG; arguments quoting the old one are left out.
    calls = [(n, a) for n, a in calls if servers.PASSWORD not in json.dumps(a)]
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", WRONG)
    for name, arguments in calls:
        result = gmail.call(name, arguments)
        assert result["success"] is False
        results.append(result)
    monkeypatch.setenv("JANITO_GMAIL_IMAP_PORT", str(servers.free_port()))
    monkeypatch.setenv("JANITO_GMAIL_SMTP_PORT", str(servers.free_port()))
    results.extend(gmail.call(name, arguments) for name, arguments in calls)
    results.append(gmail.call("ReadEmails", folder=WRONG))

    text = json.dumps(results, ensure_ascii=False)
    captured = capsys.readouterr()
    logs = client_logs(caplog)
    assert "LOGIN" in logs or "AUTHENTICATE" in logs or "Logged in" in logs
    for secret in (*forms(servers.PASSWORD), *forms(WRONG)):
        assert secret not in text
        assert secret not in captured.err
        assert secret not in captured.out
        assert secret not in logs


def test_oauth_token_never_shows(janito: Any, mail_env: dict[str, str], dovecot: Any,
                                 monkeypatch: pytest.MonkeyPatch,
                                 caplog: pytest.LogCaptureFixture,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD")
    for name, value in dovecot.env(user=servers.OAUTH_USER).items():
        monkeypatch.setenv(name, value)
    janito.load("gmail")
    results = [janito.call("ListFolders"), janito.call("ReadEmails", folder=servers.OAUTH_TOKEN),
               janito.call("SendEmail", to=["a@example.test"], body="x")]
    assert [r["success"] for r in results] == [True, False, True]
    monkeypatch.setenv("JANITO_SECRET_GMAIL_OAUTH_TOKEN", WRONG)
    results.append(janito.call("ListFolders"))
    results.append(janito.call("SendEmail", to=["a@example.test"], body="x"))
    assert [r["error_type"] for r in results[3:]] == ["auth_failed", "auth_failed"]
    text = json.dumps(results)
    captured = capsys.readouterr()
    logs = client_logs(caplog)
    xoauth = f"user={servers.OAUTH_USER}\1auth=Bearer {servers.OAUTH_TOKEN}\1\1"
    for secret in (*forms(servers.OAUTH_TOKEN), *forms(WRONG),
                   base64.b64encode(xoauth.encode()).decode()):
        assert secret not in text
        assert secret not in captured.err
        assert secret not in logs


def test_settings_repr_hides_credentials(mail_env: dict[str, str]) -> None:
    from janito_gmail._settings import Settings

    settings = Settings.load()
    assert servers.PASSWORD not in repr(settings)
    assert servers.PASSWORD not in str(settings)


def test_a_session_ending_does_not_unmask_another_still_open(
        caplog: pytest.LogCaptureFixture) -> None:
    from janito_gmail._imap import OPEN_SESSION_SECRETS

    caplog.set_level(logging.DEBUG)
    log = logging.getLogger("imapclient.imaplib")
    with OPEN_SESSION_SECRETS.holding(["first-secret", "shared-secret"]):
        with OPEN_SESSION_SECRETS.holding(["second-secret", "shared-secret"]):
            log.debug("both open: %s %s %s", "first-secret", "second-secret", "shared-secret")
        log.debug("second closed: %s %s", "first-secret", "shared-secret")
    log.debug("all closed: %s", "not-a-secret-now")
    lines = [r.getMessage() for r in caplog.records if r.name == "imapclient.imaplib"]
    assert not [line for line in lines if "-secret" in line and "not-a-secret" not in line]
    assert lines[-1] == "all closed: not-a-secret-now"
    assert OPEN_SESSION_SECRETS.current() == []


def test_sweep_of_the_composing_draft_and_label_tools(
        gmail: Any, dovecot: Any, folder: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    (uid,) = servers.seed(dovecot, folder, [
        servers.plain_message(5, subject=f"about {servers.PASSWORD}",
                              body=f"the password is {servers.PASSWORD}\n")])
    (gmail.workspace / "note.txt").write_text(servers.PASSWORD, encoding="utf-8")
    draft = gmail.call("CreateDraft", subject=servers.PASSWORD, body=servers.PASSWORD,
                       to=["ann@example.test"], attachments=["note.txt"])
    calls: list[tuple[str, dict[str, Any]]] = [
        ("ReplyToEmail", {"id": uid, "folder": folder, "body": "ok", "reply_all": True}),
        ("ForwardEmail", {"id": uid, "folder": folder, "to": ["erin@example.test"]}),
        ("ListDrafts", {}),
        ("UpdateDraft", {"id": draft["draft_id"], "body": "changed"}),
        ("ListLabels", {}),
        ("LabelEmails", {"folder": folder, "ids": [uid], "add": [servers.PASSWORD]}),
        ("ReadEmails", {"folder": folder, "thread_of": uid}),
        ("SendEmail", {"to": ["ann@example.test"], "body": "x",
                       "attachments": [servers.PASSWORD]}),
    ]
    results = [draft] + [gmail.call(name, arguments) for name, arguments in calls]
    assert [r["success"] for r in results] == [True, True, True, True, True, False, False,
                                               True, False]
    # from here the configured password is WRONG: arguments quoting the old one are left out
    calls = [(n, a) for n, a in calls if servers.PASSWORD not in json.dumps(a)]
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", WRONG)
    failed = [gmail.call(name, arguments) for name, arguments in calls]
    assert [r["error_type"] for r in failed] == ["auth_failed"] * len(calls)
    results += failed
    text = json.dumps(results, ensure_ascii=False)
    captured = capsys.readouterr()
    logs = client_logs(caplog)
    for secret in (*forms(servers.PASSWORD), *forms(WRONG)):
        assert secret not in text
        assert secret not in captured.err
        assert secret not in logs
