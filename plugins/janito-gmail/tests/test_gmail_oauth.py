"""Signed in with Google: access tokens obtained, kept and renewed for IMAP and SMTP.

Dovecot asks the test OAuth server about every XOAUTH2 token (its oauth2 passdb with
introspection), and so does the SMTP server, so a token works exactly while the token
server says it is live.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from typing import Any

import _gmail_servers as servers
import _oauth_server as oauth
import pytest

from janito_core.secrets import get_secret, set_secret


def test_a_stored_sign_in_reads_and_sends_with_one_refresh(
        gmail: Any, signed_in: str, oauth_server: oauth.OAuthServer,
        smtp_server: servers.SmtpServer) -> None:
    before = oauth_server.refreshes()
    listed = gmail.call("ListFolders")
    assert listed["success"] is True, listed
    sent = gmail.call("SendEmail", to=["ann@example.test"], body="hello over XOAUTH2")
    assert sent["success"] is True, sent
    read = gmail.call("ReadEmails", limit=1)
    assert read["success"] is True, read
    assert oauth_server.refreshes() == before + 1  # one access token served all three


def test_the_access_token_outlives_the_process(gmail: Any, signed_in: str,
                                               oauth_server: oauth.OAuthServer) -> None:
    from janito_gmail import _oauth

    assert gmail.call("ListFolders")["success"] is True
    stored = json.loads(get_secret("gmail_oauth_access_token") or "{}")
    assert stored["expires_at"] > time.time() + 3000
    before = oauth_server.refreshes()
    _oauth.clear_process_cache()  # as a new `janito run` process would start
    assert gmail.call("ListFolders")["success"] is True
    assert oauth_server.refreshes() == before


def test_a_token_about_to_expire_is_renewed_before_logging_in(
        gmail: Any, signed_in: str, oauth_server: oauth.OAuthServer) -> None:
    from janito_gmail import _oauth
    from janito_gmail._settings import Settings

    assert gmail.call("ListFolders")["success"] is True
    settings = Settings.load()
    assert settings.tokens is not None
    old = settings.tokens.current()
    _oauth.clear_process_cache()
    _oauth.store_access_token(settings.tokens.key, old, time.time() + 20)  # under a minute
    before = oauth_server.refreshes()
    introspections = oauth_server.state.introspections
    assert gmail.call("ListFolders")["success"] is True
    assert oauth_server.refreshes() == before + 1
    # no login was tried with the old token: Dovecot asked about one token only
    assert oauth_server.state.introspections == introspections + 1


def test_a_refused_cached_token_is_renewed_once_for_imap_and_smtp(
        gmail: Any, signed_in: str, oauth_server: oauth.OAuthServer,
        smtp_server: servers.SmtpServer) -> None:
    assert gmail.call("ListFolders")["success"] is True
    oauth_server.expire_access_tokens()  # expired early, as after a password change
    before = oauth_server.refreshes()
    assert gmail.call("ListFolders")["success"] is True
    assert oauth_server.refreshes() == before + 1
    oauth_server.expire_access_tokens()
    sent = gmail.call("SendEmail", to=["ann@example.test"], body="renewed for SMTP")
    assert sent["success"] is True, sent
    assert oauth_server.refreshes() == before + 2


def test_a_revoked_sign_in_asks_for_a_new_login(gmail: Any, signed_in: str,
                                                oauth_server: oauth.OAuthServer) -> None:
    from janito_gmail import _oauth

    assert gmail.call("ListFolders")["success"] is True
    oauth_server.revoke_grant(signed_in)  # the person removed janito's access
    results = [gmail.call("ListFolders"),
               gmail.call("SendEmail", to=["ann@example.test"], body="x"),
               gmail.call("ReadEmails")]
    for result in results:
        assert result["success"] is False
        assert result["error_type"] == "login_required"
        assert "`janito gmail login`" in result["error"]
        assert "expired or was revoked" in result["error"]
        assert "invalid_grant" in result["error"]
    assert get_secret("gmail_oauth_access_token") is None  # the dead token is forgotten
    _oauth.clear_process_cache()
    assert gmail.call("ListFolders")["error_type"] == "login_required"


def test_a_wrong_client_secret_asks_for_a_new_login(gmail: Any, signed_in: str) -> None:
    set_secret("gmail_oauth_client_secret", "GOCSPX-not-the-secret")
    result = gmail.call("ListFolders")
    assert result["error_type"] == "login_required"
    assert "invalid_client" in result["error"]


def test_a_missing_client_id_names_the_secret(gmail: Any, signed_in: str) -> None:
    from janito_core.secrets import delete_secret

    delete_secret("gmail_oauth_client_id")
    result = gmail.call("ListFolders")
    assert result["error_type"] == "configuration_error"
    assert "gmail_oauth_client_id" in result["error"]
    assert "janito gmail login" in result["error"]


def test_token_endpoint_failures_are_reported_not_taken_for_a_revoked_sign_in(
        gmail: Any, signed_in: str, oauth_server: oauth.OAuthServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    oauth_server.fail_next(503, {"error": "backend_error", "error_description": "Try again"})
    result = gmail.call("ListFolders")
    assert result["error_type"] == "server_error"
    assert "backend_error" in result["error"] and "try again later" in result["error"]
    assert get_secret("gmail_oauth_refresh_token") == signed_in  # nothing forgotten
    monkeypatch.setenv("JANITO_GMAIL_OAUTH_TOKEN_URL",
                       f"https://127.0.0.1:{servers.free_port()}/token")
    result = gmail.call("ListFolders")
    assert result["error_type"] == "connection_failed"
    assert "OAuth token endpoint" in result["error"]
    assert gmail.call("ListFolders")["error_type"] == "connection_failed"


def test_the_token_endpoint_certificate_is_verified(
        gmail: Any, signed_in: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_GMAIL_CA_FILE")  # the test certificate is trusted no more
    monkeypatch.setenv("JANITO_GMAIL_IMAP_TLS", "none")  # so that the token is asked first
    result = gmail.call("ListFolders")
    assert result["error_type"] == "tls_failed"
    assert "OAuth token endpoint" in result["error"]


def test_parallel_calls_share_one_refresh(gmail: Any, signed_in: str,
                                          oauth_server: oauth.OAuthServer) -> None:
    before = oauth_server.refreshes()
    results: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda: results.append(gmail.call("CountEmails")))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r["success"] for r in results] == [True] * 6, results
    assert oauth_server.refreshes() == before + 1


def test_no_oauth_secret_ever_shows(gmail: Any, signed_in: str,
                                    oauth_server: oauth.OAuthServer,
                                    caplog: pytest.LogCaptureFixture,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from janito_gmail._settings import Settings

    caplog.set_level(logging.DEBUG)
    for name in ("imapclient", "imapclient.imaplib", "imapclient.imapclient"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    results = [gmail.call("ListFolders"), gmail.call("ReadEmails", limit=2)]
    settings = Settings.load()
    assert settings.tokens is not None
    access = settings.tokens.current()
    # a folder named after a secret must not carry it into the result
    results.append(gmail.call("ReadEmails", folder=access))
    results.append(gmail.call("ReadEmails", folder=signed_in))
    oauth_server.expire_access_tokens()
    results.append(gmail.call("SendEmail", to=["ann@example.test"], body="x"))
    renewed = Settings.load().tokens.current()  # type: ignore[union-attr]
    oauth_server.revoke_grant(signed_in)
    from janito_gmail import _oauth

    _oauth.clear_process_cache()
    results.append(gmail.call("ListFolders"))
    text = json.dumps(results)
    captured = capsys.readouterr()
    logs = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("mail."))
    assert "AUTHENTICATE" in logs
    xoauth = f"user={servers.OAUTH_USER}\1auth=Bearer {access}\1\1"
    for secret in (signed_in, oauth.CLIENT_SECRET, access, renewed,
                   base64.b64encode(xoauth.encode()).decode()):
        assert secret not in text
        assert secret not in captured.err
        assert secret not in captured.out
        assert secret not in logs
    assert repr(settings).count("GOCSPX") == 0


def test_a_refresh_token_alone_loads_the_tools(janito: Any, mail_env: dict[str, str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD")
    monkeypatch.setenv("JANITO_SECRET_GMAIL_OAUTH_REFRESH_TOKEN", "1//0g-some-refresh")
    registry = janito.load("gmail")
    assert "ReadEmails" in registry.names()
    assert not registry.skipped()
