"""Write must not become execute: ``python -m janito_mcp serve -w`` in a workspace that holds
a module named like every standard module the server may import on demand.

``python -m`` puts the working folder first on the import path. If the server imported
from it, a client could write ``difflib.py`` with a file tool and have it run inside the
server the next time dispatch suggests a tool name. Every standard module that is not
already loaded when ``python -m`` starts running a program is planted in the workspace;
none of them may run, over stdio and over HTTP, through a session that writes another
one and then makes dispatch import ``difflib``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HttpServer, run_async, stdio_params
from mcp.client import Client
from mcp.client.stdio import stdio_client


def _loaded_before_the_program(tmp_path: Path) -> set[str]:
    """The modules Python has loaded when ``python -m`` starts a program's first line."""
    probe = tmp_path / "probe-site" / "startprobe"
    probe.mkdir(parents=True)
    (probe / "__init__.py").write_text("")
    (probe / "__main__.py").write_text("import sys\nprint(' '.join(sys.modules))\n")
    done = subprocess.run([sys.executable, "-m", "startprobe"], cwd=probe.parent,
                          capture_output=True, text=True, timeout=60, check=True)
    return set(done.stdout.split())


def _plant(workspace: Path, marker: Path, tmp_path: Path) -> list[str]:
    preloaded = _loaded_before_the_program(tmp_path)
    names = sorted(n for n in sys.stdlib_module_names
                   if n.isidentifier() and n not in preloaded and n not in sys.builtin_module_names)
    for name in names:
        (workspace / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n", encoding="utf-8")
    return names


async def _write_then_trigger(client: Client, marker: Path) -> None:
    """What an attacker with write access does: write a module, then make the server import it."""
    written = await client.call_tool("WriteNote", {"filepath": "difflib.py", "text": (
        f"open({str(marker)!r}, 'a').write('difflib (written by the client)\\n')\n")})
    assert written.is_error is False, written
    unknown = await client.call_tool("EchoTxt", {"text": "x"})  # dispatch suggests a name
    data = json.loads(unknown.content[0].text)
    assert data["error_type"] == "unknown_tool" and "EchoText" in data["error"], data
    bad = await client.call_tool("EchoText", {"txt": "x"})  # and a field name
    assert json.loads(bad.content[0].text)["error_type"] == "invalid_arguments"
    echoed = await client.call_tool("EchoText", {"text": "still works"})
    assert json.loads(echoed.content[0].text)["text"] == "still works"


def test_stdio_server_imports_nothing_from_the_workspace(workspace: Path, config_dir: Path,
                                                         tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    planted = _plant(workspace, marker, tmp_path)
    assert {"difflib", "json", "uuid", "asyncio", "typing", "__future__"} <= set(planted)

    async def main() -> None:
        async with Client(stdio_client(stdio_params(workspace, config_dir, "-w"))) as client:
            await _write_then_trigger(client, marker)

    run_async(main)
    assert not marker.exists(), "modules from the workspace ran in the server:\n" + \
        marker.read_text(encoding="utf-8")


def test_http_server_imports_nothing_from_the_workspace(workspace: Path, config_dir: Path,
                                                        tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    _plant(workspace, marker, tmp_path)
    server = HttpServer(workspace, config_dir, "-w")
    try:
        async def main() -> None:
            async with Client(server.url) as client:
                await _write_then_trigger(client, marker)

        run_async(main)
    finally:
        server.stop()
    assert not marker.exists(), "modules from the workspace ran in the server:\n" + \
        marker.read_text(encoding="utf-8")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is new in 3.11")
def test_python_dash_p_serves_too(workspace: Path, config_dir: Path, tmp_path: Path) -> None:
    """The documented way to leave no gap at all: ``python -P -m janito_mcp serve``."""
    marker = tmp_path / "ran.txt"
    _plant(workspace, marker, tmp_path)
    command = [sys.executable, "-P", "-m", "janito_mcp", "serve"]

    async def main() -> None:
        params = stdio_params(workspace, config_dir, "-w", command=command)
        async with Client(stdio_client(params)) as client:
            await _write_then_trigger(client, marker)

    run_async(main)
    assert not marker.exists()
