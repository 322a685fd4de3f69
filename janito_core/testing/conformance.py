"""The conformance check every toolset runs in one line: ``check_toolset("NAME")``.

For every tool of the toolset it verifies what a model and a person rely on, and on
failure says which tool and what to fix. The checks:

1. the class is decorated with ``@tool`` and a valid permission string;
2. the class docstring has a first line (the description the model sees);
3. ``run()`` is fully typed (every parameter and the return);
4. every parameter is documented and no documented parameter is missing from ``run()``;
5. the generated schemas (ordinary and strict) are valid JSON Schema;
6. the tool's module has a ``main()`` harness;
7. importing the toolset stays within a time budget (measured in a fresh interpreter);
8. calls with generated wrong arguments never raise and always return a JSON-serialisable
   dict with a boolean ``success`` (hypothesis).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_IMPORT_BUDGET = 1.0


@dataclass
class Finding:
    tool: str | None
    check: str
    problem: str
    fix: str

    def __str__(self) -> str:
        who = self.tool or "toolset"
        return f"{who}: [{self.check}] {self.problem}. Fix: {self.fix}"


@dataclass
class Report:
    toolset: str
    tools: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    import_seconds: float | None = None
    calls_made: int = 0

    @property
    def ok(self) -> bool:
        return not self.findings

    def __str__(self) -> str:
        head = (f"toolset {self.toolset!r}: {len(self.tools)} tools, {self.calls_made} generated "
                f"calls, import {self.import_seconds or 0:.3f} s")
        if self.ok:
            return head + ": conforms"
        lines = [head + f": {len(self.findings)} problem(s)"]
        lines.extend(f"  - {finding}" for finding in self.findings)
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
    privileges: str = "rwx",
    run_execute_tools: bool = False,
) -> Report:
    """Check toolset ``name``; raise ConformanceError listing every problem, else return the report.

    Generated calls run in a temporary workspace. Tools needing execute permission get
    only wrong-typed arguments (which dispatch rejects before ``run()``) unless
    ``run_execute_tools`` is true, so random text never runs as code.
    """
    report = check(name, max_examples=max_examples, import_budget=import_budget,
                   privileges=privileges, run_execute_tools=run_execute_tools)
    if not report.ok:
        raise ConformanceError(report)
    return report


def check(
    name: str,
    *,
    max_examples: int = 25,
    import_budget: float = DEFAULT_IMPORT_BUDGET,
    privileges: str = "rwx",
    run_execute_tools: bool = False,
) -> Report:
    """Like check_toolset, but return the report whatever it found."""
    from ..privileges import Privileges, validate_permissions
    from ..registry import Registry
    from ..workspace import Workspace

    report = Report(name)
    with tempfile.TemporaryDirectory(prefix="janito-conformance-") as folder:
        registry = Registry(privileges=Privileges.from_string(privileges),
                            workspace=Workspace(folder), autoload=(), allowed=None)
        registry.add_toolset(name)
        for error in registry.load_errors:
            if error.toolset == name:
                report.findings.append(Finding(None, "load", error.reason,
                                               "make every public module of the package import"))
        spec = registry.toolsets()[name]
        report.import_seconds = _import_seconds(spec.module)
        if report.import_seconds > import_budget:
            report.findings.append(Finding(
                None, "import time",
                f"importing {spec.module} and its modules took {report.import_seconds:.2f} s "
                f"(budget {import_budget:.2f} s)",
                "import heavy dependencies inside run() rather than at module level",
            ))
        records = [r for r in registry.records() if r.toolset == name]
        if not records and not report.findings:
            report.findings.append(Finding(None, "tools", "the toolset defines no @tool class",
                                           "decorate tool classes with @tool(permissions=...)"))
        for record in records:
            report.tools.append(record.name)
            cls = record.cls
            try:
                validate_permissions(getattr(cls, "_tool_permissions", None))  # type: ignore[arg-type]
            except Exception as exc:
                report.findings.append(Finding(record.name, "permissions", str(exc),
                                               'use @tool(permissions="r"), "w", "x" or a mix'))
            _check_static(record.name, cls, report)
            if record.status == "skipped" and record.failed:
                report.findings.append(Finding(record.name, "load", record.reason or "skipped",
                                               "make should_load() return a bool without raising"))
                continue
            if record.status != "loaded":
                continue
            report.calls_made += _check_calls(record, registry, max_examples, run_execute_tools,
                                              report)
    return report


def _check_static(name: str, cls: type, report: Report) -> None:
    import inspect
    import typing

    from ..schema import AnnotationError, first_line, tool_schema

    if not first_line(cls.__doc__):
        report.findings.append(Finding(name, "docstring", "the class has no docstring",
                                       "start the class with a one-line description for the model"))
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
                                           "document every run() parameter under Args:, and only those"))
    for label, parameters in (("schema", schema.parameters), ("strict schema", schema.strict_parameters)):
        if parameters is None:
            continue
        problem = _schema_problem(parameters)
        if problem:
            report.findings.append(Finding(name, label, problem, "report this schema to janito"))
    module = sys.modules.get(cls.__module__)
    if module is None or not callable(getattr(module, "main", None)):
        report.findings.append(Finding(
            name, "main()", f"module {cls.__module__} has no main() harness",
            "add main() calling janito_core.harness.run_main(YourTool, argv) and "
            "`if __name__ == \"__main__\": main()`",
        ))


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


def _import_seconds(module: str) -> float:
    code = (
        "import time, importlib, os, sys\n"
        "t = time.perf_counter()\n"
        f"m = importlib.import_module({module!r})\n"
        "for p in getattr(m, '__path__', []):\n"
        "    for n in sorted(os.listdir(p)):\n"
        "        if n.endswith('.py') and not n.startswith('_'):\n"
        f"            importlib.import_module({module!r} + '.' + n[:-3])\n"
        "print(time.perf_counter() - t)\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        return float(out.stdout.strip().splitlines()[-1])
    except Exception:
        return 0.0


# Values dispatch refuses for each JSON type, so no generated "wrong" call reaches run():
# a number sent for a string would be coerced to its text and really run.
_WRONG_VALUES: dict[str, list[Any]] = {
    "string": [True, [], {"a": 1}, [1, 2]],
    "integer": ["many", True, 2.5, [], {}, "1e400"],
    "number": ["fast", True, [], {}, "nan"],
    "boolean": ["maybe", 2, [], {}],
    "array": [5, {"a": 1}, True],
    "object": [5, [1], True],
}


def _wrong_for(prop: dict[str, Any]) -> list[Any]:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if "enum" in prop:
        return ["definitely-not-an-option", 123456, [1]]
    return _WRONG_VALUES.get(kind or "", [object.__name__])


def _check_calls(record: Any, registry: Any, max_examples: int, run_execute: bool,
                 report: Report) -> int:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from ..dispatch import call_tool
    from ..schema import tool_schema

    schema = tool_schema(record.cls)
    props: dict[str, Any] = schema.parameters["properties"]
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
        | st.text(max_size=40),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                      max_size=4),
        max_leaves=12,
    )
    wrong_field = st.sampled_from(
        [(k, v) for k, prop in props.items() for v in _wrong_for(prop)] or [("unexpected", 1)]
    )
    may_run = run_execute or "x" not in record.permissions
    strategies = [
        st.builds(lambda kv: {kv[0]: kv[1]}, wrong_field),
        st.dictionaries(st.text(max_size=12), json_values, max_size=4).map(
            lambda d: {f"_{k}": v for k, v in d.items()} or {"_x": 1}),
        json_values.filter(lambda v: not isinstance(v, dict)),
        st.text(max_size=30).map(lambda s: "{" + s),
    ]
    if may_run and props:
        strategies.append(st.fixed_dictionaries({}, optional={k: json_values for k in props}))
    calls = 0
    problems: list[str] = []

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(*strategies))
    def probe(arguments: Any) -> None:
        nonlocal calls
        calls += 1
        payload = arguments if isinstance(arguments, str) else json.dumps(arguments)
        try:
            result = call_tool(record.name, payload, registry=registry)
        except BaseException as exc:  # the whole point: nothing may escape
            problems.append(f"raised {type(exc).__name__}: {exc} for arguments {payload[:200]}")
            return
        if not isinstance(result, dict) or not isinstance(result.get("success"), bool):
            problems.append(f"returned {result!r:.200} for arguments {payload[:200]}")
            return
        try:
            json.dumps(result, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problems.append(f"result is not JSON ({exc}) for arguments {payload[:200]}")

    cwd = os.getcwd()
    try:
        os.chdir(registry.workspace.root)
        probe()
    finally:
        os.chdir(cwd)
    for problem in problems[:3]:
        report.findings.append(Finding(record.name, "generated calls", problem,
                                       "catch the failure in run() and return success: false"))
    return calls


def toolset_path_hint(name: str) -> Path | None:
    """Where toolset ``name``'s package lives, for messages."""
    from ..registry import Registry

    spec = Registry(autoload=()).toolsets().get(name)
    return Path(spec.location) if spec else None
