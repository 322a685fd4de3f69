"""Tools that report progress, one per permission colour."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


class _Chatty(BaseTool):
    """Report once of each kind."""

    def run(self, one_line: bool = False) -> dict[str, Any]:
        """Report.

        Args:
            one_line: Build one line from three reports with end="".
        """
        if one_line:
            self.report_start("step one", end="")
            self.report_progress(" two", end="")
            self.report_result(" done")
            return {"success": True}
        self.report_start("starting")
        self.report_progress("halfway")
        self.report_result("finished")
        self.report_warning("careful")
        self.report_error("failed once")
        return {"success": True}


@tool()
class ChattyNone(_Chatty):
    """Reports with no permission."""


@tool(permissions="r")
class ChattyRead(_Chatty):
    """Reports with read permission."""


@tool(permissions="w")
class ChattyWrite(_Chatty):
    """Reports with write permission."""


@tool(permissions="x")
class ChattyExec(_Chatty):
    """Reports with execute permission."""
