"""Paths for people to read."""

from __future__ import annotations

import os


def norm_path(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """Return ``path`` for display: relative to ``base`` (default: the current directory)
    when it lies below it, with forward slashes, and never empty."""
    text = os.fspath(path)
    if not text:
        return "."
    base_text = os.fspath(base) if base is not None else os.getcwd()
    absolute = os.path.abspath(text)
    try:
        relative = os.path.relpath(absolute, base_text)
    except ValueError:
        relative = absolute
    shown = absolute if relative == ".." or relative.startswith(".." + os.sep) else relative
    return shown.replace(os.sep, "/")
