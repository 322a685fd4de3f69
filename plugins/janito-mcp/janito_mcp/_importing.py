"""``janito mcp import PATH``: servers of another MCP client's file, copied into janito's.

Claude Desktop (``mcpServers``), VS Code and Cursor (``servers`` with ``type``, ``envFile``
and ``inputs``) keep their servers in files of nearly one shape. Each entry is checked as
janito reads its own file, so what is copied will mount; what cannot (a ``${input:...}``
that only VS Code can ask for, a name janito refuses) is reported with the reason and left
out. A relative ``envFile`` is made absolute, since the copy lives in another folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._config import ConfigError, parse_server, read_entries


@dataclass
class ImportReport:
    target: Path
    imported: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)


def import_servers(source: Path, target: Path, *, replace: bool = False,
                   dry_run: bool = False) -> ImportReport:
    """Copy the usable servers of ``source`` into ``target``; ConfigError if either file is
    unreadable."""
    exists, entries = read_entries(source)
    if not exists:
        raise ConfigError(f"{source} does not exist")
    report = ImportReport(target)
    data, key = _target_data(target)
    servers: dict[str, Any] = data.setdefault(key, {})
    for name, entry in entries.items():
        try:
            parse_server(name, entry, base=source.parent)
        except ValueError as exc:
            report.refused[name] = str(exc)
            continue
        if name in servers and not replace:
            report.kept[name] = f"already in {target.name} (--replace overwrites it)"
            continue
        copied = dict(entry)
        env_file = copied.get("envFile")
        if isinstance(env_file, str) and not env_file.startswith(("/", "~", "${")):
            copied["envFile"] = str((source.parent / env_file).resolve())
        servers[name] = copied
        report.imported.append(name)
    if report.imported and not dry_run:
        _write(target, data)
    return report


def _target_data(target: Path) -> tuple[dict[str, Any], str]:
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, "servers"
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc.strerror or exc}") from None
    from ._config import _without_comments

    try:
        data = json.loads(_without_comments(text)) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{target} is not valid JSON ({exc}); fix it before importing") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{target} must be a JSON object")
    key = "mcpServers" if "mcpServers" in data and "servers" not in data else "servers"
    if not isinstance(data.get(key, {}), dict):
        raise ConfigError(f"\"{key}\" in {target} must be an object")
    return data, key


def _write(target: Path, data: dict[str, Any]) -> None:
    """Replace the file in one step, readable by the owner only, since headers and env may
    hold credentials."""
    from janito_core.config import write_private

    write_private(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
