"""Secrets: no configured secret value appears in any result, error, log line or report.

The whole suite runs with secrets in ``JANITO_SECRET_*`` (gmail password, OneDrive access
and refresh tokens in an msal cache, an MCP server token, an API key nothing uses), and
every result, log record (root logger at DEBUG), report event and command output is swept
as it appears (see ``rel_support.Sweep``). The tests here make the secrets travel: servers
that quote the credentials they receive in their errors, the same calls in a ``janito``
process logging at DEBUG to stderr, and the commands that list configuration. The last
test, run after every other one, checks the sweep of the whole session.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel
from rel_servers import ImapServer

from janito_core.dispatch import call_tool

GMAIL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ListFolders", {}), ("CountEmails", {}), ("ReadEmails", {"limit": 1}),
    ("MarkEmails", {"mark": "read", "ids": [1]}), ("MoveEmails", {"destination": "Archive", "ids": [1]}),
    ("TrashEmails", {"ids": [1]}), ("DeleteEmails", {"ids": [1], "dry_run": True}),
    ("SaveAttachment", {"id": 1}), ("SendEmail", {"to": ["bob@example.test"], "body": "hi"}),
]
ONEDRIVE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ListOneDriveFiles", {}), ("ReadOneDriveFile", {"path": "a.txt"}),
    ("ReadOneDriveFile", {"path": "expired.txt"}), ("SearchOneDriveFiles", {"query": "x"}),
    ("GetOneDriveShareLink", {"path": "a.txt"}), ("CreateOneDriveFolder", {"path": "new"}),
    ("DeleteOneDriveFile", {"path": "a.txt", "dry_run": True}),
    ("DownloadOneDriveFile", {"path": "a.txt"}), ("UploadOneDriveFile", {"path": "u.txt", "content": "x"}),
]


@pytest.fixture
def echoing_imap(monkeypatch: pytest.MonkeyPatch) -> Any:
    """An IMAP server that refuses every login quoting the user name and the password."""
    server = ImapServer(("nobody", "nothing"), echo_credentials=True).start()
    monkeypatch.setenv("JANITO_GMAIL_IMAP_PORT", str(server.port))
    try:
        yield server
    finally:
        server.stop()


def test_mail_servers_quoting_the_password(echoing_imap: Any, tmp_path: Path, services: Any) -> None:
    registry = rel.make_registry(tmp_path, "rwx", ("gmail",))
    before = len(services.smtp.auths)
    for name, args in GMAIL_CALLS:
        result = rel.swept(call_tool(name, args, registry=registry), f"gmail {name}")
        assert result["success"] is False, result
        assert result["error_type"] == "auth_failed", result
        rel.count("secret sweep: calls made to carry a secret")
    assert echoing_imap.logins and echoing_imap.logins[0][1] == rel.SECRETS["gmail_password"]
    # the SMTP server was sent the password and quoted it back
    assert len(services.smtp.auths) > before
    assert not rel.SWEEP.hits


def test_graph_quoting_the_bearer_token(tmp_path: Path, services: Any) -> None:
    registry = rel.make_registry(tmp_path, "rwx", ("onedrive",))
    for name, args in ONEDRIVE_CALLS:
        result = rel.swept(call_tool(name, args, registry=registry), f"onedrive {name}")
        assert isinstance(result["success"], bool)
        rel.count("secret sweep: calls made to carry a secret")
    assert any(method == "POST" and path.endswith("/token")
               for method, path in services.identity.requests), "the refresh token was never sent"


DEBUG_RUN = textwrap.dedent('''
    import logging, sys
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    from janito_core.cli import main
    sys.exit(main(sys.argv[1:]))
''')


def debug_run(args: list[str], env: dict[str, str], cwd: Path) -> Any:
    """``janito ARGS`` in a process whose every log record goes to stderr, swept."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", DEBUG_RUN, *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    rel.count("secret sweep: command outputs")
    rel.SWEEP.check(done.stdout, f"janito {args[:4]} stdout")
    rel.SWEEP.check(done.stderr, f"janito {args[:4]} stderr (DEBUG logs)")
    return done


def test_a_refresh_error_quoting_the_refresh_token(tmp_path: Path, services: Any) -> None:
    """In a fresh janito process (msal remembers a failed refresh for a while), logging at
    DEBUG: the identity server answers the refresh with an error quoting the token."""
    env = rel.base_env(tmp_path / "config", secrets=True)
    services.identity.echo_refresh_token = True
    hits = len(rel.SWEEP.hits)
    try:
        done = debug_run(["run", "-t", "onedrive", "ReadOneDriveFile", "--args",
                          json.dumps({"path": "expired.txt"})], env, tmp_path)
    finally:
        services.identity.echo_refresh_token = False
    assert json.loads(done.stdout)["error_type"] == "auth_failed", done.stdout
    leaked = rel.SWEEP.hits[hits:]
    assert not leaked, [where for where, _, _ in leaked]


