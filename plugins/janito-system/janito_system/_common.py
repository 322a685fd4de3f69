"""What the run tools share: argument checks, the working folder, the sandbox, the result."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Literal

# The result types of the tools (their MCP output schemas) mark the keys a result may
# leave out with NotRequired, which typing has from 3.11 on.
if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
    from typing import TypedDict as TypedDict
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired as NotRequired
    from typing_extensions import TypedDict as TypedDict

from janito_core import Failure, WorkspaceError, failure
from janito_core.results import CANCELLED, counted

from ._process import PROCESS_GROUP, run_process

if TYPE_CHECKING:
    from janito_core import BaseTool
    from janito_core.sandbox import SandboxPolicy

    from ._mask import Mask
    from ._overlay import Layers
    from ._sandbox import Choice

DEFAULT_TIMEOUT = 60
ECHO_LIMIT = 2_000
"""Characters of the code kept when it is echoed back in the result."""

SECRET_ENV_PREFIX = "JANITO_SECRET_"


def echo_text(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` for echoing in a result: cut to ``limit`` characters with a marker."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... truncated: {limit} of {len(text)} characters shown]"


def preview(text: str, limit: int = 200) -> str:
    """A one-glance preview of code for a progress report."""
    return text if len(text) <= limit else text[:limit] + "..."


def child_env(extra: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of a child: ours, without janito secrets and ``drop``, plus ``extra``.

    ``JANITO_SECRET_*`` variables override stored secrets for janito itself; code a model
    runs has no business reading them, so they are not passed on.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(SECRET_ENV_PREFIX) and key not in drop
    }
    if extra:
        env.update(extra)
    return env


PYTHON_ENV = {"PYTHONIOENCODING": "utf-8"}
"""What a Python child gets on top of ``child_env()``."""

NO_PROCESS_GROUPS = ("running code needs POSIX process groups (os.killpg), "
                     "which this platform lacks")


def has_process_groups(tool_class: type[BaseTool]) -> bool:
    """``should_load()`` of every run tool: process groups, and a sandbox that can be enforced.

    Without process groups a run cannot be killed whole; a sandbox policy that no
    mechanism here can enforce fails closed (the reason says how to fix it).
    """
    if not hasattr(os, "killpg"):
        return tool_class.skip(NO_PROCESS_GROUPS)
    from ._sandbox import load_problem

    problem = load_problem()
    if problem is not None:
        return tool_class.skip(problem)
    return True


def sandbox_status() -> str:
    """``sandbox_status()`` of every run tool: the policy and the mechanism in force."""
    from ._sandbox import status_line

    return status_line()


class Unapplied(TypedDict):
    """A change of captured code that was not made in the workspace.

    Attributes:
        path: The path the code changed.
        reason: Why the change was not made.
    """

    path: str
    reason: str


class Ran(TypedDict):
    """What the run tools answer when the code ran and exited with code 0 (any other end
    is a failure with the same keys, and error and error_type).

    Attributes:
        code: The code as given (cut when long).
        file_path: The file as given (RunPythonFile).
        timeout: The time limit, in seconds.
        capture_output: False when standard output was not captured.
        capture_errors: False when standard error was not captured.
        bash_executable: The shell asked for.
        python_executable: The interpreter asked for.
        additional_args: The arguments given to the file.
        working_directory: Where the code ran, as the workspace shows it.
        shell: The shell that ran the code (RunBashCode).
        exit_code: The exit code.
        stdout: Standard output (cut when long).
        stdout_truncated: Whether stdout was cut.
        stdout_bytes: Bytes written to standard output.
        stderr: Standard error (cut when long).
        stderr_truncated: Whether stderr was cut.
        stderr_bytes: Bytes written to standard error.
        timed_out: Whether the time limit stopped the code.
        duration_ms: How long it ran.
        output_incomplete: True when some output could not be read.
        notes: What went wrong reading the output.
        sandbox: What the sandbox refused, when that may explain the outcome.
        changed: Workspace paths the code changed (captured code; at most 1,000).
        changed_count: How many, when more were changed.
        not_applied: Changes that were not made, and why.
    """

    success: Literal[True]
    code: NotRequired[str]
    file_path: NotRequired[str]
    timeout: float
    capture_output: NotRequired[bool]
    capture_errors: NotRequired[bool]
    bash_executable: NotRequired[str]
    python_executable: NotRequired[str]
    additional_args: NotRequired[list[str]]
    working_directory: str
    shell: NotRequired[str]
    exit_code: int | None
    stdout: NotRequired[str]
    stdout_truncated: NotRequired[bool]
    stdout_bytes: NotRequired[int]
    stderr: NotRequired[str]
    stderr_truncated: NotRequired[bool]
    stderr_bytes: NotRequired[int]
    timed_out: bool
    duration_ms: int
    output_incomplete: NotRequired[bool]
    notes: NotRequired[list[str]]
    sandbox: NotRequired[str]
    changed: NotRequired[list[str]]
    changed_count: NotRequired[int]
    not_applied: NotRequired[list[Unapplied]]


class RunCall:
    """One call of a run tool: what every run tool is asked, and the inputs its result repeats.

    ``echo`` holds ``first`` (the code or the file), the timeout, the capture switches that
    are turned off, then each of ``optional`` that is not None, in that order. A tool may
    update a value of ``echo`` in place (a path as the workspace shows it).
    """

    __slots__ = ("capture_errors", "capture_output", "echo", "timeout", "working_directory")

    def __init__(self, first: dict[str, Any], working_directory: str | None, timeout: float,
                 capture_output: bool, capture_errors: bool, **optional: Any) -> None:
        self.working_directory = working_directory
        self.timeout = timeout
        self.capture_output = capture_output
        self.capture_errors = capture_errors
        echo: dict[str, Any] = {**first, "timeout": timeout}
        if not capture_output:
            echo["capture_output"] = False
        if not capture_errors:
            echo["capture_errors"] = False
        echo.update((key, value) for key, value in optional.items() if value is not None)
        self.echo = echo

    def fail(self, error: str, error_type: str) -> Failure:
        """A failed result that repeats the inputs."""
        return failure(error, error_type, **self.echo)

    def folder(self, tool: BaseTool) -> str | Failure:
        """The absolute working folder (by default the workspace root), or the failure.

        The folder is found through the workspace (a link is followed only while it stays
        inside), then handed over as its absolute real path, because a child's working
        folder can only be given by path. That string is not a check later trusted to open
        anything: what the child then touches is bounded by the run tools' sandbox, not by
        this path, and code that runs can name any path it likes anyway.
        """
        import stat

        working_directory = self.working_directory
        if working_directory is None or working_directory == "":
            root = tool.workspace.root
            if not os.path.isdir(root):
                return self.fail(f"the workspace folder {root} does not exist", "not_found")
            return root
        try:
            with tool.workspace.locate(working_directory) as where:
                info = where.stat()
                real = where.absolute
        except WorkspaceError as exc:  # outside the workspace, or a path the policy denies
            return self.fail(str(exc), path_error(exc))
        except FileNotFoundError:
            return self.fail(f"the working directory {working_directory!r} does not exist",
                             "not_found")
        except NotADirectoryError:
            return self.fail(f"the working directory {working_directory!r} is not a folder",
                             "not_a_directory")
        except OSError as exc:
            return self.fail(f"the working directory {working_directory!r} cannot be reached "
                             f"({exc.strerror or exc})", "not_found")
        if not stat.S_ISDIR(info.st_mode):
            return self.fail(f"the working directory {working_directory!r} is not a folder",
                             "not_a_directory")
        return real

    def python_place(self, tool: BaseTool, python_executable: str | None
                     ) -> tuple[str, str] | Failure:
        """(working folder, interpreter) of a Python run, or the failure."""
        cwd = self.folder(tool)
        if isinstance(cwd, dict):
            return cwd
        interpreter = python_executable or sys.executable
        if not interpreter:
            return self.fail("the path of the running Python interpreter is unknown; name one "
                             "with python_executable", "not_found")
        return cwd, interpreter

    def execute(self, tool: BaseTool, *, what: str, argv: list[str], cwd: str,
                env: dict[str, str], input_data: bytes | None = None) -> dict[str, Any]:
        """Run ``argv`` in the sandbox and turn what happened into the result (never raises).

        Where code's writes to the workspace are captured (``_capture``), the result also
        lists the paths it changed, which are then journaled like a file tool's changes.
        """
        import time

        from janito_core.sandbox import SandboxPolicyError, sandbox_policy

        from . import _sandbox

        base = {**self.echo, "working_directory": tool.display_path(cwd)}
        problem = _runnable(argv[0])
        if problem is not None:
            message, error_type = problem
            tool.report_error(message)
            return failure(f"cannot run {what}: {message}", error_type, **base)
        try:
            policy = sandbox_policy()
        except SandboxPolicyError as exc:
            tool.report_error(str(exc))
            return failure(f"cannot run {what}: {exc}", _sandbox.SANDBOX_UNAVAILABLE, **base)
        workspace = tool.workspace.root
        choice = _sandbox.choose(policy, probe=True, workspace=workspace)
        if choice.mechanism is None:
            reason = _sandbox.refusal(policy, choice.why)
            tool.report_error(reason)
            return failure(f"cannot run {what}: {reason}", _sandbox.SANDBOX_UNAVAILABLE, **base)
        hidden = _sandbox.hidden_state(policy, choice.mechanism, workspace)
        if hidden.refusal is not None:
            tool.report_error(hidden.refusal)
            return failure(f"cannot run {what}: {hidden.refusal}", _sandbox.SANDBOX_UNAVAILABLE,
                           **base)
        from ._mask import MaskError, policy_mask
        from ._mask import refusal as mask_refusal

        try:
            mask = policy_mask(workspace, tool.workspace.guard,
                               writable=policy.confined and policy.workspace_writable)
        except MaskError as exc:
            tool.report_error(str(exc))
            return failure(f"cannot run {what}: {exc}", _sandbox.SANDBOX_UNAVAILABLE, **base)
        masked = mask_refusal(mask, choice.mechanism, confined=policy.confined)
        if masked is not None:
            tool.report_error(masked)
            return failure(f"cannot run {what}: {masked}", _sandbox.SANDBOX_UNAVAILABLE, **base)
        from . import _capture

        capture = _capture.plan(tool.workspace, policy, choice.mechanism)
        if isinstance(capture, str):
            _capture.uncaptured(tool.workspace, capture)
            capture = None
        since = time.time_ns()
        try:
            result = self._run(tool, what=what, argv=argv, cwd=cwd, env=env,
                               input_data=input_data, policy=policy, choice=choice,
                               hide=hidden.folder, mask=mask, base=base, overlay=capture)
            if capture is not None:
                result.update(_capture.apply(tool.workspace, capture, since))
        finally:
            if capture is not None:
                import threading

                from ._overlay import remove_layers

                # Off the call's path: removing what the code left (thousands of files
                # after an install) took seconds here. A janito that exits first leaves
                # them to the sweep of dead processes' folders.
                threading.Thread(target=remove_layers, args=(capture,), daemon=True,
                                 name="janito-remove-layers").start()
        return result

    def _run(self, tool: BaseTool, *, what: str, argv: list[str], cwd: str,
             env: dict[str, str], input_data: bytes | None, policy: SandboxPolicy,
             choice: Choice, hide: str | None, mask: Mask, base: dict[str, Any],
             overlay: Layers | None) -> dict[str, Any]:
        """Start the sandboxed code, wait for it, and say what happened (never raises)."""
        import subprocess

        from . import _sandbox

        timeout = self.timeout
        workspace = tool.workspace.root
        try:
            launch = _sandbox.prepare(policy, choice, argv, cwd=cwd, workspace=workspace,
                                      env=env, hide=hide, mask=mask, overlay=overlay)
            outcome = run_process(
                argv, cwd=cwd, timeout=timeout, capture_stdout=self.capture_output,
                capture_stderr=self.capture_errors, input_data=input_data, launch=launch,
                cancel=tool.cancel_token,
            )
        except FileNotFoundError as exc:
            missing = exc.filename or argv[0]
            tool.report_error(f"{missing} not found")
            return failure(f"cannot run {what}: {missing} was not found", "not_found", **base)
        except PermissionError as exc:
            tool.report_error(f"cannot run {argv[0]}: {exc.strerror}")
            return failure(f"cannot run {what}: {exc.strerror or exc} ({argv[0]})",
                           "permission_denied", **base)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            tool.report_error(f"cannot start: {exc}")
            return failure(f"cannot start {what}: {exc}", "start_failed", **base)

        result: dict[str, Any] = {
            "success": False,
            **base,
            "exit_code": outcome.exit_code,
            **outcome.streams(),
            "timed_out": outcome.timed_out,
            "duration_ms": outcome.duration_ms,
        }
        if outcome.output_incomplete:
            result["output_incomplete"] = True
            result["notes"] = outcome.notes
        seconds = f"{outcome.duration_ms / 1000:.2f} s"
        ended = not (outcome.timed_out or outcome.cancelled or outcome.interrupted)
        broken = ended and _sandbox.sandbox_failure(launch.mechanism, outcome.report,
                                                    result.get("stderr", ""))
        if broken:
            # The exit status is the sandbox's, not the code's: never report it as the code's.
            result.pop("exit_code")
            result["error"] = (f"cannot run {what}: {broken}; the exit status says nothing "
                               "about the code, which may not have run at all")
            result["error_type"] = _sandbox.SANDBOX_UNAVAILABLE
            tool.report_error(broken)
            return result
        if outcome.timed_out:
            result["error"] = (
                f"{what} did not finish within {counted(timeout, 'second')} and was killed with every "
                "process it started; the output so far is kept"
            )
            result["error_type"] = "timeout"
            tool.report_error(f"timed out after {timeout:g} s")
        elif outcome.cancelled:
            token = tool.cancel_token
            why = (token.reason if token is not None else None) or "the call was cancelled"
            result["error"] = (f"{what} was stopped ({why}) and killed with every process it "
                               "started; the output so far is kept")
            result["error_type"] = CANCELLED
            tool.report_error("cancelled")
        elif outcome.interrupted:
            result["error"] = f"{what} was interrupted from the keyboard and killed"
            result["error_type"] = "interrupted"
            tool.report_error("interrupted")
        elif outcome.exit_code == 0:
            result["success"] = True
            tool.report_result(f"exit code 0 in {seconds}")
        else:
            code = outcome.exit_code if outcome.exit_code is not None else -1
            if code < 0:
                result["signal"] = _signal_name(code)
                result["error"] = f"{what} was killed by {result['signal']}"
            elif code > 128 and launch.mechanism != PROCESS_GROUP and code - 128 < 65:
                # a sandboxed command's death by signal N comes back as 128 + N, as in a shell
                result["signal"] = _signal_name(128 - code)
                result["error"] = (f"{what} was killed by {result['signal']} "
                                   f"(exit status {code})")
            else:
                result["error"] = f"{what} exited with code {code}"
            result["error_type"] = "nonzero_exit"
            tool.report_error(f"{result['error']} ({seconds})")
        note = _sandbox.refusal_note(policy, launch.mechanism, result.get("stderr", ""),
                                     result.get("signal"), mask=mask)
        if note is not None:
            result["sandbox"] = note
        return result


def path_error(exc: WorkspaceError) -> str:
    """The error type of a path the workspace refused: ``denied_by_policy`` when the
    policy refused it, else ``outside_workspace`` (as the run tools have always said)."""
    from janito_core.results import DENIED_BY_POLICY

    return DENIED_BY_POLICY if exc.error_type == DENIED_BY_POLICY else "outside_workspace"


def _runnable(program: str) -> tuple[str, str] | None:
    """Why ``program`` cannot be executed ((message, error type)), or None.

    Checked here because inside a sandbox a missing program would only show as the
    wrapper's nonzero exit.
    """
    import shutil

    if shutil.which(program) is not None:
        return None
    if os.sep in program and os.path.exists(program):
        if os.path.isdir(program):
            return f"{program} is a folder", "permission_denied"
        return f"{program} is not executable", "permission_denied"
    return f"{program} was not found", "not_found"


def _signal_name(code: int) -> str:
    import signal  # only when a run ends by a signal: not a cost of every start

    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
