"""The conformance check every toolset runs in one line: ``check_toolset("NAME")``.

It looks for what breaks when a model calls a tool, and names the tool, the input that
showed it and the fix. Statically, for every tool:

- the ``@tool`` mark and its permission string; a first docstring line (the description
  the model reads); a fully typed ``run()`` (or function); every parameter documented,
  and nothing documented that is not a parameter; valid JSON Schemas (ordinary and strict);
- the time a person waits while the toolset is imported (wall time, in a fresh interpreter,
  janito-core already imported), so an import that blocks on the network or sleeps is
  caught as surely as one that computes. The time the interpreter stood ready while other
  processes had the CPU is left out where Linux tells it: that is the machine's load;
- a tool name that another installed toolset uses too (an error when that toolset is one
  janito loads by default: there the tool would never load), and a parameter named like
  an option of ``janito run`` or of the ``main()`` harness, which take it for themselves;
- a ``main()`` without the ``if __name__ == "__main__":`` guard that runs it.

Dynamically, each tool that loads is called through dispatch, exactly as a model's call
is, in a sandbox (``_sandbox``): a temporary workspace with sentinel files outside it,
seeded with whatever ``setup(workspace)`` wrote there.
Arguments are generated from the tool's own schema with hypothesis, so they pass
validation and reach ``run()``; the check counts the calls that did and asks that at
least ``max_examples`` of them do. What ``run()`` itself returned or raised is looked at
before dispatch tidies it into a result. A call is flagged (with its input) when it:

- raises (``tool_exception``); returns something other than a JSON object
  (``invalid_result``: a list, bytes, NaN, a set...); returns a dict without ``success``
  (``no_success``); fails without ``error`` or ``error_type``
  (``failure_without_error``);
- writes to standard output, which corrupts stdio MCP serving (``stdout``);
- answers something its declared result type (a TypedDict or a pydantic model as
  ``run()``'s return annotation) does not describe (``result_schema``: see
  ``_results``);
- takes longer than ``call_budget`` seconds (``slow``);
- returns the content of a sentinel file outside the workspace or lists the folder
  outside it (``reads_outside``); creates, changes or deletes anything outside the
  workspace (``changes_outside``); changes the workspace although it was declared
  without ``w`` (``changes_workspace``).

Besides the generated calls, every string parameter is tried once with each path of the
sandbox: the workspace's files, and names outside it that exist (sentinels) or do not
(``../``, absolute paths, a link out), so a tool that creates a file outside is caught; a
few wrong calls check that dispatch refuses them. Arguments valid against a schema janito
made that dispatch still refuses are janito's inconsistency, not the author's: a note.

Tools that need ``x`` get only wrong calls unless ``run_execute_tools`` is true, so random
text never runs as code. A tool that does not load here (``should_load``, privileges) is
reported as not exercised, with the reason; ``env`` and ``setup`` give the environment
that makes it load. A tool whose annotations cannot become a schema is a finding. A
module without a ``main()`` harness is a note, not a failure.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .._marker import hookimpl

if TYPE_CHECKING:
    from ..dispatch import ToolCall
    from ..registry import Registry, ToolRecord
    from ._sandbox import Sandbox, StdoutTrap

DEFAULT_IMPORT_BUDGET = 1.0
DEFAULT_CALL_BUDGET = 5.0
WRONG_CALLS = 5
RUNNER_NAME = "janito.conformance"


@dataclass
class Finding:
    """One problem (or, among ``Report.notes``, one remark) about a tool or the toolset."""

    tool: str | None
    check: str
    problem: str
    fix: str
    input: str | None = None
    count: int = 1

    def __str__(self) -> str:
        who = self.tool or "toolset"
        text = f"{who}: [{self.check}] {self.problem}"
        if self.count > 1:
            text += f" ({self.count} calls)"
        if self.input is not None:
            text += f"\n      input: {self.input}"
        return f"{text}\n      fix: {self.fix}"


@dataclass
class Report:
    """What the check found. ``ok`` when there are no findings; notes never fail it."""

    toolset: str
    tools: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)
    #: Tools that loaded but were not called, or did not load, with the reason.
    not_exercised: dict[str, str] = field(default_factory=dict)
    #: Per tool, how many generated calls reached ``run()``.
    reached: dict[str, int] = field(default_factory=dict)
    import_seconds: float | None = None
    #: The time the import stood queued for a busy CPU, left out of ``import_seconds``.
    import_queued: float = 0.0
    calls_made: int = 0
    max_examples: int = 0
    seed: int | None = None

    @property
    def ok(self) -> bool:
        return not self.findings

    def findings_of(self, tool: str | None) -> list[Finding]:
        return [f for f in self.findings if f.tool == tool]

    def checks_of(self, tool: str | None) -> set[str]:
        return {f.check for f in self.findings if f.tool == tool}

    def __str__(self) -> str:
        reached = sum(self.reached.values())
        head = (f"toolset {self.toolset!r}: {len(self.tools)} tools, {self.calls_made} calls "
                f"({reached} generated ones reached run()), import "
                f"{self.import_seconds or 0:.3f} s"
                + (f" ({self.import_queued:.3f} s queued left out)" if self.import_queued else "")
                + f", seed {self.seed}")
        lines = [head + (": conforms" if self.ok else f": {len(self.findings)} problem(s)")]
        lines.extend(f"  - {finding}" for finding in self.findings)
        if self.not_exercised:
            lines.append("  not exercised:")
            lines.extend(f"    {name}: {why}" for name, why in self.not_exercised.items())
            if any(why.startswith("skipped") for why in self.not_exercised.values()):
                lines.append("    (env= and setup= of check_toolset give a skipped tool what it "
                             "needs to load)")
        if self.notes:
            lines.append("  notes:")
            for note in self.notes:
                lines.append(f"    {note.tool or 'toolset'}: {note.problem}")
                if note.input is not None:
                    lines.append(f"      input: {note.input}")
        return "\n".join(lines)


class ConformanceError(AssertionError):
    def __init__(self, report: Report) -> None:
        self.report = report
        super().__init__(str(report))


def check_toolset(
    name: str,
    *,
    max_examples: int = 25,
    import_budget: float = DEFAULT_IMPORT_BUDGET,
    call_budget: float = DEFAULT_CALL_BUDGET,
    privileges: str = "rwx",
    run_execute_tools: bool = False,
    env: Mapping[str, str | None] | None = None,
    setup: Callable[[Path], Any] | None = None,
    seed: int | None = None,
) -> Report:
    """Check toolset ``name``; raise ConformanceError listing every problem, else return
    the report (which lists the tools not exercised and the notes).

    ``max_examples``: generated calls that must reach ``run()``, per tool.
    ``call_budget``: seconds one call may take; a call is interrupted at about twice that.
    ``privileges``: what the check's registry grants; tools needing more are not exercised.
    ``run_execute_tools``: also run generated calls of tools that need ``x``.
    ``env``: environment variables set for the check (None unsets one).
    ``setup``: called with the check's workspace folder (a ``pathlib.Path``) before the
    toolset loads. What it writes there is part of the workspace every call starts from,
    and its files' paths are among the strings the calls are made with, so calls reach the
    paths of a tool that needs real data; the environment it sets holds for the check, and
    a context manager it returns is entered for the check and left after it (a test
    service, say). Together with ``env``, the environment in which tools skipped by
    ``should_load`` can load.
    ``seed``: the hypothesis seed, to repeat a run (the report shows the one used).
    """
    report = check(name, max_examples=max_examples, import_budget=import_budget,
                   call_budget=call_budget, privileges=privileges,
                   run_execute_tools=run_execute_tools, env=env, setup=setup, seed=seed)
    if not report.ok:
        raise ConformanceError(report)
    return report


def check(
    name: str,
    *,
    max_examples: int = 25,
    import_budget: float = DEFAULT_IMPORT_BUDGET,
    call_budget: float = DEFAULT_CALL_BUDGET,
    privileges: str = "rwx",
    run_execute_tools: bool = False,
    env: Mapping[str, str | None] | None = None,
    setup: Callable[[Path], Any] | None = None,
    seed: int | None = None,
) -> Report:
    """Like check_toolset, but return the report whatever it found."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    report = Report(name, max_examples=max_examples, seed=seed)
    from ._sandbox import Sandbox, StdoutTrap

    with ExitStack() as closing:
        sandbox = Sandbox()
        closing.callback(sandbox.close)
        closing.enter_context(_environment(env))
        if setup is not None:
            made = setup(Path(sandbox.workspace))
            if hasattr(made, "__enter__") and hasattr(made, "__exit__"):
                closing.enter_context(made)
            sandbox.seal()  # the workspace as setup left it is where every call starts
        trap = StdoutTrap()
        closing.callback(trap.close)
        _check_in(report, sandbox, trap, closing, import_budget=import_budget,
                  call_budget=call_budget, privileges=privileges,
                  run_execute_tools=run_execute_tools)
    return report


