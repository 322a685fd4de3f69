"""Fixtures: the servers of the whole session, all on loopback.

A local OAuth server (token, authorization, revocation, and introspection for Dovecot),
a real Dovecot that asks it about every XOAUTH2 token, and an aiosmtpd SMTP server that
does the same. ``gmail_dovecot`` is a second Dovecot laid out as Gmail presents itself,
behind ``gmail_standin``, the small proxy that adds the X-GM-* extensions Dovecot cannot
serve. Without the dovecot binary the server tests skip and say why, except under
CI=true, where a missing server fails them.
"""

from __future__ import annotations

import imaplib
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _gmail_servers as servers
import _gmail_standin as standin
import _oauth_server as oauth


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One self-signed certificate for 127.0.0.1 that every test server presents."""
    folder = tmp_path_factory.mktemp("tls")
    try:
        return servers.make_certificate(folder)
    except servers.ServerUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def oauth_server(certificate: tuple[Path, Path]) -> Iterator[oauth.OAuthServer]:
    server = oauth.OAuthServer(*certificate, account=servers.OAUTH_USER)
    try:
        yield server
    finally:
        server.stop()


def _start_dovecot(**options: Any) -> servers.DovecotServer:
    try:
        return servers.DovecotServer.start(**options)
    except servers.ServerUnavailable as exc:
        if _in_ci():
            pytest.fail(f"CI=true and the IMAP test server is unavailable: {exc}")
        pytest.skip(f"IMAP test server unavailable: {exc}")


@pytest.fixture(scope="session")
def dovecot(oauth_server: oauth.OAuthServer,
            certificate: tuple[Path, Path]) -> Iterator[servers.DovecotServer]:
    server = _start_dovecot(oauth=oauth_server, certificate=certificate)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def gmail_dovecot(oauth_server: oauth.OAuthServer,
                  certificate: tuple[Path, Path]) -> Iterator[servers.DovecotServer]:
    """A second Dovecot with Gmail's folders ([Gmail]/All Mail, /Trash, /Sent Mail, ...)."""
    server = _start_dovecot(oauth=oauth_server, certificate=certificate,
                            layout=servers.GMAIL_LAYOUT)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def gmail_standin(gmail_dovecot: servers.DovecotServer,
                  certificate: tuple[Path, Path]) -> Iterator[standin.GmailStandIn]:
    proxy = standin.GmailStandIn(gmail_dovecot, *certificate)
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture(scope="session")
def smtp_server(dovecot: servers.DovecotServer,
                oauth_server: oauth.OAuthServer) -> Iterator[servers.SmtpServer]:
    server = servers.SmtpServer(dovecot.cert, dovecot.root / "key.pem", servers.USER,
                                servers.PASSWORD, oauth=oauth_server)
    try:
        yield server
    finally:
        server.stop()


def _clear_gmail_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("JANITO_GMAIL_", "JANITO_SECRET_GMAIL_")):
            monkeypatch.delenv(name)
    from janito_gmail import _oauth

    _oauth.clear_process_cache()  # access tokens kept by an earlier test's calls


@pytest.fixture
def mail_env(monkeypatch: pytest.MonkeyPatch, janito_isolated: Path,
             dovecot: servers.DovecotServer, smtp_server: servers.SmtpServer,
             oauth_server: oauth.OAuthServer) -> dict[str, str]:
    """Point janito-gmail at the test servers (credentials as JANITO_SECRET_* overrides)."""
    _clear_gmail_env(monkeypatch)
    values = {**dovecot.env(), **smtp_server.env(), **oauth_server.env()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def gmail_env(monkeypatch: pytest.MonkeyPatch, janito_isolated: Path,
              gmail_standin: standin.GmailStandIn, smtp_server: servers.SmtpServer,
              oauth_server: oauth.OAuthServer) -> dict[str, str]:
    """Point janito-gmail at the Gmail stand-in (X-GM-EXT-1 over the Gmail-like Dovecot)."""
    _clear_gmail_env(monkeypatch)
    values = {**gmail_standin.env(), **smtp_server.env(), **oauth_server.env()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def signed_in(monkeypatch: pytest.MonkeyPatch, mail_env: dict[str, str],
              oauth_server: oauth.OAuthServer) -> str:
    """The OAuth account signed in as ``janito gmail login`` leaves it: client id and
    secret and a refresh token stored; the refresh token is returned."""
    from janito_core.secrets import set_secret

    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD", raising=False)
    refresh = oauth_server.grant(servers.OAUTH_USER)
    set_secret("gmail_username", servers.OAUTH_USER)
    set_secret("gmail_oauth_client_id", oauth.CLIENT_ID)
    set_secret("gmail_oauth_client_secret", oauth.CLIENT_SECRET)
    set_secret("gmail_oauth_refresh_token", refresh)
    monkeypatch.delenv("JANITO_SECRET_GMAIL_USERNAME", raising=False)
    return refresh


@pytest.fixture
def gmail(janito: Any, mail_env: dict[str, str]) -> Any:
    """The janito tester with the gmail toolset loaded with every privilege."""
    janito.load("gmail", privileges="rwx")
    return janito


@pytest.fixture
def google(janito: Any, gmail_env: dict[str, str]) -> Any:
    """The janito tester, every privilege, talking to the Gmail stand-in."""
    janito.load("gmail", privileges="rwx")
    return janito


@pytest.fixture
def outbox(smtp_server: servers.SmtpServer) -> servers.SmtpServer:
    """The SMTP server, emptied of what earlier tests sent."""
    with smtp_server._lock:
        smtp_server.messages.clear()
    return smtp_server


_folders = itertools.count(1)


def _new_folder(request: pytest.FixtureRequest, server: servers.DovecotServer) -> str:
    name = f"T{next(_folders)}-{request.node.name[:40]}".replace("[", "-").replace("]", "")
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    client = server.client()
    try:
        client.create_folder(name)
    finally:
        client.logout()
    return name


@pytest.fixture
def folder(request: pytest.FixtureRequest, dovecot: servers.DovecotServer) -> str:
    """A new, empty folder for one test, so tests never see each other's messages."""
    return _new_folder(request, dovecot)


@pytest.fixture
def label(request: pytest.FixtureRequest, gmail_dovecot: servers.DovecotServer) -> str:
    """A new, empty label (a folder on Gmail) for one test on the Gmail-like server."""
    return _new_folder(request, gmail_dovecot)


class RoundTrips:
    """Counts the tagged IMAP commands (each one a round trip) this process sends."""

    def __init__(self) -> None:
        self.count = 0

    def reset(self) -> None:
        self.count = 0


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> RoundTrips:
    counter = RoundTrips()
    original = imaplib.IMAP4._new_tag

    def counting(self: imaplib.IMAP4) -> bytes:
        counter.count += 1
        return original(self)  # type: ignore[no-any-return]

    monkeypatch.setattr(imaplib.IMAP4, "_new_tag", counting)
    return counter
