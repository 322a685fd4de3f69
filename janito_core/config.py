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