@contextmanager
def _environment(env: Mapping[str, str | None] | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in (env or {})}
    try:
        for key, value in (env or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _check_in(report: Report, sandbox: Sandbox, trap: StdoutTrap, closing: ExitStack, *,
              import_budget: float, call_budget: float, privileges: str,
              run_execute_tools: bool) -> None:
    from ..privileges import Privileges, validate_permissions
    from ..registry import Registry
    from ..workspace import Workspace

    name = report.toolset
    registry = Registry(privileges=Privileges.from_string(privileges),
                        workspace=Workspace(sandbox.workspace), autoload=(), allowed=None)
    with trap.catch():  # a toolset that prints while it loads is flagged, not leaked
        registry.add_toolset(name)
    if trap.text:
        report.findings.append(Finding(
            None, "stdout", f"importing the toolset wrote to standard output: {trap.text[:80]!r}",
            "send messages to stderr or to a logger; stdout carries MCP messages"))
    for error in registry.load_errors:
        if error.toolset == name:
            report.findings.append(Finding(None, "load", error.reason,
                                           "make every public module of the package import"))
    spec = registry.toolsets()[name]
    survey = _run_survey(name)
    if survey.wall > import_budget:  # once more: a moment of load is not the toolset's doing
        again = _run_survey(name, others=False)
        # 0: it could not be measured; an import that failed this time measures nothing
        if 0 < again.wall < survey.wall and again.errors <= survey.errors:
            survey = again._replace(others=survey.others)
    wall, cpu = survey.wall, survey.cpu
    report.import_seconds, report.import_queued = wall, survey.queued
    if wall > import_budget:
        waited = wall - cpu
        report.findings.append(Finding(
            None, "import time",
            f"importing {spec.module} and its modules took {wall:.2f} s "
            f"(budget {import_budget:.2f} s), {cpu:.2f} s of it computing"
            + (f" and {waited:.2f} s waiting (a sleep, the network, a lock?)"
               if waited > cpu else "")
            + (f"; {survey.queued:.2f} s more spent waiting for a busy CPU is not counted"
               if survey.queued >= 0.01 else ""),
            "do nothing slow when the module is imported: import heavy dependencies, connect "
            "and read inside run() (or should_load(), which should stay quick too)",
        ))
    records = [r for r in registry.records() if r.toolset == name]
    _check_clashes(records, survey.others, report)
    if not records and not report.findings:
        report.findings.append(Finding(None, "tools", "the toolset defines no tool",
                                       "decorate tool classes or functions with @tool(...)"))
    caller = _Caller(registry, sandbox, trap, call_budget, report)
    closing.callback(caller.close)
    options = _taken_options()
    for record in records:
        report.tools.append(record.name)
        try:
            validate_permissions(getattr(record.cls, "_tool_permissions", None))  # type: ignore[arg-type]
        except Exception as exc:
            report.findings.append(Finding(record.name, "permissions", str(exc),
                                           'use @tool(permissions="r"), "w", "x" or a mix'))
        _check_static(record.name, record.cls, report)
        _check_options(record, report, *options)
        _check_main(record.name, record.cls, report)
        if record.status == "error":  # run()'s annotations cannot become a schema
            if not report.checks_of(record.name) & {"types", "schema"}:
                report.findings.append(Finding(
                    record.name, "types", record.reason or "the annotations are broken",
                    "make every annotation of run() resolve (import the names it uses at "
                    "module level, not only under TYPE_CHECKING) and use the types of "
                    "docs/authoring-toolsets.md, section 5"))
            continue
        if record.status == "skipped" and record.failed:
            report.findings.append(Finding(record.name, "load", record.reason or "skipped",
                                           "make should_load() return a bool without raising"))
            continue
        if record.status == "skipped":
            report.not_exercised[record.name] = f"skipped here: {record.reason}"
            continue
        if record.status != "loaded":
            report.not_exercised[record.name] = f"denied: {record.reason}"
            continue
        may_run = run_execute_tools or "x" not in record.permissions
        caller.exercise(record, report.max_examples, may_run, report.seed or 0)
        if not may_run:
            report.not_exercised[record.name] = (
                "needs x: only wrong calls were made, so that generated text never runs as "
                "code (run_execute_tools=True runs the generated calls)")


# -- static checks ----------------------------------------------------------------------


def _check_static(name: str, cls: type, report: Report) -> None:
    import inspect
    import typing

    from ..schema import AnnotationError, first_line, tool_schema

    if not first_line(cls.__doc__):
        report.findings.append(Finding(name, "docstring", "the tool has no docstring",
                                       "start the docstring with a one-line description for the model"))
    run = cls.run  # type: ignore[attr-defined]
    if isinstance(cls.__dict__.get("input_schema"), dict):
        problem = _schema_problem(tool_schema(cls).parameters)
        if problem:
            report.findings.append(Finding(name, "schema", problem, "fix the declared input_schema"))
        return
    try:
        hints = typing.get_type_hints(run, include_extras=True)
    except Exception as exc:
        report.findings.append(Finding(name, "types", f"annotations cannot be resolved: {exc}",
                                       "import every name used in run()'s annotations"))
        return
    signature = inspect.signature(run)
    for index, param in enumerate(signature.parameters.values()):
        if index == 0:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            report.findings.append(Finding(name, "types", f"run() takes *{param.name}",
                                           "list every parameter explicitly"))
        elif param.name not in hints:
            report.findings.append(Finding(name, "types", f"parameter {param.name!r} has no type",
                                           f"annotate {param.name}"))
    if "return" not in hints:
        report.findings.append(Finding(name, "types", "run() has no return annotation",
                                       "annotate run() -> dict[str, Any]"))
    try:
        schema = tool_schema(cls)
    except AnnotationError as exc:
        report.findings.append(Finding(name, "schema", str(exc), "use supported parameter types"))
        return
    for diagnostic in schema.diagnostics:
        if "not documented" in diagnostic or "does not take" in diagnostic or "no docstring" in diagnostic:
            report.findings.append(Finding(name, "docs", diagnostic,
                                           "document every parameter under Args:, and only those"))
    for label, parameters in (("schema", schema.parameters), ("strict schema", schema.strict_parameters)):
        if parameters is None:
            continue
        problem = _schema_problem(parameters)
        if problem:
            report.findings.append(Finding(name, label, problem, "report this schema to janito"))


def _check_main(name: str, cls: type, report: Report) -> None:
    """A note when ``python -m`` cannot run the tool's module: no ``main()`` (with the
    harness command that runs it instead), or a ``main()`` nothing calls."""
    from ..discovery import tool_classes

    module = sys.modules.get(cls.__module__)
    if module is None:
        return
    if not callable(getattr(module, "main", None)):
        target = cls.__module__
        if len(tool_classes(module)) > 1:  # the harness must be told which tool
            target += f":{name}"
        report.notes.append(Finding(
            name, "main()",
            f"module {cls.__module__} has no main() harness; `python -m janito_core.harness "
            f"{target}` runs the tool from the shell without one",
            "optional: add main() calling janito_core.harness.run_main(YourTool, argv)",
        ))
    elif not _has_main_guard(module):
        report.notes.append(Finding(
            name, "main()",
            f"module {cls.__module__} has main() but no `if __name__ == \"__main__\":` that "
            f"calls it, so `python -m {cls.__module__}` imports the module and does nothing",
            'end the module with: if __name__ == "__main__": main()',
        ))


def _has_main_guard(module: Any) -> bool:
    """Whether the module's source says ``if __name__ == "__main__":`` at its top level
    (True when there is no source to read: nothing to say then)."""
    import ast

    try:
        with open(module.__file__, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, TypeError, ValueError, SyntaxError):
        return True
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            sides = [node.test.left, *node.test.comparators]
            names = {getattr(side, "id", None) for side in sides}
            values = {getattr(side, "value", None) for side in sides}
            if "__name__" in names and "__main__" in values:
                return True
    return False


def _taken_options() -> tuple[dict[str, str], dict[str, str]]:
    """The options, with their help, of ``janito run`` and of the ``main()`` harness, read
    from their real parsers."""
    import argparse

    from ..cli import build_parser
    from ..harness import own_options

    parser = build_parser(with_plugins=False, only="run")
    commands = next(action for action in parser._actions
                    if isinstance(action, argparse._SubParsersAction))
    run = commands.choices["run"]
    run_options = {option: str(action.help or "") for action in run._actions
                   for option in action.option_strings}
    return run_options, own_options()


def _check_options(record: ToolRecord, report: Report, run_options: dict[str, str],
                   harness: dict[str, str]) -> None:
    """A parameter named like an option of ``janito run`` (all parameters are options
    there) or of the ``main()`` harness (its optional parameters are): that command keeps
    the option for itself, so the value would never reach the tool."""
    from ..schema import tool_schema

    try:
        schema = tool_schema(record.cls)
    except Exception:  # reported by the static checks
        return
    required = set(schema.parameters.get("required", []))
    for param in schema.parameters.get("properties", {}):
        option = "--" + param.replace("_", "-")
        taken = []
        if option in run_options:
            taken.append(f"`janito run {record.name} {option}` sets janito's own {option} "
                         f"({run_options[option]})")
        if option in harness and param not in required:
            taken.append(f"`python -m {record.cls.__module__} {option}` is the harness's "
                         f"{option} ({harness[option]})")
        if taken:
            report.findings.append(Finding(
                record.name, "option",
                f"parameter {param!r} cannot be given as {option}: " + "; ".join(taken),
                f"rename the parameter (janito's options: {', '.join(sorted(run_options))})"))


def _check_clashes(records: list[ToolRecord], others: list[dict[str, Any]],
                   report: Report) -> None:
    """A tool name another installed toolset uses too: where both are loaded, the first
    keeps the name. janito loads its default toolsets first, so a clash with one of them
    means the tool never loads beside it: an error; with another, a note."""
    for record in records:
        for other in others:
            if record.name not in other.get("tools", ()):
                continue
            who = f"toolset {other['toolset']!r} ({other['distribution']})"
            if other.get("autoload"):
                report.findings.append(Finding(
                    record.name, "clash",
                    f"{who}, which janito loads by default, has a tool called {record.name} "
                    f"too: wherever it is installed, `janito run -t {record.toolset} "
                    f"{record.name}` runs that one and yours is not loaded",
                    "give the tool another name (the class, or @tool(name=...))"))
            else:
                report.notes.append(Finding(
                    record.name, "clash",
                    f"{who} has a tool called {record.name} too: the two toolsets cannot be "
                    "loaded together (the first loaded keeps the name)",
                    "give the tool another name (the class, or @tool(name=...))"))


def _schema_problem(parameters: dict[str, Any]) -> str | None:
    try:
        import jsonschema
    except ImportError:
        if parameters.get("type") != "object" or not isinstance(parameters.get("properties"), dict):
            return "the parameters schema is not an object schema"
        return None
    try:
        jsonschema.Draft202012Validator.check_schema(parameters)
    except jsonschema.SchemaError as exc:
        return f"invalid JSON Schema: {exc.message}"
    return None


class _Survey(NamedTuple):
    wall: float  #: what the import took, the time queued for a busy CPU left out
    cpu: float
    queued: float
    errors: int  #: modules of the toolset that failed to import
    others: list[dict[str, Any]]


def _run_survey(toolset: str, *, others: bool = True) -> _Survey:
    """``_survey.py`` in a fresh interpreter: the toolset's import time and, with
    ``others``, the tool names of every other installed toolset."""
    import tempfile

    from . import _survey as program

    with tempfile.TemporaryDirectory(prefix="janito-survey-out-") as folder:
        out = os.path.join(folder, "survey.jsonl")
        # the child sees what this process sees, a folder put on sys.path by a test included
        path = os.pathsep.join(p for p in sys.path if p)
        code = "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')"
        try:
            subprocess.run([sys.executable, "-c", code, program.__file__, out, toolset,
                            *(["--others"] if others else [])],
                           capture_output=True, timeout=120, cwd=folder,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path})
        except (OSError, subprocess.SubprocessError):
            pass  # what it wrote before it stopped still counts
        try:
            with open(out, encoding="utf-8") as handle:
                lines = [json.loads(line) for line in handle if line.endswith("\n")]
        except (OSError, ValueError):
            lines = []
    timing = next((line for line in lines if "wall" in line), {"wall": 0.0, "cpu": 0.0})
    queued = min(float(timing.get("queued", 0.0)), float(timing["wall"]))
    return _Survey(float(timing["wall"]) - queued, float(timing["cpu"]), queued,
                   int(timing.get("errors", 0)), [line for line in lines if "toolset" in line])


