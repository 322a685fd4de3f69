"""Tools that need each permission; they touch files only inside the workspace."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, WorkspaceError, tool


@tool(permissions="r")
class ReadNote(BaseTool):
    """Read a note from the workspace."""

    def run(self, filepath: str) -> dict[str, Any]:
        """Read a note.

        Args:
            filepath: The note's path, relative to the workspace.
        """
        try:
            real = self.resolve_path(filepath)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": "outside_workspace",
                    "filepath": filepath}
        try:
            with open(real, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            return {"success": False, "error": f"{filepath} does not exist",
                    "error_type": "not_found", "filepath": filepath}
        return {"success": True, "filepath": self.display_path(real), "text": text}


@tool(permissions="w")
class WriteNote(BaseTool):
    """Write a note into the workspace."""

    def run(self, filepath: str, text: str) -> dict[str, Any]:
        """Write a note.

        Args:
            filepath: The note's path, relative to the workspace.
            text: What to write.
        """
        real = self.resolve_path(filepath)
        with open(real, "w", encoding="utf-8") as handle:
            handle.write(text)
        return {"success": True, "filepath": self.display_path(real)}


@tool(permissions="x")
class RunThing(BaseTool):
    """Pretend to run a command (needs the execute permission)."""

    def run(self, command: str) -> dict[str, Any]:
        """Run it.

        Args:
            command: What would run.
        """
        return {"success": True, "command": command}


@tool(permissions="xwr")
class Everything(BaseTool):
    """Needs every permission."""

    def run(self) -> dict[str, Any]:
        return {"success": True}


@tool()
class Nothing(BaseTool):
    """Needs no permission at all."""

    def run(self) -> dict[str, Any]:
        return {"success": True, "instance": id(self), "root": self.workspace.root}
