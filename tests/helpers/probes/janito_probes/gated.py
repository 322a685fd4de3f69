"""A tool that loads only where PROBE_SERVICE_URL is set, and one that needs x."""

from __future__ import annotations

import os
from typing import Any

from janito_core import BaseTool, tool

MARKER = "PROBE_EXECUTED_MARKER"


@tool(permissions="r")
class AskService(BaseTool):
    """Ask the configured service a question."""

    @classmethod
    def should_load(cls) -> bool:
        if not os.environ.get("PROBE_SERVICE_URL"):
            return cls.skip("PROBE_SERVICE_URL is not set")
        return True

    def run(self, question: str) -> dict[str, Any]:
        """Ask.

        Args:
            question: The question.
        """
        return {"success": True, "question": question, "service": os.environ["PROBE_SERVICE_URL"]}


@tool(permissions="x")
class RunSnippet(BaseTool):
    """Pretend to run a snippet; leaves a marker file where the variable says."""

    def run(self, code: str) -> dict[str, Any]:
        """Run it.

        Args:
            code: The snippet.
        """
        marker = os.environ.get(MARKER)
        if marker:
            with open(marker, "a", encoding="utf-8") as handle:
                handle.write("ran\n")
        return {"success": True, "code": code}