# -- calls ------------------------------------------------------------------------------


@dataclass
class _Observation:
    """What one call did, seen from inside dispatch and from outside it."""

    tool: str
    payload: str
    valid: bool
    reached: bool = False
    returned: bool = False
    raw: Any = None
    exception: BaseException | None = None
    seconds: float = 0.0
    interrupted: bool = False
    refused: bool = False
    escaped: BaseException | None = None
    result: Any = None
    stdout: str = ""


class _Recorder:
    """Stands for the tool class in the one call being observed: instantiates the tool and
    calls its ``run()``, noting what came back before dispatch sees it."""

    def __init__(self, cls: type, observation: _Observation) -> None:
        self.cls = cls
        self.observation = observation
        self.instance: Any = None

    def __call__(self, workspace: Any) -> _Recorder:
        self.observation.reached = True
        try:
            self.instance = self.cls(workspace)
        except BaseException as exc:
            self.observation.exception = exc
            raise
        return self

    def run(self, **kwargs: Any) -> Any:
        observation = self.observation
        started = time.perf_counter()
        try:
            raw = self.instance.run(**kwargs)
        except BaseException as exc:
            observation.exception = exc
            raise
        finally:
            observation.seconds = time.perf_counter() - started
        if type(raw) is not dict and hasattr(raw, "__await__"):
            return self._awaited(raw, started)  # an async tool: what it returns is awaited
        observation.returned = True
        observation.raw = raw
        return raw

    async def _awaited(self, awaitable: Any, started: float) -> Any:
        observation = self.observation
        try:
            raw = await awaitable
        except BaseException as exc:
            observation.exception = exc
            raise
        finally:
            observation.seconds = time.perf_counter() - started
        observation.returned = True
        observation.raw = raw
        return raw


