from __future__ import annotations

from typing import Any

from janito_core import BaseTool, WorkspaceError, tool


@tool(permissions="r")
class ReadFile(BaseTool):
    """Read a text file of the workspace."""

    def run(self, filepath: str) -> dict[str, Any]:
        """Read.

        Args:
            filepath: Path of the file, relative to the workspace.
        """
        try:
            real = self.resolve_path(filepath)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": "outside_workspace",
                    "filepath": filepath}
        with open(real, encoding="utf-8") as stream:
            return {"success": True, "filepath": filepath, "content": stream.read()}
