"""The configuration of the ``mcp`` toolset: which MCP servers to mount, and how.

The file is ``mcp.json`` in janito's configuration folder
(``janito_core.secrets.config_dir()``, usually ``~/.config/janito``), or the file named
by ``JANITO_MCP_CONFIG``::

    {
      "servers": {
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "permissions": "x"},
        "notes": {"url": "http://127.0.0.1:8000/mcp", "permissions": "r",
                  "headers": {"Authorization": "Bearer ${secret:notes_token}"}}
      }
    }

``mcpServers`` is accepted in place of ``servers``. ``${secret:NAME}`` and ``${env:NAME}``
in ``args``, ``env``, ``headers`` and ``url`` are replaced when the server starts.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from janito_core.scrub import Scrubber

CONFIG_ENV = "JANITO_MCP_CONFIG"
DEPTH_ENV = "JANITO_MCP_DEPTH"
MAX_DEPTH = 3
"""How deeply janito processes may mount one another (a server mounting itself stops here)."""
CONFIG_FILE = "mcp.json"
DEFAULT_PERMISSIONS = "x"
DEFAULT_CALL_TIMEOUT = 120.0
DEFAULT_STARTUP_TIMEOUT = 30.0

SERVER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$")
"""Server names: letters, digits, ``-`` and single ``_``, so ``<server>__<tool>`` is unambiguous."""

_KEYS = {"command", "args", "env", "cwd", "url", "headers", "permissions", "tool_permissions",
         "timeout", "startup_timeout", "type", "transport", "disabled", "description"}
_REFERENCE = re.compile(r"\$\{(secret|env):([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(Exception):
    """The configuration file cannot be read at all."""


def config_path() -> Path:
    """Where the configuration is read from: ``JANITO_MCP_CONFIG``, else ``<config dir>/mcp.json``."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    from janito_core.secrets import config_dir

    return config_dir() / CONFIG_FILE


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server to mount: a command to run (stdio) or a URL (streamable HTTP)."""

    name: str
    permissions: str = DEFAULT_PERMISSIONS
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    tool_permissions: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_CALL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """What is started or reached, for humans (never with substituted secrets)."""
        if self.url:
            return self.url
        return " ".join([self.command or "", *self.args]).strip()

    def permissions_of(self, tool: str) -> str:
        """The permission letters a tool of this server needs: per tool, else the server's."""
        return self.tool_permissions.get(tool, self.permissions)

    def as_row(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "target": self.target,
            "permissions": self.permissions,
            "tool_permissions": dict(self.tool_permissions),
        }


@dataclass(frozen=True)
class Config:
    """Every server of the file, and why the broken entries were left out."""

    path: Path
    exists: bool
    servers: tuple[ServerConfig, ...]
    errors: dict[str, str]


def load_config(path: Path | None = None) -> Config:
    """Read and check the configuration; a missing file is an empty configuration.

    A broken server entry is reported in ``errors`` under its name and the others are
    kept; a file that is not a JSON object raises ConfigError.
    """
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config(path, False, (), {})
    except OSError as exc:
        raise ConfigError(f"cannot read the MCP configuration {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"the MCP configuration {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the MCP configuration {path} must be a JSON object with \"servers\"")
    entries = data.get("servers", data.get("mcpServers", {}))
    if not isinstance(entries, dict):
        raise ConfigError(f"\"servers\" in {path} must be an object mapping names to servers")
    servers: list[ServerConfig] = []
    errors: dict[str, str] = {}
    for name, entry in entries.items():
        try:
            server = parse_server(str(name), entry)
        except ValueError as exc:
            errors[str(name)] = str(exc)
            continue
        if server is not None:
            servers.append(server)
    return Config(path, True, tuple(servers), errors)


def parse_server(name: str, entry: Any) -> ServerConfig | None:
    """One server entry, checked; None when it is disabled. ValueError says what is wrong."""
    from janito_core.privileges import validate_permissions

    if not SERVER_NAME.match(name) or len(name) > 40:
        raise ValueError(
            f"invalid server name {name!r}: use up to 40 letters, digits, '-' and single '_'"
        )
    if not isinstance(entry, dict):
        raise ValueError("the server entry must be a JSON object")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}")
    if entry.get("disabled") is True:
        return None
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ValueError("give either \"command\" (stdio) or \"url\" (streamable HTTP)")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ValueError("\"command\" must be a non-empty string")
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ValueError("\"url\" must be an http:// or https:// URL")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("\"args\" must be a list of strings")
    env = _string_map(entry, "env")
    headers = _string_map(entry, "headers")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("\"cwd\" must be a string")
    try:
        permissions = validate_permissions(entry.get("permissions", DEFAULT_PERMISSIONS))
        tool_permissions = {
            str(tool): validate_permissions(letters)
            for tool, letters in _object(entry, "tool_permissions").items()
        }
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    return ServerConfig(
        name=name,
        permissions=permissions,
        command=command,
        args=tuple(args),
        env=env,
        cwd=os.path.expanduser(cwd) if cwd else None,
        url=url,
        headers=headers,
        tool_permissions=tool_permissions,
        timeout=_seconds(entry, "timeout", DEFAULT_CALL_TIMEOUT),
        startup_timeout=_seconds(entry, "startup_timeout", DEFAULT_STARTUP_TIMEOUT),
    )


def _object(entry: dict[str, Any], key: str) -> dict[str, Any]:
    value = entry.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"\"{key}\" must be an object")
    return value


def _string_map(entry: dict[str, Any], key: str) -> dict[str, str]:
    value = _object(entry, key)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"\"{key}\" must map strings to strings")
    return dict(value)


def _seconds(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"\"{key}\" must be a positive number of seconds")
    return float(value)


def expand(text: str, secrets: Scrubber | set[str] | None = None) -> str:
    """``text`` with ``${secret:NAME}`` and ``${env:NAME}`` replaced (ValueError if one is unset).

    The secret values used are added to ``secrets`` (a ``janito_core.scrub.Scrubber``, or
    a set), so what the server sends back can be cleaned of them.
    """

    def replace(match: re.Match[str]) -> str:
        kind, name = match.group(1), match.group(2)
        if kind == "env":
            value = os.environ.get(name)
        else:
            from janito_core.secrets import get_secret

            value = get_secret(name)
            if value and secrets is not None:
                secrets.add(value)
        if value is None:
            raise ValueError(f"{kind} {name!r} is not set")
        return value

    return _REFERENCE.sub(replace, text)