class _ShadowRecord:
    """A ToolRecord whose class is the recorder, for dispatch's own ToolCall.run()."""

    def __init__(self, record: ToolRecord, recorder: _Recorder) -> None:
        self.name = record.name
        self.permissions = record.permissions
        self.cls = recorder


class _Runner:
    """The kit's ``janito_tool_call`` implementation: the last before janito's own runner,
    so a toolset's hooks still see every call. It runs the observed call through the
    recorder and may refuse to run generated code of an ``x`` tool."""

    def __init__(self) -> None:
        self.observation: _Observation | None = None
        self.may_run = True

    @hookimpl(trylast=True)
    def janito_tool_call(self, call: ToolCall) -> dict[str, Any] | None:
        from ..dispatch import ToolCall

        observation = self.observation
        if observation is None or observation.tool != call.name or observation.reached:
            return call.run()  # not the call under observation (a tool calling another)
        if not self.may_run:
            observation.refused = True
            return call.refuse("the conformance check does not run generated calls of x tools")
        shadow = _ShadowRecord(call.record, _Recorder(call.record.cls, observation))
        return ToolCall(shadow, call.arguments, call.registry,  # type: ignore[arg-type]
                        call.raw_arguments, call.id).run()


# CancelledError: how an async tool stops when the call budget cancels its token.
_ACCEPTED_EXCEPTIONS = ("WorkspaceError", "CallCancelled", "CancelledError")


