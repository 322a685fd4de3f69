"""RunPythonCode: run a Python snippet in the workspace with the running interpreter."""

from __future__ import annotations

from typing import Annotated

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Pattern

from ._common import (
    DEFAULT_TIMEOUT,
    PYTHON_ENV,
    Ran,
    RunCall,
    child_env,
    echo_text,
    has_process_groups,
    preview,
    sandbox_status,
)
from ._errors import guarded
from ._options import (
    NO_NUL,
    CaptureErrors,
    CaptureOutput,
    PythonExecutable,
    Timeout,
    WorkingDirectory,
)


@tool(permissions="x")
class RunPythonCode(BaseTool):
    """Run Python code in the workspace and return its exit code, stdout and stderr.

    The code runs in a separate Python process (the interpreter janito runs on, unless
    another is named) with the workspace root as the current folder and an empty stdin.
    Output is capped per stream, with a marker where the middle was left out. On timeout
    the process and everything it started are killed; so is anything still running in the
    background when the code finishes.
    Unless the user turned the sandbox off, the code can read every file but write only in
    the workspace and in $TMPDIR (a private temporary folder, emptied after the call), and
    has no network; a result with a `sandbox` note says what the sandbox refused.
    """

    @guarded("code")
    def run(
        self,
        code: Annotated[str, Pattern(NO_NUL)],
        # described once, for the three run tools, in _options
        working_directory: WorkingDirectory = None,
        timeout: Timeout = DEFAULT_TIMEOUT,
        capture_output: CaptureOutput = True,
        capture_errors: CaptureErrors = True,
        python_executable: PythonExecutable = None,
    ) -> Ran | Failure:
        """Run Python code and return its exit code, standard output and standard error.

        Args:
            code: The Python source to run, one statement or a whole script.
        """
        call = RunCall({"code": echo_text(code)}, working_directory, timeout, capture_output,
                       capture_errors, python_executable=python_executable)
        place = call.python_place(self, python_executable)
        if isinstance(place, dict):
            return place
        cwd, interpreter = place
        self.report_start(f"Running Python in {self.display_path(cwd)}:\n{preview(code)}")
        # The code goes in on stdin ("python -"), which CPython reads whole before running
        # it: no command-line length limit, and the code then sees an empty stdin.
        return call.execute(self, what="the Python code", argv=[interpreter, "-"], cwd=cwd,
                            env=child_env(PYTHON_ENV), input_data=code.encode("utf-8", errors="replace"))

    @classmethod
    def sandbox_status(cls) -> str:
        return sandbox_status()

    @classmethod
    def should_load(cls) -> bool:
        return has_process_groups(cls)


def main(argv: list[str] | None = None) -> int:
    """Run RunPythonCode from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(RunPythonCode, argv)


if __name__ == "__main__":
    raise SystemExit(main())
