"""RunPythonCode: run a Python snippet in the workspace with the running interpreter."""

from __future__ import annotations

import os
import sys
from typing import Any

from janito_core import BaseTool, failure, tool

from ._common import (
    DEFAULT_TIMEOUT,
    add_common_arguments,
    check_timeout,
    child_env,
    echo_text,
    execute,
    preview,
    print_result,
    resolve_directory,
    workspace_from,
)
from ._errors import unexpected


@tool(permissions="x")
class RunPythonCode(BaseTool):
    """Run Python code in the workspace and return its exit code, stdout and stderr.

    The code runs in a separate Python process (the interpreter janito runs on, unless
    another is named) with the workspace root as the current folder and an empty stdin.
    Output is capped per stream, with a marker where the middle was left out. On timeout
    the process and everything it started are killed; so is anything still running in the
    background when the code finishes.
    """

    def run(
        self,
        code: str,
        working_directory: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        capture_output: bool = True,
        capture_errors: bool = True,
        python_executable: str | None = None,
    ) -> dict[str, Any]:
        """Run Python code and return its exit code, standard output and standard error.

        Args:
            code: The Python source to run, one statement or a whole script.
            working_directory: Folder to run in, relative to the workspace root (default:
                the workspace root). It must lie inside the workspace.
            timeout: Seconds to wait before the run is killed along with every process it
                started (default 60).
            capture_output: Return standard output (true) or discard it (false).
            capture_errors: Return standard error (true) or discard it (false).
            python_executable: Interpreter to run the code with (default: the Python that
                runs janito).
        """
        try:
            return self._run(code, working_directory, timeout, capture_output, capture_errors,
                             python_executable)
        except Exception as exc:
            return unexpected(self, exc, {"code": code})

    def _run(
        self,
        code: str,
        working_directory: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        capture_output: bool = True,
        capture_errors: bool = True,
        python_executable: str | None = None,
    ) -> dict[str, Any]:
        echo: dict[str, Any] = {"code": echo_text(code), "timeout": timeout}
        if not capture_output:
            echo["capture_output"] = False
        if not capture_errors:
            echo["capture_errors"] = False
        if python_executable is not None:
            echo["python_executable"] = python_executable
        problem = check_timeout(timeout, echo)
        if problem is not None:
            return problem
        if "\x00" in code:
            return failure("the code contains a NUL character, which Python source cannot hold",
                           "invalid_arguments", **echo)
        cwd, problem = resolve_directory(self, working_directory, echo)
        if problem is not None or cwd is None:
            return problem or failure("no working directory", "not_found", **echo)
        interpreter = python_executable or sys.executable
        if not interpreter:
            return failure("the path of the running Python interpreter is unknown; name one "
                           "with python_executable", "not_found", **echo)
        self.report_start(f"Running Python in {self.display_path(cwd)}:\n{preview(code)}")
        # The code goes in on stdin ("python -"), which CPython reads whole before running
        # it: no command-line length limit, and the code then sees an empty stdin.
        return execute(
            self,
            what="the Python code",
            argv=[interpreter, "-"],
            cwd=cwd,
            echo=echo,
            timeout=timeout,
            capture_output=capture_output,
            capture_errors=capture_errors,
            env=child_env({"PYTHONIOENCODING": "utf-8"}),
            input_data=code.encode("utf-8", errors="replace"),
        )

    @classmethod
    def should_load(cls) -> bool:
        if not hasattr(os, "killpg"):
            return cls.skip("running code needs POSIX process groups (os.killpg), "
                            "which this platform lacks")
        return True


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m janito_system.run_python_code",
        description="Run Python code in the workspace the way a model's call would.",
    )
    parser.add_argument("--code", "-c", required=True, help="the Python code to run")
    parser.add_argument("--python-executable", "-p", default=None,
                        help="interpreter to use (default: this one)")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    result = RunPythonCode(workspace_from(args.workspace)).run(
        code=args.code,
        working_directory=args.working_directory,
        timeout=args.timeout,
        capture_output=not args.no_capture_output,
        capture_errors=not args.no_capture_errors,
        python_executable=args.python_executable,
    )
    return print_result(result, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
