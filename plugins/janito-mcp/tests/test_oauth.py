"""OAuth: a server written with the SDK that requires it, with its own authorization server.

``janito mcp login`` runs the real flow (discovery, dynamic registration, authorization
code with PKCE): the test plays the browser by opening the address janito prints, the
authorization server approves and sends the browser back to janito's loopback listener.
Mounting then uses the stored tokens, and refreshes them once they have expired.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import HERE, child_env, write_config
from janito_mcp import _mount
from test_mount_servers import Started, load

from janito_core.dispatch import call_tool

OAUTH_SERVER = HERE / "servers" / "oauth_server.py"


def _login(config_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``janito mcp login guarded --no-browser``, with this test as the browser."""
    process = subprocess.Popen(
        [sys.executable, "-m", "janito_mcp", "login", "guarded", "--no-browser",
         "--timeout", "60"],
        env=child_env(config_dir, **env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        match = re.search(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)", line)
        if match:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(match.group(1), timeout=30) as page:  # follows the redirect back
                assert b"Signed in" in page.read()
            break
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, "".join(seen) + err)


@pytest.mark.parametrize("kind", ["http", "sse"])
def test_login_then_mount_then_refresh(kind: str, tmp_path: Path, config_dir: Path,
                                       workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grants = tmp_path / "grants.log"
    expired = tmp_path / "expired.txt"
    server_env = child_env(config_dir, OAUTH_LOG=str(grants), OAUTH_EXPIRED=str(expired))
    argv = [sys.executable, str(OAUTH_SERVER), "{port}"] + (["--sse"] if kind == "sse" else [])
    server = Started(argv, server_env)
    _mount.reset()
    try:
        path = "/sse" if kind == "sse" else "/mcp"
        config = write_config(tmp_path / "mcp.json", {"guarded": {
            "type": kind, "url": f"http://127.0.0.1:{server.port}{path}", "oauth": True,
            "permissions": "r"}})
        monkeypatch.setenv("JANITO_MCP_CONFIG", str(config))

        # not signed in: a load error that says what to do, and no registration made
        registry = load(workspace, "r")
        [error] = registry.load_errors
        assert "run `janito mcp login guarded`" in error.reason, error.reason
        assert not grants.exists()
        _mount.reset()

        done = _login(config_dir, {"JANITO_MCP_CONFIG": str(config)})
        assert done.returncode == 0, done.stderr
        assert "Signed in to the MCP server 'guarded': it offers 1 tool(s)" in done.stdout
        assert grants.read_text().split() == ["register", "authorization_code"]
        stored = json.loads((config_dir / "secrets.json").read_text())["mcp_oauth_guarded"]
        tokens = json.loads(stored)["tokens"]
        assert tokens["access_token"].startswith("at-")
        assert tokens["access_token"] not in done.stdout + done.stderr

        registry = load(workspace, "r")
        assert not registry.load_errors, registry.load_errors
        result = call_tool("guarded__whoami", {}, registry=registry)
        assert result["text"] == "a signed-in janito"
        _mount.reset()

        # The access token expires, for the server and in janito's store (as the clock
        # would make it, without waiting on the clock): the next mount refreshes it.
        expired.write_text(tokens["access_token"] + "\n", encoding="utf-8")
        secrets_file = config_dir / "secrets.json"
        store = json.loads(secrets_file.read_text())
        entry = json.loads(store["mcp_oauth_guarded"])
        entry["expires_at"] = time.time() - 60
        store["mcp_oauth_guarded"] = json.dumps(entry)
        secrets_file.write_text(json.dumps(store), encoding="utf-8")
        registry = load(workspace, "r")
        assert call_tool("guarded__whoami", {}, registry=registry)["success"] is True
        assert grants.read_text().split() == ["register", "authorization_code", "refresh_token"]
        renewed = json.loads(json.loads((config_dir / "secrets.json").read_text())
                             ["mcp_oauth_guarded"])["tokens"]["access_token"]
        assert renewed != tokens["access_token"]

        logout = subprocess.run([sys.executable, "-m", "janito_mcp", "logout", "guarded"],
                                env=child_env(config_dir), capture_output=True, text=True,
                                timeout=60)
        assert "forgot the sign-in" in logout.stdout
        assert "mcp_oauth_guarded" not in json.loads((config_dir / "secrets.json").read_text())
    finally:
        _mount.reset()
        server.stop()
