from __future__ import annotations

from typing import Any

from janito_core import BaseTool, WorkspaceError, tool


@tool(permissions="w", writes_paths=("filepath",))
class WriteNote(BaseTool):
    """Write a note file into the workspace."""

    def run(self, filepath: str, text: str) -> dict[str, Any]:
        """Write.

        Args:
            filepath: Path of the note, relative to the workspace.
            text: What to write.
        """
        try:
            self.workspace.write_file(filepath, text.encode(), overwrite=True)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": exc.error_type,
                    "filepath": filepath}
        return {"success": True, "filepath": filepath, "bytes": len(text.encode())}
