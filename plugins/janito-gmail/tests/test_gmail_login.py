"""``janito gmail login|logout|status`` as a person runs them, against the local OAuth server.

Each test runs the real command in a child process; the test plays the browser: it
opens the address the command prints (the local authorization page consents at once
and redirects), then either follows the redirect to the command's loopback port or
pastes the final address into the command, as someone with the browser elsewhere does.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import _gmail_servers as servers
import _oauth_server as oauth
import pytest

from janito_core.secrets import get_secret


class _Stop(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def authorize(url: str, cert: str) -> str:
    """What a browser does at the consent page: the address it is sent back to."""
    context = ssl.create_default_context(cafile=cert)
    opener = urllib.request.build_opener(_Stop(), urllib.request.HTTPSHandler(context=context))
    try:
        opener.open(url, timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 302, exc.read()
        return str(exc.headers["Location"])
    raise AssertionError("the authorization page did not redirect")


def visit(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class Login:
    """``janito gmail login ARGS`` running in a child process."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "janito_core.cli", "gmail", "login", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env or dict(os.environ),
        )
        self.lines: list[str] = []

    def url(self) -> str:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("    http"):
                return line.strip()
        raise AssertionError("no address printed: " + "".join(self.lines)
                             + self.proc.stderr.read())  # type: ignore[union-attr]

    def paste(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def finish(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, "".join(self.lines) + out, err


@pytest.fixture
def login_env(mail_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """No account configured yet: only the servers' addresses and the test certificate."""
    for name in ("JANITO_SECRET_GMAIL_USERNAME", "JANITO_SECRET_GMAIL_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("BROWSER", raising=False)
    return mail_env


@pytest.fixture
def client_file(tmp_path: Path) -> Path:
    path = tmp_path / "client_secret_1234.json"
    path.write_text(json.dumps({"installed": {
        "client_id": oauth.CLIENT_ID, "project_id": "janito-test",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "client_secret": oauth.CLIENT_SECRET, "redirect_uris": ["http://localhost"],
    }}), encoding="utf-8")
    return path


def _fake_browser(tmp_path: Path, cert: str) -> str:
    """A BROWSER command that visits the page in the background, as a real browser does."""
    script = tmp_path / "browser.py"
    script.write_text(textwrap.dedent(f"""
        import ssl, subprocess, sys, urllib.error, urllib.request
        if len(sys.argv) == 2:  # detach, so that the command goes on waiting for the answer
            subprocess.Popen([sys.executable, __file__, sys.argv[1], "visit"])
            sys.exit(0)
        class Stop(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *a, **k):
                return None
        context = ssl.create_default_context(cafile={cert!r})
        opener = urllib.request.build_opener(Stop(), urllib.request.HTTPSHandler(context=context))
        try:
            opener.open(sys.argv[1], timeout=10)
        except urllib.error.HTTPError as exc:
            urllib.request.urlopen(exc.headers["Location"], timeout=10).read()
    """), encoding="utf-8")
    return f"{sys.executable} {script} %s"


def test_sign_in_from_scratch_to_a_first_read_emails(
        login_env: dict[str, str], client_file: Path, tmp_path: Path,
        oauth_server: oauth.OAuthServer, dovecot: servers.DovecotServer) -> None:
    servers.seed(dovecot, "INBOX", [servers.plain_message(9100, subject="Welcome aboard")],
                 user=servers.OAUTH_USER)
    env = {**os.environ, "BROWSER": _fake_browser(tmp_path, login_env["JANITO_GMAIL_CA_FILE"])}
    before = oauth_server.refreshes()
    login = Login("--client-file", str(client_file), env=env)
    status, out, err = login.finish()
    assert status == 0, out + err
    assert "A browser window opened" in out
    assert f"Signed in to Google as {servers.OAUTH_USER}" in out
    assert "Checked: 127.0.0.1 accepted the sign-in" in out
    assert get_secret("gmail_username") == servers.OAUTH_USER
    assert get_secret("gmail_oauth_client_id") == oauth.CLIENT_ID
    refresh = get_secret("gmail_oauth_refresh_token")
    assert refresh and refresh in oauth_server.state.grants
    for secret in (refresh, oauth.CLIENT_SECRET):
        assert secret not in out and secret not in err
    read = subprocess.run(
        [sys.executable, "-m", "janito_core.cli", "run", "-t", "gmail", "ReadEmails",
         "--limit", "5"], capture_output=True, text=True, env=env, timeout=60)
    assert read.returncode == 0, read.stderr
    result = json.loads(read.stdout)
    assert result["success"] is True
    assert "Welcome aboard" in [m["subject"] for m in result["messages"]]
    # the access token the sign-in gave served the first call: no refresh was needed
    assert oauth_server.refreshes() == before


def test_without_a_browser_the_final_address_is_pasted(
        login_env: dict[str, str], oauth_server: oauth.OAuthServer) -> None:
    login = Login("--no-browser", "--client-id", oauth.CLIENT_ID, "--client-secret",
                  oauth.CLIENT_SECRET)
    url = login.url()
    assert "Open this address in a browser" in "".join(login.lines)
    query = parse_qs(urlsplit(url).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["access_type"] == ["offline"] and query["prompt"] == ["consent"]
    assert "https://mail.google.com/" in query["scope"][0].split()
    final = authorize(url, login_env["JANITO_GMAIL_CA_FILE"])
    login.paste("this is not it")
    login.paste(final.replace(parse_qs(urlsplit(final).query)["state"][0], "forged"))
    login.paste(final)
    status, out, err = login.finish()
    assert status == 0, out + err
    assert err.count("not the address of the page Google sent you to") == 2
    assert f"Signed in to Google as {servers.OAUTH_USER}" in out
    assert get_secret("gmail_oauth_refresh_token")


def test_the_loopback_port_ignores_what_is_not_this_sign_in(
        login_env: dict[str, str]) -> None:
    login = Login("--no-browser", "--client-id", oauth.CLIENT_ID, "--client-secret",
                  oauth.CLIENT_SECRET, "--no-check")
    url = login.url()
    redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
    assert redirect.startswith("http://127.0.0.1:")
    assert visit(redirect + "favicon.ico")[0] == 404
    assert visit(redirect + "?code=stolen&state=guessed")[0] == 404
    final = authorize(url, login_env["JANITO_GMAIL_CA_FILE"])
    page = visit(final)
    assert page[0] == 200 and "You can close this tab" in page[1]
    status, out, err = login.finish()
    assert status == 0, out + err


def test_access_refused_in_the_browser(login_env: dict[str, str],
                                       oauth_server: oauth.OAuthServer) -> None:
    oauth_server.deny_next = True
    login = Login("--no-browser", "--client-id", oauth.CLIENT_ID, "--client-secret",
                  oauth.CLIENT_SECRET)
    login.paste(authorize(login.url(), login_env["JANITO_GMAIL_CA_FILE"]))
    status, _out, err = login.finish()
    assert status == 1
    assert "Google did not grant access: access_denied" in err
    assert get_secret("gmail_oauth_refresh_token") is None


def test_a_wrong_client_secret_stores_nothing(login_env: dict[str, str]) -> None:
    login = Login("--no-browser", "--client-id", oauth.CLIENT_ID, "--client-secret",
                  "GOCSPX-wrong-one")
    login.paste(authorize(login.url(), login_env["JANITO_GMAIL_CA_FILE"]))
    status, out, err = login.finish()
    assert status == 1
    assert "invalid_client" in err and "check the client id and secret" in err
    assert "GOCSPX-wrong-one" not in out + err
    assert get_secret("gmail_oauth_refresh_token") is None
    assert get_secret("gmail_oauth_client_secret") is None


def test_signing_in_as_another_account_than_asked_stores_nothing(
        login_env: dict[str, str]) -> None:
    login = Login("--no-browser", "--user", "someone.else@example.test", "--client-id",
                  oauth.CLIENT_ID, "--client-secret", oauth.CLIENT_SECRET)
    url = login.url()
    assert parse_qs(urlsplit(url).query)["login_hint"] == ["someone.else@example.test"]
    login.paste(authorize(url, login_env["JANITO_GMAIL_CA_FILE"]))
    status, _out, err = login.finish()
    assert status == 1
    assert f"you signed in as {servers.OAUTH_USER}, not someone.else@example.test" in err
    assert get_secret("gmail_username") is None


def test_no_answer_in_time(login_env: dict[str, str]) -> None:
    login = Login("--no-browser", "--timeout", "1", "--client-id", oauth.CLIENT_ID,
                  "--client-secret", oauth.CLIENT_SECRET)
    status, _out, err = login.finish()
    assert status == 1
    assert "no answer from the browser within 1 second;" in err


def test_without_a_client_the_command_says_how_to_make_one(login_env: dict[str, str]) -> None:
    status, _out, err = Login().finish()
    assert status == 2
    assert "janito ships no OAuth client" in err and "--client-file" in err


def test_status_and_logout(login_env: dict[str, str], oauth_server: oauth.OAuthServer) -> None:
    env = dict(os.environ)

    def janito(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "janito_core.cli", "gmail", *args],
                              capture_output=True, text=True, env=env, timeout=60)

    assert janito("status").returncode == 1
    login = Login("--no-browser", "--client-id", oauth.CLIENT_ID, "--client-secret",
                  oauth.CLIENT_SECRET, "--no-check")
    login.paste(authorize(login.url(), login_env["JANITO_GMAIL_CA_FILE"]))
    assert login.finish()[0] == 0
    refresh = get_secret("gmail_oauth_refresh_token")
    assert refresh
    shown = janito("status", "--json")
    assert shown.returncode == 0
    info = json.loads(shown.stdout)
    assert info["signed_in"] is True and info["method"] == "google sign-in"
    assert info["username"] == servers.OAUTH_USER
    assert info["access_token_valid_for"] > 3000
    assert refresh not in shown.stdout
    plain = janito("status")
    assert f"Gmail: {servers.OAUTH_USER} via google sign-in" in plain.stdout
    out = janito("logout")
    assert out.returncode == 0
    assert "revoked at Google" in out.stdout
    assert oauth_server.state.grants[refresh].revoked
    assert get_secret("gmail_oauth_refresh_token") is None
    assert get_secret("gmail_oauth_access_token") is None
    assert get_secret("gmail_oauth_client_id") == oauth.CLIENT_ID  # kept for the next login
    assert janito("status").returncode == 1
    assert "Not signed in" in janito("logout").stdout


def test_the_command_module_imports_nothing_heavy() -> None:
    code = ("import sys, janito_gmail._commands; "
            "print(sorted(m for m in ('urllib.request', 'janito_gmail._oauth', "
            "'janito_gmail._login', 'imapclient', 'http.server') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stderr



def test_a_busy_port_is_said_so(login_env: dict[str, str]) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        status, _out, err = Login("--port", str(port), "--client-id", oauth.CLIENT_ID,
                                  "--client-secret", oauth.CLIENT_SECRET).finish()
    assert status == 2
    assert f"cannot listen on 127.0.0.1:{port}" in err
