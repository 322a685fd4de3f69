from __future__ import annotations

import time
from typing import Any

from janito_core import BaseTool, WorkspaceError, tool


@tool(permissions="w")
class WaitForCancel(BaseTool):
    """Wait until the call is cancelled; leave a marker file when it never was."""

    def run(self, marker: str, seconds: float = 20) -> dict[str, Any]:
        """Wait.

        Args:
            marker: Path of the marker, relative to the workspace: MARKER.started is written
                at once, MARKER.cancelled when the call is cancelled, MARKER when the time
                ran out without a cancellation.
            seconds: How long to wait for the cancellation.
        """
        try:
            path = self.resolve_path(marker)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": "outside_workspace"}
        with open(path + ".started", "w", encoding="utf-8") as stream:
            stream.write("started")
        token = self.cancel_token
        if token is None:
            time.sleep(seconds)
            cancelled = False
        else:
            cancelled = token.wait(seconds)
        if cancelled:
            with open(path + ".cancelled", "w", encoding="utf-8") as stream:
                stream.write(str(token.reason if token is not None else ""))
            return {"success": False, "error": "cancelled", "error_type": "cancelled"}
        with open(path, "w", encoding="utf-8") as stream:
            stream.write("not cancelled")
        return {"success": True, "waited": seconds}
