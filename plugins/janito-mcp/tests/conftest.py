"""Shared fixtures: the tiny ``mcptest`` toolset, real janito MCP servers, the SDK's client.

``tests/site`` holds a real distribution (a package and its ``.dist-info`` folder) that
advertises the toolset ``mcptest``; it is put on ``sys.path`` here and on ``PYTHONPATH``
for the servers the tests start, so nothing but janito-core and janito-mcp needs to be
installed. ``tests/servers/echo_server.py`` is a small MCP server written with the SDK.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
ECHO_SERVER = HERE / "servers" / "echo_server.py"
SERVE = [sys.executable, "-m", "janito_mcp", "serve"]

if str(SITE) not in sys.path:
    sys.path.insert(0, str(SITE))

warnings.filterwarnings("ignore", message=r".*deprecated as of 2026-07-28.*")


def child_env(config_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a server a test starts: the test toolset importable, no user config."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SITE), os.environ.get("PYTHONPATH", "")) if p
    )
    env["JANITO_CONFIG_DIR"] = str(config_dir)
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env["NO_COLOR"] = "1"
    env.pop("JANITO_TOOLSETS", None)
    env.pop("JANITO_PLUGINS", None)
    env.pop("JANITO_MCP_CONFIG", None)
    env.update(extra)
    return env


def serve_env(config_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``janito mcp serve -t mcptest`` a test starts: the test toolset
    is the only one allowed to load, so the server offers the same tools whatever else is
    installed (the autoloaded files and system toolsets, and janito-files' own ReadFile)."""
    return child_env(config_dir, **{"JANITO_TOOLSETS": "mcptest", **extra})


def run_async(function: Callable[[], Awaitable[Any]]) -> Any:
    """Run an async test body on a fresh event loop."""
    import anyio

    return anyio.run(function)


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "janito-config"
    folder.mkdir()
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(folder))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("JANITO_TOOLSETS", raising=False)
    monkeypatch.delenv("JANITO_PLUGINS", raising=False)
    monkeypatch.delenv("JANITO_MCP_CONFIG", raising=False)
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def stdio_params(workspace: Path, config_dir: Path, *flags: str, command: list[str] | None = None) -> Any:
    """SDK parameters that start ``janito mcp serve -t mcptest FLAGS`` over stdio."""
    from mcp.client.stdio import StdioServerParameters

    argv = (command or SERVE) + ["-t", "mcptest", *flags]
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(workspace),
                                 env=serve_env(config_dir))


class HttpServer:
    """``janito mcp serve --transport http --port 0`` in a subprocess, and its URL."""

    def __init__(self, workspace: Path, config_dir: Path, *flags: str,
                 env: dict[str, str] | None = None,
                 preexec: Callable[[], None] | None = None) -> None:
        self.workspace = workspace
        self.process = subprocess.Popen(
            [*SERVE, "-t", "mcptest", "--transport", "http", "--port", "0", *flags],
            cwd=workspace, env=serve_env(config_dir, **(env or {})), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec,
        )
        self.banner: list[str] = []
        self.url = self._wait_for_url()
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    def _wait_for_url(self) -> str:
        assert self.process.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            self.banner.append(line.rstrip("\n"))
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                return match.group(1)
        self.stop()
        raise RuntimeError("the HTTP server did not start:\n" + "\n".join(self.banner))

    def stop(self) -> tuple[str, str]:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            out, err = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
        return out, err


@pytest.fixture(scope="session")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One ``janito mcp serve --transport http`` (read-only, ``-t mcptest``) for the session."""
    workspace = tmp_path_factory.mktemp("http-workspace")
    server = HttpServer(workspace, tmp_path_factory.mktemp("http-config"))
    try:
        yield server
    finally:
        server.stop()


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"servers": servers}, indent=2), encoding="utf-8")
    return path


def echo_server(log: Path | None = None, **options: Any) -> dict[str, Any]:
    """The configuration entry of the SDK echo server, started with this interpreter."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    if log is not None:
        entry["env"] = {"ECHO_SERVER_LOG": str(log)}
    entry.update(options)
    return entry


def calls_seen(log: Path) -> list[str]:
    """The tool names the echo server received, in order."""
    if not log.exists():
        return []
    return [line.split()[1] for line in log.read_text(encoding="utf-8").splitlines() if line]
