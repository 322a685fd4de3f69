"""A tool that returns a list instead of a dict, but only for a settings file that parses:
calls reach that path only when the workspace holds one (check_toolset's setup=)."""

from __future__ import annotations

import json
from typing import Any

from janito_core import Workspace, WorkspaceError, failure, tool


@tool(permissions="r")
def read_settings(filepath: str, workspace: Workspace) -> Any:
    """Read a JSON settings file.

    Args:
        filepath: The settings file, relative to the workspace.
    """
    try:
        data = workspace.read_bytes(filepath)
    except WorkspaceError as exc:
        return failure(str(exc), exc.error_type, filepath=filepath)
    except OSError as exc:
        return failure(f"cannot read {filepath}: {exc.strerror or exc}", "os_error",
                       filepath=filepath)
    try:
        settings = json.loads(data)
    except ValueError:
        return failure(f"{filepath} is not JSON", "invalid_settings", filepath=filepath)
    if not isinstance(settings, dict):
        return failure(f"{filepath} holds no JSON object", "invalid_settings", filepath=filepath)
    return sorted(settings.items())  # the bug: a list, and only for real settings
