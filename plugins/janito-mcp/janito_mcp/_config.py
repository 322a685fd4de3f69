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

``mcpServers`` (Claude Desktop) is accepted in place of ``servers``, and so is VS Code's
form (``servers`` with ``type``, ``envFile`` and an ``inputs`` list). ``${secret:NAME}``,
``${env:NAME}`` and ``${NAME}`` in every string of an entry (``command``, ``args``, ``env``,
``envFile``, ``cwd``, ``url``, ``headers``) are replaced when the server starts;
``${input:...}`` (a value VS Code prompts for) is refused when the file is read, naming the
entry, since janito has nobody to ask.
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

_KEYS = {"command", "args", "env", "envFile", "cwd", "url", "headers", "permissions",
         "tool_permissions", "timeout", "startup_timeout", "type", "transport", "disabled",
         "description", "oauth", "dev"}
#: ``type`` (VS Code, Cursor) or ``transport`` values, and the transport each means.
TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http",
              "streamable_http": "http", "streamableHttp": "http", "sse": "sse"}
_REFERENCE = re.compile(r"\$\{(?:(secret|env):)?([A-Za-z_][A-Za-z0-9_]*)\}")
_INPUT = re.compile(r"\$\{input:([^}]*)\}")
#: VS Code's own variables that have a meaning outside VS Code too.
_PREDEFINED = {"workspaceFolder", "userHome", "pathSeparator"}


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
class OAuthConfig:
    """How janito signs in to a remote server that asks for OAuth (``"oauth"`` in the entry)."""

    scope: str | None = None
    client_name: str = "janito"
    #: The loopback port the authorization server sends the browser back to (0: any free one).
    redirect_port: int = 0


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server to mount: a command to run (stdio) or a URL (streamable HTTP or SSE)."""

    name: str
    permissions: str = DEFAULT_PERMISSIONS
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    env_file: str | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    tool_permissions: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_CALL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    kind: str = ""
    """``stdio``, ``http`` (streamable HTTP) or ``sse``; empty: from ``command``/``url``."""
    oauth: OAuthConfig | None = None

    @property
    def transport(self) -> str:
        if self.kind:
            return self.kind
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """What is started or reached, for humans (never with substituted secrets)."""
        if self.url:
            return self.url
        return " ".join([self.command or "", *self.args]).strip()

    @property
    def token_secret(self) -> str:
        """The secret that keeps this server's OAuth tokens and client registration."""
        return oauth_secret_name(self.name)

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
            "oauth": self.oauth is not None,
        }


def oauth_secret_name(server: str) -> str:
    """``mcp_oauth_<server>``, with the ``-`` a secret name cannot hold written as ``_``."""
    return "mcp_oauth_" + server.replace("-", "_").lower()


@dataclass(frozen=True)
class Config:
    """Every server of the file, and why the broken entries were left out."""

    path: Path
    exists: bool
    servers: tuple[ServerConfig, ...]
    errors: dict[str, str]


