from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="w")
class WriteNote(BaseTool):
    """Write a note into the workspace."""

    writes_paths = ("name",)

    def run(self, name: str, text: str) -> dict[str, Any]:
        """Write a note.

        Args:
            name: The file to write.
            text: What the note says.
        """
        self.workspace.write_file(name, text.encode(), overwrite=True)
        return {"success": True, "written": name}
