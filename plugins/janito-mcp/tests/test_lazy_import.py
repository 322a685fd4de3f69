"""The MCP SDK is imported only when serving or when the ``mcp`` toolset loads; asyncio
only when serving (the ``janito mcp`` command is registered on every start)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import child_env

PROBE = """
import json, sys
{body}
heavy = sorted(m for m in sys.modules
               if m.split('.')[0] in ('mcp', 'mcp_types', 'anyio', 'uvicorn', 'starlette', 'httpx2',
                                      'pydantic', 'asyncio'))
print(json.dumps(heavy))
"""


def _heavy_modules(body: str, config_dir: Path, workspace: Path, **env: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(body=body)], cwd=workspace,
                          env=child_env(config_dir, **env), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_package_imports_no_sdk(config_dir: Path, workspace: Path) -> None:
    body = "import janito_mcp, janito_mcp._commands, janito_mcp._config, janito_mcp.mount"
    assert _heavy_modules(body, config_dir, workspace) == []


def test_listing_tools_imports_no_sdk(config_dir: Path, workspace: Path, tmp_path: Path) -> None:
    """Loading every toolset but ``mcp`` (the command plugin included) pays nothing for MCP."""
    mcp_json = tmp_path / "mcp.json"
    mcp_json.write_text('{"servers": {"x": {"command": "false"}}}', encoding="utf-8")
    body = (
        "from janito_core import Registry\n"
        "r = Registry(); r.add_toolset('mcptest'); names = r.names()\n"
        "assert 'EchoText' in names, names\n"
        "assert 'mcp' in r.toolsets() and 'mcp' not in r.loaded_toolsets()\n"
        "assert any(n.endswith(':mcp') for n, _ in r.plugins.names()), r.plugins.names()"
    )
    assert _heavy_modules(body, config_dir, workspace, JANITO_MCP_CONFIG=str(mcp_json)) == []


def test_janito_tools_command_imports_no_sdk(config_dir: Path, workspace: Path) -> None:
    pytest.importorskip("janito_core.cli")
    body = (
        "import io, contextlib\n"
        "from janito_core.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    assert main(['tools', '--json', '-t', 'mcptest']) == 0\n"
        "assert 'EchoText' in out.getvalue()"
    )
    assert _heavy_modules(body, config_dir, workspace) == []


def test_janito_mcp_help_imports_no_sdk(config_dir: Path, workspace: Path) -> None:
    pytest.importorskip("janito_core.cli")
    body = (
        "import io, contextlib\n"
        "from janito_core.cli import build_parser\n"
        "parser = build_parser(with_plugins=True)\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        parser.parse_args(['mcp', 'serve', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert '--transport' in out.getvalue(), out.getvalue()"
    )
    assert _heavy_modules(body, config_dir, workspace) == []


def test_serving_imports_the_sdk(config_dir: Path, workspace: Path) -> None:
    """The counter-check: the probe does see the SDK once a server is built."""
    body = (
        "from janito_core import Registry\n"
        "from janito_mcp._serve import JanitoServer\n"
        "JanitoServer(Registry(autoload=()))"
    )
    heavy = _heavy_modules(body, config_dir, workspace)
    assert "mcp.server.lowlevel" in heavy and "mcp_types" in heavy


JWT_PROBE = """
import json, sys
from janito_core import Registry
from janito_mcp._serve import JanitoServer, ServeOptions, http_auth
options = ServeOptions(transport="http"{extra})
auth = http_auth(options, "http://127.0.0.1:8000/mcp")
JanitoServer(Registry(autoload=())).http_app("/mcp", auth)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'jwt')))
"""


@pytest.mark.parametrize("oauth", [False, True])
def test_the_jwt_library_is_imported_only_for_oauth(oauth: bool, config_dir: Path,
                                                   workspace: Path) -> None:
    """Serving HTTP with the static token never loads PyJWT (about 85 ms of CPU here)."""
    extra = ', oauth_issuer="https://issuer.example.org"' if oauth else ""
    done = subprocess.run([sys.executable, "-c", JWT_PROBE.format(extra=extra)], cwd=workspace,
                          env=child_env(config_dir, JANITO_SECRET_MCP_SERVE_TOKEN="t"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert ("jwt" in loaded) is oauth, loaded
