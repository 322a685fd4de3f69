"""RunPythonFile: run a Python script from the workspace."""

from __future__ import annotations

import os
from typing import Any

from janito_core import BaseTool, WorkspaceError, tool

from ._common import (
    DEFAULT_TIMEOUT,
    PYTHON_ENV,
    RunCall,
    child_env,
    has_process_groups,
    sandbox_status,
)
from ._errors import guarded


@tool(permissions="x")
class RunPythonFile(BaseTool):
    """Run a Python file from the workspace and return its exit code, stdout and stderr.

    The file is found through the workspace (it must lie inside it) and runs in a separate
    Python process with the workspace root as the current folder and an empty stdin.
    Output is capped per stream, with a marker where the middle was left out. On timeout
    the process and everything it started are killed; so is anything still running in the
    background when the script finishes.
    Unless the user turned the sandbox off, the code can read every file but write only in
    the workspace and in $TMPDIR (a private temporary folder, emptied after the call), and
    has no network; a result with a `sandbox` note says what the sandbox refused.
    """

    @guarded("file_path")
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
        args = list(additional_args or [])
        call = RunCall({"file_path": file_path}, working_directory, timeout, capture_output,
                       capture_errors, additional_args=args or None,
                       python_executable=python_executable)
        problem = call.check_timeout()
        if problem is not None:
            return problem
        if any("\x00" in arg for arg in args):
            return call.fail("an additional argument contains a NUL character", "invalid_arguments")
        try:
            script = self.resolve_path(file_path)
        except WorkspaceError as exc:
            return call.fail(str(exc), "outside_workspace")
        if not os.path.exists(script):
            return call.fail(f"the file {file_path!r} does not exist", "not_found")
        if not os.path.isfile(script):
            return call.fail(f"{file_path!r} is not a file", "not_a_file")
        shown = call.echo["file_path"] = self.display_path(script)
        place = call.python_place(self, python_executable)
        if isinstance(place, dict):
            return place
        cwd, interpreter = place
        self.report_start(f"Running {shown} in {self.display_path(cwd)}")
        return call.execute(self, what=f"the script {shown}", argv=[interpreter, script, *args],
                            cwd=cwd, env=child_env(PYTHON_ENV))

    @classmethod
    def sandbox_status(cls) -> str:
        return sandbox_status()

    @classmethod
    def should_load(cls) -> bool:
        return has_process_groups(cls)


def main(argv: list[str] | None = None) -> int:
    """Run RunPythonFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(RunPythonFile, argv)


if __name__ == "__main__":
    raise SystemExit(main())
