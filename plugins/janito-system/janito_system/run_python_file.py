"""RunPythonFile: run a Python script from the workspace."""

from __future__ import annotations

import os
from typing import Annotated, ClassVar

from janito_core import BaseTool, Failure, WorkspaceError, tool
from janito_core.constraints import Pattern

from ._common import (
    DEFAULT_TIMEOUT,
    PYTHON_ENV,
    Ran,
    RunCall,
    child_env,
    has_process_groups,
    path_error,
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

MAX_SCRIPT_BYTES = 64 * 1024 * 1024
"""The largest script RunPythonFile runs (it is read whole before the run)."""

BOOTSTRAP = """\
def _janito_run():
    import sys
    path = sys.argv[1]
    del sys.argv[0]
    sys.path[0] = path.rpartition("/")[0] or "/"
    namespace = sys.modules["__main__"].__dict__
    del namespace["_janito_run"]
    namespace["__file__"] = path
    namespace["__cached__"] = None
    try:
        code = compile(sys.stdin.buffer.read(), path, "exec", dont_inherit=True)
        exec(code, namespace)
    except Exception as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
            tb = tb.tb_next
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        sys.exit(1)
_janito_run()
"""
"""Runs a script as ``python FILE ARGS`` would (``__file__``, ``sys.argv``, ``sys.path[0]``,
tracebacks naming the file), from its bytes on stdin instead of from its path."""


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

    #: The script is read through the workspace: a policy's path rules decide on it
    #: before the call, as on any file a tool reads.
    reads_paths: ClassVar[tuple[str, ...]] = ("file_path",)

    @guarded("file_path")
    def run(
        self,
        file_path: str,
        # described once, for the three run tools, in _options
        working_directory: WorkingDirectory = None,
        timeout: Timeout = DEFAULT_TIMEOUT,
        capture_output: CaptureOutput = True,
        capture_errors: CaptureErrors = True,
        python_executable: PythonExecutable = None,
        additional_args: list[Annotated[str, Pattern(NO_NUL)]] | None = None,
    ) -> Ran | Failure:
        """Run a Python file and return its exit code, standard output and standard error.

        Args:
            file_path: The script to run, relative to the workspace root.
            additional_args: Command-line arguments passed to the script (its sys.argv[1:]).
        """
        args = list(additional_args or [])
        call = RunCall({"file_path": file_path}, working_directory, timeout, capture_output,
                       capture_errors, additional_args=args or None,
                       python_executable=python_executable)
        script = self._read_script(file_path, call)
        if isinstance(script, dict):
            return script
        absolute, shown, source = script
        call.echo["file_path"] = shown
        place = call.python_place(self, python_executable)
        if isinstance(place, dict):
            return place
        cwd, interpreter = place
        self.report_start(f"Running {shown} in {self.display_path(cwd)}")
        # The script runs from the bytes read through the workspace, passed on stdin, so
        # a file swapped in under its name after it was opened is never what runs.
        return call.execute(self, what=f"the script {shown}",
                            argv=[interpreter, "-c", BOOTSTRAP, absolute, *args],
                            cwd=cwd, env=child_env(PYTHON_ENV), input_data=source)

    def _read_script(self, file_path: str, call: RunCall
                     ) -> tuple[str, str, bytes] | Failure:
        """(absolute real path, path as shown, content) of the script, or the failure."""
        from janito_core.workspace import NotRegularFile, read_fd

        try:
            with self.workspace.locate(file_path) as where:
                fd, info = where.open_regular()
                absolute, shown = where.absolute, where.shown
        except WorkspaceError as exc:  # outside the workspace, or a path the policy denies
            return call.fail(str(exc), path_error(exc))
        except FileNotFoundError:
            return call.fail(f"the file {file_path!r} does not exist", "not_found")
        except (IsADirectoryError, NotRegularFile):
            return call.fail(f"{file_path!r} is not a file", "not_a_file")
        except OSError as exc:
            return call.fail(f"{file_path!r} cannot be opened ({exc.strerror or exc})",
                             "not_found")
        try:
            if info.st_size > MAX_SCRIPT_BYTES:
                return call.fail(f"{shown} is {info.st_size} bytes; a script may hold at most "
                                 f"{MAX_SCRIPT_BYTES}", "file_too_large")
            source = read_fd(fd, info.st_size, MAX_SCRIPT_BYTES + 1)
        except OSError as exc:
            return call.fail(f"{shown} cannot be read ({exc.strerror or exc})", "not_found")
        finally:
            os.close(fd)
        if len(source) > MAX_SCRIPT_BYTES:
            return call.fail(f"{shown} grew past {MAX_SCRIPT_BYTES} bytes while it was read",
                             "file_too_large")
        return absolute, shown, source

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
