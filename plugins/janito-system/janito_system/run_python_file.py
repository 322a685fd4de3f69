"""RunPythonFile: run a Python script from the workspace."""

from __future__ import annotations

import os
import sys
from typing import Any

from janito_core import BaseTool, WorkspaceError, failure, tool

from ._common import (
    DEFAULT_TIMEOUT,
    add_common_arguments,
    check_timeout,
    child_env,
    execute,
    print_result,
    resolve_directory,
    workspace_from,
)
from ._errors import unexpected


@tool(permissions="x")
class RunPythonFile(BaseTool):
    """Run a Python file from the workspace and return its exit code, stdout and stderr.

    The file is found through the workspace (it must lie inside it) and runs in a separate
    Python process with the workspace root as the current folder and an empty stdin.
    Output is capped per stream, with a marker where the middle was left out. On timeout
    the process and everything it started are killed; so is anything still running in the
    background when the script finishes.
    """

    def run(
        self,
        file_path: str,
        working_directory: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        capture_output: bool = True,
        capture_errors: bool = True,
        python_executable: str | None = None,
        additional_args: list[str] | None = None,
    ) -> dict[str, Any]:
        """Run a Python file and return its exit code, standard output and standard error.

        Args:
            file_path: The script to run, relative to the workspace root.
            working_directory: Folder to run in, relative to the workspace root (default:
                the workspace root). It must lie inside the workspace.
            timeout: Seconds to wait before the run is killed along with every process it
                started (default 60).
            capture_output: Return standard output (true) or discard it (false).
            capture_errors: Return standard error (true) or discard it (false).
            python_executable: Interpreter to run the file with (default: the Python that
                runs janito).
            additional_args: Command-line arguments passed to the script (its sys.argv[1:]).
        """
        try:
            return self._run(file_path, working_directory, timeout, capture_output, capture_errors,
                             python_executable, additional_args)
        except Exception as exc:
            return unexpected(self, exc, {"file_path": file_path})

    def _run(
        self,
        file_path: str,
        working_directory: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        capture_output: bool = True,
        capture_errors: bool = True,
        python_executable: str | None = None,
        additional_args: list[str] | None = None,
    ) -> dict[str, Any]:
        args = list(additional_args or [])
        echo: dict[str, Any] = {"file_path": file_path, "timeout": timeout}
        if not capture_output:
            echo["capture_output"] = False
        if not capture_errors:
            echo["capture_errors"] = False
        if args:
            echo["additional_args"] = args
        if python_executable is not None:
            echo["python_executable"] = python_executable
        problem = check_timeout(timeout, echo)
        if problem is not None:
            return problem
        if any("\x00" in arg for arg in args):
            return failure("an additional argument contains a NUL character", "invalid_arguments",
                           **echo)
        try:
            script = self.resolve_path(file_path)
        except WorkspaceError as exc:
            return failure(str(exc), "outside_workspace", **echo)
        if not os.path.exists(script):
            return failure(f"the file {file_path!r} does not exist", "not_found", **echo)
        if not os.path.isfile(script):
            return failure(f"{file_path!r} is not a file", "not_a_file", **echo)
        echo["file_path"] = self.display_path(script)
        cwd, problem = resolve_directory(self, working_directory, echo)
        if problem is not None or cwd is None:
            return problem or failure("no working directory", "not_found", **echo)
        interpreter = python_executable or sys.executable
        if not interpreter:
            return failure("the path of the running Python interpreter is unknown; name one "
                           "with python_executable", "not_found", **echo)
        self.report_start(f"Running {echo['file_path']} in {self.display_path(cwd)}")
        return execute(
            self,
            what=f"the script {echo['file_path']}",
            argv=[interpreter, script, *args],
            cwd=cwd,
            echo=echo,
            timeout=timeout,
            capture_output=capture_output,
            capture_errors=capture_errors,
            env=child_env({"PYTHONIOENCODING": "utf-8"}),
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
        prog="python -m janito_system.run_python_file",
        description="Run a Python file of the workspace the way a model's call would.",
    )
    parser.add_argument("file_path", help="the script, relative to the workspace root")
    parser.add_argument("additional_args", nargs="*",
                        help="arguments for the script (put them after --)")
    parser.add_argument("--python-executable", "-p", default=None,
                        help="interpreter to use (default: this one)")
    add_common_arguments(parser)
    args = parser.parse_intermixed_args(argv)
    result = RunPythonFile(workspace_from(args.workspace)).run(
        file_path=args.file_path,
        working_directory=args.working_directory,
        timeout=args.timeout,
        capture_output=not args.no_capture_output,
        capture_errors=not args.no_capture_errors,
        python_executable=args.python_executable,
        additional_args=args.additional_args,
    )
    return print_result(result, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
