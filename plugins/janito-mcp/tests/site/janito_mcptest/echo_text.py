from __future__ import annotations

from typing import TypedDict

from janito_core import BaseTool, tool


class Echoed(TypedDict):
    """What EchoText answers (its MCP output schema).

    Attributes:
        text: The text, repeated.
        times: How many times.
    """

    text: str
    times: int


@tool(permissions="r")
class EchoText(BaseTool):
    """Return the text it is given."""

    def run(self, text: str, times: int = 1) -> Echoed:
        """Echo text.

        Args:
            text: The text to send back.
            times: How many times to repeat it.
        """
        self.report_start("Echoing ", end="")
        self.report_result("done")
        return {"success": True, "text": text * times, "times": times}