class _Caller:
    """Makes the calls of one check and turns what they did into findings."""

    def __init__(self, registry: Registry, sandbox: Sandbox, trap: StdoutTrap,
                 budget: float, report: Report) -> None:
        self.registry = registry
        self.sandbox = sandbox
        self.trap = trap
        self.budget = budget
        self.report = report
        self.runner = _Runner()
        error = registry.plugins.register(self.runner, RUNNER_NAME, "janito-core")
        if error is not None:  # pragma: no cover - the runner implements a known hook
            raise RuntimeError(error.reason)
        from ..plugins import STDERR_PLUGIN

        # hundreds of generated calls would fill stderr with their progress reports
        registry.plugins.manager.unregister(name=STDERR_PLUGIN)
        from ._sandbox import Watchdog, content

        self._found: dict[tuple[str, str], Finding] = {}
        self.outside = sandbox.outside_state()
        self.inside = sandbox.workspace_state()
        self.seeded = content(self.inside)
        self.watchdog = Watchdog()
        from ._results import ResultSchemas

        self.result_schemas = ResultSchemas()

    def close(self) -> None:
        self.watchdog.close()

    # -- one tool ---------------------------------------------------------------------

    def exercise(self, record: ToolRecord, max_examples: int, may_run: bool, seed: int) -> None:
        from hypothesis import HealthCheck, Phase, given, reject, settings
        from hypothesis import seed as use_seed
        from hypothesis import strategies as st
        from hypothesis.errors import Unsatisfiable

        from ..schema import tool_schema
        from ._generate import arguments, with_each_path, wrong_arguments

        schema = tool_schema(record.cls)
        parameters = schema.parameters
        self.runner.may_run = may_run
        self._fresh_workspace()
        stopped = False
        reached = 0
        common = settings(deadline=None, database=None, phases=[Phase.generate],
                          suppress_health_check=list(HealthCheck), report_multiple_bugs=False)

        if may_run:
            for call in with_each_path(parameters, self.sandbox.paths, schema.groups):
                self._fresh_workspace()
                if self.call(record, call, valid=True).interrupted:
                    stopped = True
                    break

            self._fresh_workspace()

            @settings(common, max_examples=max_examples)
            @given(arguments(parameters, self.sandbox.paths, schema.groups), st.integers())
            def generated(args: dict[str, Any], nonce: int) -> None:
                # the nonce keeps hypothesis from running out of distinct inputs for a tool
                # with few or no parameters: every one of the calls asked for is made
                nonlocal stopped, reached
                if stopped:
                    return
                observation = self.call(record, args, valid=True)
                stopped = observation.interrupted
                if observation.reached:
                    reached += 1
                elif not stopped:
                    reject()

            try:
                use_seed(seed)(generated)()
            except Unsatisfiable:
                pass
            self.report.reached[record.name] = reached
            if reached < max_examples and not stopped:
                problem = (f"only {reached} generated calls reached run() (asked for "
                           f"{max_examples}); the others were refused by dispatch")
                if _declares_schema(record.cls):
                    self._add(record.name, "coverage", problem,
                              "make the declared input_schema describe exactly what run() "
                              "accepts", None)
                else:
                    self._note(record.name, "coverage", problem + ", although the schema "
                               "janito made from run()'s annotations allowed them",
                               _JANITO_FAULT, None)

        @settings(common, max_examples=WRONG_CALLS)
        @given(wrong_arguments(parameters))
        def wrong(args: Any) -> None:
            if not stopped:
                self.call(record, args, valid=False)

        use_seed(seed)(wrong)()

    def _fresh_workspace(self) -> None:
        from ._sandbox import content

        if content(self.inside) != self.seeded:  # resetting costs milliseconds a call
            self.sandbox.reset()
            self.inside = self.sandbox.workspace_state()

    # -- one call ---------------------------------------------------------------------

    def call(self, record: ToolRecord, arguments: Any, *, valid: bool) -> _Observation:
        from ..cancellation import CancelToken
        from ..dispatch import call_tool
        from ._sandbox import OverBudget, hard_limit

        payload = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        observation = _Observation(record.name, payload, valid)
        self.report.calls_made += 1
        token = CancelToken()
        self.runner.observation = observation
        cwd = os.getcwd()
        self.watchdog.arm(self.budget, lambda: token.cancel("the conformance check's call budget ran out"))
        started = time.perf_counter()
        try:
            # a tool that wrongly builds paths from the current directory meets the sandbox
            os.chdir(self.sandbox.workspace)
            with self.trap.catch(), hard_limit(self.budget * 2 + 0.5):
                observation.result = call_tool(record.name, payload, registry=self.registry,
                                               cancel_token=token)
        except OverBudget:
            observation.interrupted = True
        except KeyboardInterrupt as exc:
            if not observation.reached or observation.exception is not exc:
                raise  # the person at the keyboard, not the tool
            observation.escaped = exc
        except BaseException as exc:
            observation.escaped = exc
        finally:
            self.watchdog.disarm()
            self.runner.observation = None
            os.chdir(cwd)
        if observation.interrupted or not observation.reached:
            observation.seconds = max(observation.seconds, time.perf_counter() - started)
        observation.stdout = self.trap.text
        self._judge(record, observation)
        return observation

    def _judge(self, record: ToolRecord, seen: _Observation) -> None:
        from ._sandbox import differences, where_raised

        name = record.name
        shown = _shorten(seen.payload)
        if seen.stdout:
            self._add(name, "stdout", f"wrote to standard output: {seen.stdout[:80]!r}",
                      "report with reporter/self.report_*(), log to stderr; stdout carries MCP "
                      "messages", shown)
        if seen.interrupted or (seen.reached and seen.seconds > self.budget):
            what = ("was still running after" if seen.interrupted else "took")
            self._add(name, "slow",
                      f"{what} {seen.seconds:.2f} s (budget {self.budget:g} s)"
                      + ("; it was interrupted and not called again" if seen.interrupted else ""),
                      "bound the work, honour cancel_token, or raise call_budget if this is "
                      "expected", shown)
        if seen.escaped is not None:
            self._add(name, "tool_exception",
                      f"{type(seen.escaped).__name__} escaped dispatch: {seen.escaped}",
                      "do not raise BaseException subclasses from a tool", shown)
        if seen.reached and seen.exception is not None and not seen.interrupted:
            kind = type(seen.exception).__name__
            if kind not in _ACCEPTED_EXCEPTIONS:
                spot = where_raised(seen.exception.__traceback__, record.cls.__module__)
                self._add(name, "tool_exception",
                          f"raised {kind}: {_text(seen.exception)}" + (f" at {spot}" if spot else ""),
                          "catch the failure in the tool and return success false with error and "
                          "error_type", shown)
        if seen.returned:
            for check, problem, fix in _result_problems(seen.raw):
                self._add(name, check, problem, fix, shown)
            leaks = self.sandbox.leaks(_as_text(seen.raw) + "\n" + seen.stdout)
            if leaks:
                self._add(name, "reads_outside", f"its result holds {' and '.join(leaks)}",
                          "resolve every path through the workspace (self.workspace, "
                          "workspace: Workspace) and never build one from the current directory",
                          shown)
        if not seen.reached and seen.valid and not seen.interrupted and isinstance(seen.result, dict):
            if seen.result.get("error_type") in ("invalid_arguments", "invalid_json"):
                said = seen.result.get("details") or seen.result.get("error")
                if _declares_schema(record.cls):
                    self._add(name, "rejected_valid_input",
                              f"dispatch refused arguments valid against the tool's declared "
                              f"input_schema: {said}",
                              "make the declared input_schema describe exactly what run() "
                              "accepts", shown)
                else:  # janito wrote the schema and janito refused what it allows
                    self._note(name, "rejected_valid_input",
                               "dispatch refused arguments valid against the schema janito made "
                               f"from run()'s annotations: {said}", _JANITO_FAULT, shown)
        if seen.escaped is None and not seen.interrupted:
            wrong = _dispatch_problem(seen.result)
            if wrong:
                self._add(name, "dispatch", wrong, "report this to janito", shown)
            from ..schema import tool_schema

            off = self.result_schemas.problem(tool_schema(record.cls).output_schema, seen.result)
            if off:
                self._add(name, "result_schema", off, "make run()'s result type describe every "
                          "result it returns (NotRequired for a key that is not always there)",
                          shown)
        outside = self.sandbox.outside_state()
        changed = differences(self.outside, outside)
        if changed:
            self._add(name, "changes_outside",
                      f"changed things outside the workspace: {'; '.join(changed)}",
                      "create, change and delete only through the workspace (write_file, "
                      "mkdir, remove, rename)", shown)
            self.outside = outside
        inside = self.sandbox.workspace_state()
        if "w" not in record.permissions and "x" not in record.permissions:
            changed = differences(self.inside, inside)
            if changed:
                self._add(name, "changes_workspace",
                          f"is declared {record.permissions or 'without permissions'!r} but "
                          f"changed the workspace: {'; '.join(changed)}",
                          'declare @tool(permissions="w") (with any other letters it needs), or '
                          "stop writing", shown)
        self.inside = inside

    def _add(self, tool: str, check: str, problem: str, fix: str, shown: str | None,
             *, note: bool = False) -> None:
        key = (tool, check)
        found = self._found.get(key)
        if found is None:
            finding = Finding(tool, check, problem, fix, shown)
            self._found[key] = finding
            (self.report.notes if note else self.report.findings).append(finding)
            return
        found.count += 1
        if shown is not None and (found.input is None or len(shown) < len(found.input)):
            found.problem, found.input = problem, shown  # the shortest input that shows it


    def _note(self, tool: str, check: str, problem: str, fix: str, shown: str | None) -> None:
        self._add(tool, check, problem, fix, shown, note=True)


