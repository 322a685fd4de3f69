"""Where janito keeps its configuration: one folder, shared by every part that needs it."""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """janito's configuration folder: ``JANITO_CONFIG_DIR``, else the XDG config home."""
    explicit = os.environ.get("JANITO_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "janito"


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the file at ``path`` with ``data`` in one step, readable by its owner only.

    For files that may hold credentials (the secrets store, MCP server settings, trusted
    folders). The folder is made when missing. The bytes go to a new temporary file beside
    the target (mode 0600 whatever the umask), are flushed to disk and renamed over the
    target, and the folder is synced: a reader or a crash sees the old file or the new one,
    never a part, and two writers never share a temporary file. On failure the target is
    left as it was and the temporary file is removed.
    """
    from ._atomic import write_at

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    try:
        write_at(dir_fd, target.name, data, overwrite=True, mode=0o600)
    finally:
        os.close(dir_fd)
