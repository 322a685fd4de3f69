from __future__ import annotations

import hashlib
import os
import time
from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class DoWork(BaseTool):
    """Work for a while and say which server process did it."""

    def run(self, seconds: float = 0.0, steps: int = 0, cpu_ms: float = 0.0) -> dict[str, Any]:
        """Work: burn CPU, then wait in steps, reporting each one.

        Args:
            seconds: How long to wait in all, in ``steps`` steps (stops when cancelled).
            steps: How many progress reports to make while waiting.
            cpu_ms: Milliseconds of hashing to do first.
        """
        digest = b""
        if cpu_ms > 0:
            until = time.process_time() + cpu_ms / 1000
            while time.process_time() < until:
                for _ in range(200):
                    digest = hashlib.sha256(digest).digest()
        token = self.cancel_token
        count = max(1, steps)
        for step in range(1, count + 1):
            if seconds > 0:
                pause = seconds / count
                if token is not None and token.wait(pause):
                    return {"success": False, "error": f"cancelled at step {step}: {token.reason}",
                            "error_type": "cancelled", "pid": os.getpid()}
                if token is None:
                    time.sleep(pause)
            if steps:
                self.report_progress(f"step {step} of {steps}")
        return {"success": True, "pid": os.getpid(), "steps": steps}
