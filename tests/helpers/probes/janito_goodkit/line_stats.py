"""LineStats: count the lines of a workspace file (a class tool with a main() harness)."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, WorkspaceError, failure, tool


@tool(permissions="r")
class LineStats(BaseTool):
    """Count the lines and the longest line of a text file in the workspace."""

    def run(self, filepath: str, max_bytes: int = 65_536) -> dict[str, Any]:
        """Count lines.

        Args:
            filepath: The file, relative to the workspace.
            max_bytes: Read at most this many bytes.
        """
        echo = {"filepath": filepath}
        if max_bytes < 0:
            return failure("max_bytes must not be negative", "invalid_arguments", **echo)
        try:
            data = self.workspace.read_bytes(filepath, max_bytes)
        except WorkspaceError as exc:
            return failure(str(exc), exc.error_type, **echo)
        except OSError as exc:
            return failure(f"cannot read {filepath}: {exc.strerror or exc}", "os_error", **echo)
        lines = data.decode("utf-8", "replace").splitlines()
        self.report_result(f"{len(lines)} lines")
        return {"success": True, **echo, "lines": len(lines),
                "longest": max((len(line) for line in lines), default=0)}


def main(argv: list[str] | None = None) -> int:
    from janito_core.harness import run_main

    return run_main(LineStats, argv)


if __name__ == "__main__":
    raise SystemExit(main())
