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


class StateFolder:
    """Where janito's own state lies, seen from one workspace root: what the workspace hides.

    ``parts`` are the names from the root down to the state folder (``()`` when the root
    itself lies in it, as when the two are one folder or the workspace is inside it), or
    None when the state folder is not below the root at all. ``ident`` is the folder's
    (device, inode) when it exists, so a spelling the names miss (a case-insensitive file
    system, a bind mount) is still caught by identity.
    """

    __slots__ = ("ident", "parts", "path")

    def __init__(self, path: str, parts: tuple[str, ...] | None,
                 ident: tuple[int, int] | None) -> None:
        self.path = path
        self.parts = parts
        self.ident = ident

    @property
    def inside(self) -> bool:
        """Whether the state folder lies in (or holds, or is) the workspace root."""
        return self.parts is not None

    def notice(self, root: str) -> str | None:
        """The line janito says at start when the state folder is within the workspace."""
        if self.parts is None:
            return None
        if not self.parts:
            return (f"the workspace {root} lies inside janito's own configuration folder "
                    f"{self.path}: no tool may read or change anything in it, and code does "
                    "not run there; choose another workspace (--workspace DIR)")
        return (f"janito's configuration folder {self.path} lies inside the workspace {root}: "
                "no tool may read or change it and sandboxed code does not see it "
                "(JANITO_CONFIG_DIR moves it elsewhere)")


def state_folder(root: str) -> StateFolder:
    """Where janito's state folder lies relative to the real folder ``root``.

    The state folder is :func:`config_dir` with its links resolved: configuration, secrets,
    server and trust lists all live there, and nothing a model sends may reach them.
    """
    try:
        folder = os.path.realpath(config_dir())
    except (OSError, RuntimeError, ValueError):  # no home folder to find it from
        return StateFolder("", None, None)
    try:
        info = os.stat(folder)
        ident: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except OSError:
        ident = None
    base = root.rstrip("/") or "/"
    if folder == base or base.startswith(folder.rstrip("/") + "/"):
        return StateFolder(folder, (), ident)
    prefix = "/" if base == "/" else base + "/"
    if folder.startswith(prefix):
        return StateFolder(folder, tuple(folder[len(prefix):].split("/")), ident)
    return StateFolder(folder, None, ident)


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
