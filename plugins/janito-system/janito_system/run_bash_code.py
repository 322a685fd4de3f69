"""RunBashCode: run shell code with bash (or a POSIX sh) in the workspace."""

from __future__ import annotations

import os
import shutil
from typing import Annotated, Any

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Pattern

from ._common import (
    DEFAULT_TIMEOUT,
    Ran,
    RunCall,
    child_env,
    echo_text,
    has_process_groups,
    preview,
    sandbox_status,
)
from ._errors import guarded
from ._options import NO_NUL, CaptureErrors, CaptureOutput, Timeout, WorkingDirectory

ARGV_CODE_LIMIT = 100_000
"""Code longer than this (in bytes) goes through a temporary script file, not ``-c``:
Linux refuses a single command-line argument over 128 KiB."""


def find_shell() -> str | None:
    """bash on PATH, else a POSIX sh on PATH, else None."""
    return shutil.which("bash") or shutil.which("sh")


@tool(permissions="x")
class RunBashCode(BaseTool):
    """Run bash code in the workspace and return its exit code, stdout and stderr.

    Pipelines, redirections, loops and every other shell construct work. The code runs
    with bash (a POSIX sh where bash is missing), without profile or rc files, with the
    workspace root as the current folder and an empty stdin. Output is capped per stream,
    with a marker where the middle was left out. On timeout the shell and everything it
    started are killed; so is anything still running in the background when it finishes.
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
        bash_executable: str | None = None,
    ) -> Ran | Failure:
        """Run shell code and return its exit code, standard output and standard error.

        Args:
            code: The shell code to run: one command or a multi-line script.
            bash_executable: Shell to run the code with (default: bash from PATH, else sh).
        """
        call = RunCall({"code": echo_text(code)}, working_directory, timeout, capture_output,
                       capture_errors, bash_executable=bash_executable)
        cwd = call.folder(self)
        if isinstance(cwd, dict):
            return cwd
        shell = shutil.which(bash_executable) if bash_executable else find_shell()
        if shell is None:
            wanted = repr(bash_executable) if bash_executable else "bash or sh"
            return call.fail(f"no shell found: {wanted} is not on PATH", "not_found")
        options = ["--noprofile", "--norc"] if "bash" in os.path.basename(shell) else []
        self.report_start(f"Running {os.path.basename(shell)} in {self.display_path(cwd)}:\n"
                          f"{preview(code)}")
        data = code.encode("utf-8", errors="replace")
        env = child_env(drop=("BASH_ENV", "ENV"))
        if len(data) <= ARGV_CODE_LIMIT:
            result = call.execute(self, what="the shell code", argv=[shell, *options, "-c", code],
                                  cwd=cwd, env=env)
        else:
            result = self._run_script_file(call, [shell, *options], data, cwd, env)
        return {**result, "shell": shell}

    def _run_script_file(self, call: RunCall, argv: list[str], data: bytes, cwd: str,
                         env: dict[str, str]) -> dict[str, Any]:
        import tempfile

        try:
            folder = tempfile.mkdtemp(prefix="janito-bash-")
        except OSError as exc:
            return call.fail(f"cannot write the long script to a temporary file: {exc}",
                             "start_failed")
        script = os.path.join(folder, "script.sh")
        try:
            with open(script, "wb") as handle:
                handle.write(data)
            return call.execute(self, what="the shell code", argv=[*argv, script], cwd=cwd, env=env)
        except OSError as exc:
            return call.fail(f"cannot write the long script to a temporary file: {exc}",
                             "start_failed")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @classmethod
    def sandbox_status(cls) -> str:
        return sandbox_status()

    @classmethod
    def should_load(cls) -> bool:
        if not has_process_groups(cls):
            return False
        if find_shell() is None:
            return cls.skip("no bash or POSIX sh was found on PATH")
        return True


def main(argv: list[str] | None = None) -> int:
    """Run RunBashCode from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(RunBashCode, argv)


if __name__ == "__main__":
    raise SystemExit(main())
