"""Fixtures: one real Dovecot and one aiosmtpd server for the whole session.

Without the dovecot binary the server tests skip and say why, except under CI=true,
where a missing server fails them.
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


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def dovecot() -> Iterator[servers.DovecotServer]:
    try:
        server = servers.DovecotServer.start()
    except servers.ServerUnavailable as exc:
        if _in_ci():
            pytest.fail(f"CI=true and the IMAP test server is unavailable: {exc}")
        pytest.skip(f"IMAP test server unavailable: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def smtp_server(dovecot: servers.DovecotServer) -> Iterator[servers.SmtpServer]:
    server = servers.SmtpServer(dovecot.cert, dovecot.root / "key.pem", servers.USER,
                                servers.PASSWORD)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mail_env(monkeypatch: pytest.MonkeyPatch, janito_isolated: Path,
             dovecot: servers.DovecotServer, smtp_server: servers.SmtpServer) -> dict[str, str]:
    """Point janito-gmail at the test servers (credentials as JANITO_SECRET_* overrides)."""
    for name in list(os.environ):
        if name.startswith(("JANITO_GMAIL_", "JANITO_SECRET_GMAIL_")):
            monkeypatch.delenv(name)
    values = {**dovecot.env(), **smtp_server.env()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def gmail(janito: Any, mail_env: dict[str, str]) -> Any:
    """The janito tester with the gmail toolset loaded with every privilege."""
    janito.load("gmail", privileges="rwx")
    return janito


_folders = itertools.count(1)


@pytest.fixture
def folder(request: pytest.FixtureRequest, dovecot: servers.DovecotServer) -> str:
    """A new, empty folder for one test, so tests never see each other's messages."""
    name = f"T{next(_folders)}-{request.node.name[:40]}".replace("[", "-").replace("]", "")
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    client = dovecot.client()
    try:
        client.create_folder(name)
    finally:
        client.logout()
    return name


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
