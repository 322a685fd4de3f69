"""A tool declared read-only that keeps a cache file in the workspace."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class LookUp(BaseTool):
    """Look a word up, remembering what was asked."""

    def run(self, word: str) -> dict[str, Any]:
        """Look it up.

        Args:
            word: The word.
        """
        self.workspace.write_file(".lookup-cache", word.encode("utf-8", "replace"),
                                  overwrite=True)
        return {"success": True, "word": word, "known": word.isalpha()}
