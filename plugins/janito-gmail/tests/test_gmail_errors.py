"""Connection modes, credentials and every failure path give clear results."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import _gmail_servers as servers
import pytest


def test_starttls_mode(gmail: Any, dovecot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_GMAIL_IMAP_TLS", "starttls")
    monkeypatch.setenv("JANITO_GMAIL_IMAP_PORT", str(dovecot.starttls_port))
    result = gmail.call("CountEmails", folder="INBOX")
    assert result["success"] is True, result


def test_plaintext_mode(gmail: Any, dovecot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only because it is asked for explicitly; Dovecot allows it on loopback.
    monkeypatch.setenv("JANITO_GMAIL_IMAP_TLS", "none")
    monkeypatch.setenv("JANITO_GMAIL_IMAP_PORT", str(dovecot.starttls_port))
    result = gmail.call("CountEmails", folder="INBOX")
    assert result["success"] is True, result


def test_xoauth2_login(janito: Any, mail_env: dict[str, str], dovecot: Any,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD")
    for name, value in dovecot.env(user=servers.OAUTH_USER).items():
        monkeypatch.setenv(name, value)
    janito.load("gmail")
    result = janito.call("ListFolders")
    assert result["success"] is True, result
    monkeypatch.setenv("JANITO_SECRET_GMAIL_OAUTH_TOKEN", "expired-token-value")
    expired = janito.call("ListFolders")
    assert expired["success"] is False
    assert expired["error_type"] == "auth_failed"
    assert "expired-token-value" not in repr(expired)


def test_wrong_password(gmail: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "definitely-wrong-pw")
    result = gmail.call("ReadEmails")
    assert result["success"] is False
    assert result["error_type"] == "auth_failed"
    assert "gmail_password" in result["error"]
    assert "definitely-wrong-pw" not in repr(result)


def test_connection_refused(gmail: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_GMAIL_IMAP_PORT", str(servers.free_port()))
    result = gmail.call("ListFolders")
    assert result["success"] is False
    assert result["error_type"] == "connection_failed"
    assert "refused" in result["error"]


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts connections and then never says anything."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


@pytest.mark.parametrize("tls", ["ssl", "none"])
def test_timeout(gmail: Any, monkeypatch: pytest.MonkeyPatch, silent_server: int,
                 tls: str) -> None:
    monkeypatch.setenv("JANITO_GMAIL_IMAP_PORT", str(silent_server))
    monkeypatch.setenv("JANITO_GMAIL_IMAP_TLS", tls)
    monkeypatch.setenv("JANITO_GMAIL_TIMEOUT", "0.3")
    result = gmail.call("CountEmails")
    assert result["success"] is False
    assert result["error_type"] == "timeout"


def test_smtp_timeout(gmail: Any, monkeypatch: pytest.MonkeyPatch, silent_server: int) -> None:
    monkeypatch.setenv("JANITO_GMAIL_SMTP_PORT", str(silent_server))
    monkeypatch.setenv("JANITO_GMAIL_TIMEOUT", "0.3")
    result = gmail.call("SendEmail", to=["a@example.test"], body="x")
    assert result["success"] is False
    assert result["error_type"] == "timeout"


def test_certificates_are_verified_by_default(gmail: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_GMAIL_CA_FILE")
    result = gmail.call("ListFolders")
    assert result["success"] is False
    assert result["error_type"] == "tls_failed"
    assert "ca_file" in result["error"]


def test_host_name_is_checked(gmail: Any, dovecot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The test certificate names the address 127.0.0.1, not the name localhost.
    try:
        socket.getaddrinfo("localhost", dovecot.port, socket.AF_INET)
    except OSError:
        pytest.skip("the name localhost does not resolve here")
    monkeypatch.setenv("JANITO_GMAIL_IMAP_HOST", "localhost")
    result = gmail.call("ListFolders")
    assert result["success"] is False
    assert result["error_type"] == "tls_failed", result


@pytest.mark.parametrize("name,value", [
    ("JANITO_GMAIL_IMAP_TLS", "maybe"),
    ("JANITO_GMAIL_IMAP_PORT", "imap"),
    ("JANITO_GMAIL_IMAP_PORT", "70000"),
    ("JANITO_GMAIL_TIMEOUT", "soon"),
    ("JANITO_GMAIL_CA_FILE", "/nonexistent/ca.pem"),
])
def test_bad_settings_are_named(gmail: Any, monkeypatch: pytest.MonkeyPatch, name: str,
                                value: str) -> None:
    monkeypatch.setenv(name, value)
    result = gmail.call("ListFolders")
    assert result["success"] is False
    assert result["error_type"] == "configuration_error"
    setting = name.removeprefix("JANITO_GMAIL_").lower()
    assert setting in result["error"]


def test_settings_can_come_from_the_secrets_store(janito: Any, mail_env: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_core.secrets import set_secret

    port = mail_env["JANITO_GMAIL_IMAP_PORT"]
    monkeypatch.delenv("JANITO_GMAIL_IMAP_PORT")
    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD")
    set_secret("gmail_imap_port", port)
    set_secret("gmail_password", servers.PASSWORD)
    janito.load("gmail")
    assert janito.call("CountEmails")["success"] is True
