"""A tool whose parameter is named like an option of `janito run` and of the harness."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def describe_project(name: str, workspace: str = "default") -> dict[str, Any]:
    """Describe a project.

    Args:
        name: The project's name.
        workspace: Which of the project's workspaces to describe.
    """
    return {"success": True, "name": name, "workspace": workspace}
