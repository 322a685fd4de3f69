"""What a remote client is told of the serving host when a tool it calls is missing.

``janito run`` on the person's own machine says everything about a toolset that failed to
load (the file, the command, the server's words). A client of ``janito mcp serve`` is
someone else: it is told which toolset failed and the kind of failure, never the host's
paths, commands or configuration.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_async
from janito_mcp import _mount
from janito_mcp._serve import JanitoServer
from mcp.client import Client

from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool


@pytest.fixture
def broken_mcp_config(tmp_path: Path, config_dir: Path,
                      monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An MCP configuration, in a folder named like a person's home, that is not JSON and
    names a command with a secret-looking argument."""
    folder = tmp_path / "home" / "alice-private" / ".config"
    folder.mkdir(parents=True)
    path = folder / "mcp.json"
    path.write_text('{"servers": {"tracker": {"command": "tracker", '
                    '"args": ["--password", "hunter2-alice"]}}', encoding="utf-8")  # unclosed
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    _mount.reset()
    yield path
    _mount.reset()


def test_a_remote_client_is_told_the_cause_without_the_hosts_paths(
        broken_mcp_config: Path, workspace: Path) -> None:
    registry = Registry(autoload=(), workspace=Workspace(workspace))
    registry.add_toolset("mcp")
    local = call_tool("tracker__search", {}, registry=registry)  # what janito run prints
    assert str(broken_mcp_config) in local["error"]

    async def main() -> dict[str, Any]:
        async with Client(JanitoServer(registry).server) as client:
            result = await client.call_tool("tracker__search", {})
            return dict(result.structured_content or {})

    told = run_async(main)
    text = json.dumps(told)
    assert told["error_type"] == "unknown_tool"
    for secret in ("alice-private", "hunter2", str(broken_mcp_config.parent), "mcp.json"):
        assert secret not in text, (secret, told)
    [error] = told["load_errors"]
    assert (error["toolset"], error["distribution"], error["kind"]) == ("mcp", "janito-mcp",
                                                                      "toolset")
    assert "toolset 'mcp' (janito-mcp)" in told["error"] and "janito tools" in told["error"]


@pytest.mark.parametrize("kind, reason, told", [
    ("import", "cannot import acme.mail: ModuleNotFoundError: No module named 'googleapiclient'",
     "cannot import acme.mail: ModuleNotFoundError: No module named 'googleapiclient'"),
    ("import", "cannot import acme.mail: SyntaxError: invalid syntax (/home/alice/acme/mail.py:3)",
     "cannot import acme.mail: SyntaxError; the rest is said on the server (janito tools -t acme)"),
    ("import", "cannot import acme: ModuleNotFoundError: No module named 'x' (/home/alice)",
     "cannot import acme: ModuleNotFoundError: No module named 'x'"),
    ("import", "cannot import acme: OSError: [Errno 2] No such file: '/home/alice/key.pem'",
     "cannot import acme: OSError; the rest is said on the server (janito tools -t acme)"),
    ("toolset", "MCP server 'git' (uvx git --repository /home/alice/work) failed to start",
     "it failed to load; the rest is said on the server (janito tools -t acme)"),
    ("clash", "tool 'Ping' of toolset 'acme' (acme) has the name of a tool already loaded",
     "tool 'Ping' of toolset 'acme' (acme) has the name of a tool already loaded"),
])
def test_what_a_client_is_told_of_each_kind_of_load_failure(kind: str, reason: str,
                                                            told: str) -> None:
    from janito_mcp._disclosure import client_reason

    assert client_reason({"toolset": "acme", "kind": kind, "reason": reason}) == told