_JANITO_FAULT = ("nothing to change in the tool: janito's schema and its dispatch disagree "
                 "here, which is janito's to mend; report it with this input")


def _declares_schema(cls: type) -> bool:
    """Whether the tool wrote its own ``input_schema`` (else janito made it from ``run()``)."""
    return isinstance(cls.__dict__.get("input_schema"), dict)


def _result_problems(raw: Any) -> list[tuple[str, str, str]]:
    from .._shape import _inspect, _model_base, models_as_json

    base = _model_base()
    if base is not None:  # pydantic models go out as JSON; a model result gets success
        try:
            dumped = models_as_json(raw)
        except Exception as exc:
            return [("invalid_result", f"run() returned a model that cannot be written as JSON: {_text(exc)}",
                     "give the model only fields pydantic can write as JSON")]
        if isinstance(raw, base) and isinstance(dumped, dict):
            dumped = {"success": True, **dumped}
        raw = dumped
    if not isinstance(raw, dict):
        return [("invalid_result", f"run() returned {type(raw).__name__} {_shorten(repr(raw), 60)}, "
                 "not a dict", "return a dict with success, and data under named keys")]
    problems: list[tuple[str, str, str]] = []
    problem, _ = _inspect(raw, "result", 0, [])
    if problem is not None:
        problems.append(("invalid_result", f"run() returned a result that is not JSON: {problem}",
                         "return only str, int, finite float, bool, None, list and dict with "
                         "str keys (decode bytes, list a set)"))
    if "success" not in raw:
        problems.append(("no_success", "run() returned a dict without success",
                         'add "success": True or False to every result'))
    elif not isinstance(raw["success"], bool):
        problems.append(("invalid_result", f"run() returned success={raw['success']!r}, not a boolean",
                         "make success True or False"))
    elif raw["success"] is False:
        missing = [k for k in ("error", "error_type") if not isinstance(raw.get(k), str) or not raw[k]]
        if missing:
            problems.append(("failure_without_error",
                             f"a failed result has no {' or '.join(missing)}",
                             "give every failure an error sentence and an error_type"))
    return problems


def _dispatch_problem(result: Any) -> str | None:
    if not isinstance(result, dict) or not isinstance(result.get("success"), bool):
        return f"call_tool returned {_shorten(repr(result), 80)}"
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"call_tool returned a result that is not JSON ({exc})"
    return None


def _as_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _text(exc: BaseException) -> str:
    return _shorten(str(exc) or "(no message)", 120)


def _shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def toolset_path_hint(name: str) -> Path | None:
    """Where toolset ``name``'s package lives, for messages."""
    from ..registry import Registry

    spec = Registry(autoload=()).toolsets().get(name)
    return Path(spec.location) if spec else None
