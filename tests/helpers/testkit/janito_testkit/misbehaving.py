"""Tools that break the rules, so dispatch has something to catch."""

from __future__ import annotations

import math
from typing import Any

from janito_core import BaseTool, WorkspaceError, tool


@tool()
class Raises(BaseTool):
    """Raise instead of returning a result."""

    def run(self, message: str = "bad things happened") -> dict[str, Any]:
        """Raise.

        Args:
            message: The exception's message.
        """
        raise ValueError(message)


@tool()
class Exits(BaseTool):
    """Call sys.exit() in the middle of a call."""

    def run(self) -> dict[str, Any]:
        raise SystemExit(3)


@tool()
class Escapes(BaseTool):
    """Let a WorkspaceError out of run()."""

    def run(self) -> dict[str, Any]:
        return {"success": True, "path": self.resolve_path("../../etc/passwd")}


@tool()
class ReturnsList(BaseTool):
    """Return a list instead of a dict."""

    def run(self) -> Any:
        return ["not", "a", "dict"]


@tool()
class ReturnsNoSuccess(BaseTool):
    """Return a dict without success."""

    def run(self) -> dict[str, Any]:
        return {"answer": 42}


@tool()
class ReturnsBadSuccess(BaseTool):
    """Return success that is not a boolean."""

    def run(self) -> dict[str, Any]:
        return {"success": "yes"}


@tool()
class ReturnsObject(BaseTool):
    """Return something JSON cannot carry, deep inside the result."""

    def run(self, kind: str = "set") -> dict[str, Any]:
        """Return it.

        Args:
            kind: set, nan, inf, bytes or key.
        """
        bad: Any = {
            "set": {1, 2},
            "nan": math.nan,
            "inf": -math.inf,
            "bytes": b"raw",
            "key": {1: "integer key"},
        }[kind]
        return {"success": True, "data": {"rows": [{"ok": 1}, {"value": bad}]}}


@tool()
class Huge(BaseTool):
    """Return a result as large as asked."""

    def run(self, chars: int = 0, items: int = 0) -> dict[str, Any]:
        """Return it.

        Args:
            chars: Length of one long string.
            items: Number of list items.
        """
        return {"success": True, "text": "x" * chars, "items": list(range(items)),
                "tail": "kept"}


@tool()
class NeedsWorkspaceError(BaseTool):
    """Raise WorkspaceError directly."""

    def run(self) -> dict[str, Any]:
        raise WorkspaceError("/elsewhere", "the path is outside the workspace")