def test_commands_logging_at_debug(tmp_path: Path, services: Any, echoing_imap: Any) -> None:
    env = rel.base_env(tmp_path / "config", secrets=True)
    env["JANITO_GMAIL_IMAP_PORT"] = str(echoing_imap.port)
    for name, args in GMAIL_CALLS + ONEDRIVE_CALLS:
        toolset = "gmail" if (name, args) in GMAIL_CALLS else "onedrive"
        done = debug_run(["run", "-t", toolset, name, "--args", json.dumps(args)], env, tmp_path)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        result = json.loads(done.stdout)
        assert isinstance(result["success"], bool)
        rel.count("secret sweep: calls made to carry a secret")
    assert "DEBUG" in done.stderr  # the logs really were on


def test_configuration_commands(tmp_path: Path, services: Any) -> None:
    env = rel.base_env(tmp_path / "config", secrets=True)
    extra = ["-t", "gmail", "-t", "onedrive", "-t", "skills"]
    commands = [["secrets", "list", "--json"], ["tools", "--json", *extra], ["toolsets", "--json", *extra],
                ["plugins", "--json"], ["schema", *extra], ["schema", "--format", "mcp", *extra]]
    for done in rel.run_many(commands, env=env, cwd=tmp_path):
        assert done.returncode == 0, done.stderr
    listed = rel.json_of(rel.run_janito(["secrets", "list", "--json"], env=env, cwd=tmp_path))
    assert "gmail_password" in listed  # names are listed, values never


def test_a_mounted_mcp_server_returning_its_token(tmp_path: Path) -> None:
    pytest.importorskip("janito_mcp")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": {"rel": {
        "command": sys.executable, "args": [str(Path(__file__).with_name("rel_mcp_server.py"))],
        "env": {"REL_TOKEN": "${secret:mcp_token}", "REL_LEAKY": "1"}, "permissions": "r",
    }}}), encoding="utf-8")
    env = rel.base_env(tmp_path / "config", {"JANITO_MCP_CONFIG": str(config)}, secrets=True)
    hits = len(rel.SWEEP.hits)
    done = rel.run_janito(["run", "-t", "mcp", "rel__whoami"], env=env, cwd=tmp_path)
    result = rel.json_of(done)
    assert result["success"] is True, result
    assert not rel.SWEEP.hits[hits:], result


@pytest.mark.parametrize("fails", [True, False], ids=["fails-to-start", "starts"])
def test_a_mounted_mcp_server_writing_its_token_on_stderr(fails: bool, tmp_path: Path) -> None:
    """The server writes its token JSON-escaped, in a base64 payload and URL-encoded on
    stderr; ``janito tools`` (table and JSON) shows its load error with those lines, or its
    tools, and never the token in any form (the sweep looks for each)."""
    pytest.importorskip("janito_mcp")
    env_of_server = {"REL_TOKEN": "${secret:mcp_token}", "REL_STDERR": "1"}
    if fails:
        env_of_server["REL_FAIL_START"] = "1"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": {"rel": {
        "command": sys.executable, "args": [str(Path(__file__).with_name("rel_mcp_server.py"))],
        "env": env_of_server, "permissions": "r",
    }}}), encoding="utf-8")
    env = rel.base_env(tmp_path / "config", {"JANITO_MCP_CONFIG": str(config)}, secrets=True)
    hits = len(rel.SWEEP.hits)
    for extra in ([], ["--json"]):
        done = rel.run_janito(["tools", "-t", "mcp", *extra], env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shown = done.stdout + done.stderr
        if fails:
            assert "settings: " in shown and "authorization: Basic" in shown, shown
            assert "[redacted]" in shown
        else:
            assert "rel__echo" in shown
        rel.count("secret sweep: calls made to carry a secret")
    assert not rel.SWEEP.hits[hits:], rel.SWEEP.hits[hits:]


@pytest.mark.sweep_last
def test_the_whole_suite_leaked_no_secret() -> None:
    """Run last: the sweep of everything this process produced holds no secret value.

    Under pytest-xdist each worker runs it after its own share (and the controller fails
    the run when any worker's sweep found a secret: see the conftest).
    """
    assert not rel.SWEEP.hits, "\n".join(
        f"{where}: {secret[:10]}... in {excerpt!r}" for where, secret, excerpt in rel.SWEEP.hits[:20])
    rel.count("secret sweep: values looked for", len(rel.secret_values()))