def read_entries(path: Path) -> tuple[bool, dict[str, Any]]:
    """``(exists, {name: raw entry})`` of a configuration file in any of the accepted forms.

    ConfigError when the file cannot be read or is not such a file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False, {}
    except OSError as exc:
        raise ConfigError(f"cannot read the MCP configuration {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(_without_comments(text)) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"the MCP configuration {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the MCP configuration {path} must be a JSON object with \"servers\"")
    entries = data.get("servers", data.get("mcpServers", {}))
    if not isinstance(entries, dict):
        raise ConfigError(f"\"servers\" in {path} must be an object mapping names to servers")
    return True, {str(name): entry for name, entry in entries.items()}


def _without_comments(text: str) -> str:
    """JSON text without the ``//`` and ``/* */`` comments and trailing commas VS Code allows
    in its ``mcp.json`` (JSONC); strings are left as they are."""
    if "/" not in text and "," not in text:
        return text
    return _scan(_scan(text, comments=True), comments=False)


def _scan(text: str, *, comments: bool) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
            continue
        if comments and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if comments and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if not comments and ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "]}":
                i += 1
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def load_config(path: Path | None = None) -> Config:
    """Read and check the configuration; a missing file is an empty configuration.

    A broken server entry is reported in ``errors`` under its name and the others are
    kept; a file that is not a JSON object raises ConfigError.
    """
    path = path or config_path()
    exists, entries = read_entries(path)
    servers: list[ServerConfig] = []
    errors: dict[str, str] = {}
    for name, entry in entries.items():
        try:
            server = parse_server(name, entry, base=path.parent)
        except ValueError as exc:
            errors[name] = str(exc)
            continue
        if server is not None:
            servers.append(server)
    return Config(path, exists, tuple(servers), errors)


def parse_server(name: str, entry: Any, base: Path | None = None) -> ServerConfig | None:
    """One server entry, checked; None when it is disabled. ValueError says what is wrong.

    ``base`` is the folder of the file, against which a relative ``envFile`` is read.
    """
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
    _refuse_inputs(entry)
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and kind not in TRANSPORTS:
        raise ValueError(f"unknown \"type\" {kind!r}: use stdio, http (streamable HTTP) or sse")
    transport = TRANSPORTS[kind] if kind is not None else ""
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ValueError("give either \"command\" (stdio) or \"url\" (streamable HTTP or SSE)")
    if transport == "stdio" and command is None:
        raise ValueError("\"type\": \"stdio\" needs a \"command\"")
    if transport in ("http", "sse") and url is None:
        raise ValueError(f"\"type\": {kind!r} needs a \"url\"")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ValueError("\"command\" must be a non-empty string")
    if url is not None and (not isinstance(url, str)
                            or not url.startswith(("http://", "https://", "${"))):
        raise ValueError("\"url\" must be an http:// or https:// URL")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("\"args\" must be a list of strings")
    env = _string_map(entry, "env")
    headers = _string_map(entry, "headers")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("\"cwd\" must be a string")
    env_file = entry.get("envFile")
    if env_file is not None:
        if not isinstance(env_file, str) or not env_file.strip():
            raise ValueError("\"envFile\" must be a path")
        if url is not None:
            raise ValueError("\"envFile\" sets the environment of a started server; "
                             "this entry has a \"url\"")
    try:
        permissions = validate_permissions(entry.get("permissions", DEFAULT_PERMISSIONS))
        tool_permissions = {
            str(tool): validate_permissions(letters)
            for tool, letters in _object(entry, "tool_permissions").items()
        }
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    oauth = _oauth(entry.get("oauth"))
    if oauth is not None and url is None:
        raise ValueError("\"oauth\" is for remote servers: this entry has no \"url\"")
    return ServerConfig(
        name=name,
        permissions=permissions,
        command=command,
        args=tuple(args),
        env=env,
        env_file=_relative_to(env_file, base),
        cwd=cwd,
        url=url,
        headers=headers,
        tool_permissions=tool_permissions,
        timeout=_seconds(entry, "timeout", DEFAULT_CALL_TIMEOUT),
        startup_timeout=_seconds(entry, "startup_timeout", DEFAULT_STARTUP_TIMEOUT),
        kind=transport,
        oauth=oauth,
    )


def _relative_to(path: str | None, base: Path | None) -> str | None:
    if path is None or base is None or path.startswith(("/", "~", "${")):
        return path
    return str(base / path)


def _oauth(value: Any) -> OAuthConfig | None:
    if value is None or value is False:
        return None
    if value is True:
        return OAuthConfig()
    if not isinstance(value, dict):
        raise ValueError("\"oauth\" must be true or an object (scope, client_name, redirect_port)")
    unknown = sorted(set(value) - {"scope", "client_name", "redirect_port"})
    if unknown:
        raise ValueError(f"unknown key(s) in \"oauth\": {', '.join(unknown)}")
    scope = value.get("scope")
    name = value.get("client_name", "janito")
    port = value.get("redirect_port", 0)
    if scope is not None and not isinstance(scope, str):
        raise ValueError("\"oauth\".\"scope\" must be a string of space-separated scopes")
    if not isinstance(name, str) or not name:
        raise ValueError("\"oauth\".\"client_name\" must be a non-empty string")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65536:
        raise ValueError("\"oauth\".\"redirect_port\" must be a port number (0: any free one)")
    return OAuthConfig(scope=scope, client_name=name, redirect_port=port)


def _strings(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """``(where, text)`` for every string of an entry that is expanded when it starts."""
    found: list[tuple[str, str]] = []
    for key in ("command", "url", "cwd", "envFile"):
        if isinstance(entry.get(key), str):
            found.append((f"\"{key}\"", entry[key]))
    args = entry.get("args")
    if isinstance(args, list):
        found.extend((f"\"args\"[{i}]", a) for i, a in enumerate(args) if isinstance(a, str))
    for key in ("env", "headers"):
        mapping = entry.get(key)
        if isinstance(mapping, dict):
            found.extend((f"\"{key}\".{k}", v) for k, v in mapping.items() if isinstance(v, str))
    return found


def _refuse_inputs(entry: dict[str, Any]) -> None:
    for where, text in _strings(entry):
        match = _INPUT.search(text)
        if match:
            raise ValueError(
                f"{where} uses ${{input:{match.group(1)}}}, a value VS Code asks for when it "
                "starts the server; janito cannot ask anyone. Store the value with `janito "
                f"secrets set NAME` and write ${{secret:NAME}} there instead"
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


def expand(text: str, secrets: Scrubber | set[str] | None = None, *,
           env_too: bool = False) -> str:
    """``text`` with ``${secret:NAME}``, ``${env:NAME}`` and ``${NAME}`` replaced (ValueError
    if one is unset).

    ``${NAME}`` is an environment variable, except VS Code's ``${workspaceFolder}`` (the
    current folder), ``${userHome}`` and ``${pathSeparator}``. The secret values used are
    added to ``secrets`` (a ``janito_core.scrub.Scrubber``, or a set), so what the server
    sends back can be cleaned of them; with ``env_too`` the environment values used are
    added as well (headers and a server's environment, where credentials travel).
    """

    def replace(match: re.Match[str]) -> str:
        kind, name = match.group(1), match.group(2)
        value: str | None
        if kind is None and name in _PREDEFINED:
            value = {"workspaceFolder": os.getcwd(), "userHome": str(Path.home()),
                     "pathSeparator": os.sep}[name]
            return value
        if kind == "secret":
            from janito_core.secrets import get_secret

            value = get_secret(name)
            if value and secrets is not None:
                secrets.add(value)
        else:
            value = os.environ.get(name)
            if value and env_too and secrets is not None:
                secrets.add(value)
        if value is None:
            raise ValueError(f"{kind or 'environment variable'} {name!r} is not set")
        return value

    if "${input:" in text:
        match = _INPUT.search(text)
        raise ValueError(f"${{input:{match.group(1) if match else ''}}} cannot be answered here")
    return _REFERENCE.sub(replace, text)


def read_env_file(path: str) -> dict[str, str]:
    """The variables of a ``.env`` file (``NAME=value`` lines; ``#`` comments, ``export``,
    single or double quotes). ValueError names the file and line that cannot be read."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the envFile {path}: {exc.strerror or exc}") from None
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            raise ValueError(f"the envFile {path} line {number} is not NAME=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"')
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        out[name] = value
    return out
