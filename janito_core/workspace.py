"""The workspace boundary: every path a tool touches is resolved through it."""

from __future__ import annotations

import os

from .errors import WorkspaceError

INVALID = "invalid_path"


class Workspace:
    """A folder that tools may read and write in, and nothing outside it.

    ``resolve()`` turns what a model sent into an absolute real path and refuses any that
    leaves the root: through ``..``, an absolute path elsewhere, or a symbolic link whose
    target lies outside. ``Workspace.unconfined()`` lifts the boundary explicitly.

    The check resolves links at call time; a link swapped between the check and the use
    (a race with another local process) is outside what a path check can prevent.
    """

    __slots__ = ("confined", "root")

    def __init__(self, root: str | os.PathLike[str] | None = None, *, confined: bool = True) -> None:
        base = os.getcwd() if root is None else os.fspath(root)
        self.root: str = os.path.realpath(os.path.abspath(base))
        self.confined = confined

    @classmethod
    def unconfined(cls, root: str | os.PathLike[str] | None = None) -> Workspace:
        """A workspace that resolves relative paths against ``root`` but refuses none."""
        return cls(root, confined=False)

    def resolve(self, path: object) -> str:
        """Return the absolute, link-resolved form of ``path`` or raise WorkspaceError."""
        text = _path_text(path)
        candidate = text if os.path.isabs(text) else os.path.join(self.root, text)
        try:
            real = os.path.realpath(candidate)
        except (OSError, ValueError) as exc:
            raise WorkspaceError(path, f"the path cannot be resolved ({exc})", INVALID) from None
        if self.confined and not self.contains(real):
            raise WorkspaceError(path, f"the path is outside the workspace {self.root}")
        return real

    def resolve_entry(self, path: object) -> str:
        """Like ``resolve()``, but the last component is kept as named, not followed.

        For operations on a directory entry itself: deleting, moving or renaming a
        symbolic link must act on the link, wherever it points. The folder holding the
        entry is resolved and must lie in the workspace; the workspace root itself is
        not an entry.
        """
        # Split the text as given: ``..`` is left for the OS to resolve through links,
        # as resolve() does, never folded away as text.
        text = _path_text(path).rstrip(os.sep) or os.sep
        parent, name = os.path.split(text)
        try:
            os.fsencode(name)
        except UnicodeError:
            raise WorkspaceError(path, "the name is not valid in a file name", INVALID) from None
        if name in ("", ".", ".."):
            full = self.resolve(text)
            if full == self.root:
                raise WorkspaceError(path, "the workspace root itself cannot be used here", INVALID)
            return full
        try:
            folder = self.resolve(parent or ".")
        except WorkspaceError as exc:
            raise WorkspaceError(path, exc.reason, exc.error_type) from None
        entry = os.path.join(folder, name)
        if self.confined and not self.contains(entry):
            raise WorkspaceError(path, f"the path is outside the workspace {self.root}")
        return entry

    def contains(self, real_path: str) -> bool:
        """Whether an already resolved path lies in the workspace."""
        root = self.root
        if real_path == root:
            return True
        prefix = root if root.endswith(os.sep) else root + os.sep
        return real_path.startswith(prefix)

    def display(self, real_path: str) -> str:
        """A resolved path as the model should see it: relative to the root when inside."""
        if real_path == self.root:
            return "."
        if self.contains(real_path):
            return os.path.relpath(real_path, self.root).replace(os.sep, "/")
        return real_path

    def __repr__(self) -> str:
        kind = "" if self.confined else ", confined=False"
        return f"Workspace({self.root!r}{kind})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Workspace)
            and other.root == self.root
            and other.confined == self.confined
        )

    def __hash__(self) -> int:
        return hash((self.root, self.confined))


def _path_text(path: object) -> str:
    """``path`` as a string, or WorkspaceError(invalid_path) when it is no path at all."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        raise WorkspaceError(path, "a path must be a string", INVALID)
    if not path:
        raise WorkspaceError(path, "a path must not be empty", INVALID)
    if "\x00" in path:
        raise WorkspaceError(path, "a path must not contain a NUL character", INVALID)
    return path
