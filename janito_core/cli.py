"""The ``janito`` command.

Built-in subcommands are registered here; plugins add theirs through the
``janito_register_commands`` hook, which is only consulted when the first argument is
not a built-in command, so ``janito tools`` never pays for loading hook plugins.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, Callable

from .results import counted

if TYPE_CHECKING:
    from .registry import Registry

BUILTIN_COMMANDS = ("tools", "toolsets", "schema", "run", "policy", "secrets", "plugins",
                    "new-toolset", "history", "undo", "log")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake in how the command was called: exit status 2."""


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, given the terminal's width as ``shutil`` would find it
    without importing ``shutil``: argparse makes a formatter for every option it adds, and
    that import (with the compression modules it brings) was 2.6 ms of every start."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    """The terminal's width: ``COLUMNS`` when set to a positive number, else the width of
    standard output's terminal, else 80 (``shutil.get_terminal_size``'s rules)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Parser(argparse.ArgumentParser):
    """The command's parsers, subcommands' included (argparse makes them of the type of
    the parser they are added to), each laid out by :class:`_Formatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def registry_options() -> _Parser:
    """The shared options (-t, -r, -w, -x, --workspace, --sandbox); plugin subcommands reuse
    them with ``subparsers.add_parser(NAME, parents=[registry_options()])`` and
    ``build_registry(args)``. ``main()`` applies ``--sandbox`` before any handler runs.
    """
    common = _Parser(add_help=False)
    group = common.add_argument_group("toolsets and privileges")
    group.add_argument("-t", "--toolset", action="append", default=[], metavar="NAME",
                       help="also load the on-demand toolset NAME (repeatable)")
    group.add_argument("-r", "--read", action="store_true", help="grant read permission")
    group.add_argument("-w", "--write", action="store_true", help="grant write permission")
    group.add_argument("-x", "--execute", action="store_true", help="grant execute permission")
    group.add_argument("--workspace", metavar="DIR",
                       help="the folder tools may work in (default: the current directory)")
    _add_sandbox_option(group)
    return common


def _add_sandbox_option(group: Any) -> None:
    from .sandbox import ENV_VAR, POLICIES

    group.add_argument("--sandbox", choices=POLICIES, metavar="POLICY",
                       help=f"how code that tools run is confined: {', '.join(POLICIES)} "
                       f"(default: {ENV_VAR}, else the configuration, else workspace-write)")


def build_registry(args: argparse.Namespace) -> Registry:
    """The registry an invocation asks for: privileges, workspace and extra toolsets."""
    from .errors import ToolsetNotAllowedError, ToolsetNotFoundError
    from .privileges import Privileges
    from .registry import Registry

    privileges = Privileges.from_flags(args.read, args.write, args.execute)
    workspace = None
    if getattr(args, "workspace", None):
        from .workspace import Workspace

        if not os.path.isdir(args.workspace):
            raise UsageError(f"--workspace {args.workspace!r} is not a folder")
        workspace = Workspace(args.workspace)
    from .config import state_folder
    from .policy import Policy, PolicyError

    root = os.path.realpath(getattr(args, "workspace", None) or os.getcwd())
    try:
        policy = Policy.load(root)
    except PolicyError as exc:
        raise UsageError(f"the policy cannot be read, so nothing runs: {exc}") from None
    registry = Registry(privileges=privileges, workspace=workspace, policy=policy,
                        approver=_terminal_approver(),
                        journal=bool(getattr(args, "journal", False)))
    registry.import_output = sys.stderr  # a tool module imported on first use, likewise
    notice = state_folder(root).notice(root)
    if notice:
        _warn(f"note: {notice}")
    with contextlib.redirect_stdout(sys.stderr):  # what toolsets print must not corrupt stdout
        registry.loaded_toolsets()  # the autoload toolsets, imported now
        for name in args.toolset:
            try:
                registry.add_toolset(name)
            except (ToolsetNotFoundError, ToolsetNotAllowedError) as exc:
                raise UsageError(str(exc)) from None
    return registry


def _terminal_approver() -> Any:
    """A prompt on the terminal for calls the policy asks about, or None (then such a call
    answers ``approval_required``) when no one is at a terminal to answer."""
    try:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
    except (AttributeError, ValueError):
        return None

    def ask(request: Any) -> Any:
        sys.stderr.write(f"\njanito: {request.summary()}\n  {request.reason}\n")
        for path in request.paths:
            sys.stderr.write(f"  {path['access']}s {path['path']}\n")
        while True:
            sys.stderr.write("  Allow it? [y]es, [n]o, [a]lways for this tool: ")
            sys.stderr.flush()
            line = sys.stdin.readline()
            if not line:
                return False  # end of input: no answer is a no
            answer = line.strip().lower()
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no", ""):
                return False
            if answer in ("a", "always"):
                return "always"

    return ask


def _dump(data: Any) -> None:
    """``data`` as JSON on stdout, always valid UTF-8 (RFC 8259), whatever strings it holds."""
    import json

    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (from JSON text, or a name that is not UTF-8) can only sit
            # inside a JSON string, where its \\uXXXX escape stands for the same string.
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # an encoding without these characters (PYTHONIOENCODING=ascii)
        _write(json.dumps(data, indent=2) + "\n")


def _write(text: str) -> None:
    """Text for people on stdout; what its encoding cannot carry is shown backslash-escaped,
    as Python shows it on stderr, rather than stopping the command."""
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # the text was encoded whole before anything was written
        encoding = sys.stdout.encoding or "utf-8"
        sys.stdout.write(text.encode(encoding, "backslashreplace").decode(encoding))


def _warn(message: str) -> None:
    sys.stderr.write(f"janito: {message}\n")


def _table(rows: list[list[str]], indent: str = "") -> str:
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append((indent + "  ".join([*cells, row[-1]])).rstrip())
    return "\n".join(lines) + "\n"


def _summarise_failures(registry: Registry) -> int:
    """Print load errors and tool faults on stderr; return how many there were."""
    faults = [r for r in registry.records() if r.failed]
    errors = _say_load_errors(registry, warnings=False)
    for record in faults:
        _warn(f"error: tool {record.name} ({record.distribution}): {record.reason}")
    for warning in registry.warnings:
        _warn(f"warning: {warning}")
    return errors + len(faults)


def _say_load_errors(registry: Registry, warnings: bool = True) -> int:
    """Print what failed to load (and, with ``warnings``, the warnings) on stderr; return
    how many failures there were."""
    errors = registry.load_errors
    for error in errors:
        who = f"toolset {error.toolset!r}" if error.toolset else "plugin"
        where = f" ({error.distribution})" if error.distribution else ""
        _warn(f"error: {who}{where}: {error.reason}")
    if warnings:
        for warning in registry.warnings:
            _warn(f"warning: {warning}")
    return len(errors)


def _authoring_problems(registry: Registry) -> int:
    """Print on stderr what a model would suffer from in each tool's schema (no
    description, a parameter without a type or a description, ...); return how many.

    A schema that merely cannot be strict (a free-form ``dict[str, T]``, a declared JSON
    Schema) is no problem of the author's: ``janito schema --strict`` says so.
    """
    from .schema import tool_schema

    count = 0
    for record in registry.records():
        if record.failed:  # its annotations are broken: counted as a fault already
            continue
        try:
            diagnostics = tool_schema(record.cls).diagnostics
        except Exception as exc:  # a schema that cannot be built is a problem too
            diagnostics = (f"its schema cannot be built: {type(exc).__name__}: {exc}",)
        for diagnostic in diagnostics:
            if not diagnostic.startswith("no strict schema"):
                _warn(f"error: tool {record.name} ({record.distribution}): {diagnostic}")
                count += 1
    return count


def _say_notes(registry: Registry) -> None:
    for note in registry.notes:
        _warn(f"note: toolset {note.toolset!r} ({note.distribution}): {note.reason}")


# -- tools ------------------------------------------------------------------------------


def cmd_tools(args: argparse.Namespace) -> int:
    registry = build_registry(args)
    if args.strict:  # every module imported, as without a manifest: nothing rests on one
        for listed in registry.records():
            if listed.pending:
                registry.record(listed.name)
    records = registry.records()
    failures = _summarise_failures(registry)
    if args.strict:
        failures += _authoring_problems(registry)
    # A pending tool (listed from its toolset's manifest) has no sandbox_status of its own.
    sandbox = {r.name: status for r in records
               if not r.pending and (status := _sandbox_status(r.cls)) is not None}
    decided = _policy_marks(registry, records)
    if args.json:
        json_rows = []
        for record in records:
            row = record.as_row()
            if record.name in sandbox:
                row["sandbox"] = sandbox[record.name]
            if record.name in decided:
                row["policy"] = decided[record.name]
            json_rows.append(row)
        json_rows.extend(e.as_row() for e in registry.load_errors)
        _say_notes(registry)  # not rows: a note is no failure, and rows are tools or failures
        _dump(json_rows)
    else:
        out = []
        loaded = [r for r in records if r.status == "loaded"]
        if any(r.name in decided for r in loaded):
            rows = [[r.name, r.toolset, r.permissions or "-", _mark(decided.get(r.name)),
                     r.description] for r in loaded]
            header = ["TOOL", "TOOLSET", "PERMS", "POLICY", "DESCRIPTION"]
        else:
            rows = [[r.name, r.toolset, r.permissions or "-", r.description] for r in loaded]
            header = ["TOOL", "TOOLSET", "PERMS", "DESCRIPTION"]
        if rows:
            out.append(_table([header, *rows]))
        else:
            out.append("No tools are loaded.\n")
        if any(m["conditional"] for m in decided.values()):
            out.append("\n* a rule on the call's arguments or paths may ask or deny too "
                       "(janito policy check TOOL --args JSON)\n")
        confined = [[r.name, sandbox[r.name]] for r in loaded if r.name in sandbox]
        if confined:
            out.append("\nSandbox of the code they run:\n")
            out.append(_table(confined, "  "))
        for status, title in (("skipped", "Skipped"), ("denied", "Denied")):
            others = [r for r in records if r.status == status]
            if others:
                out.append(f"\n{title}:\n")
                rows = (_grouped_rows(others, records) if status == "skipped"
                        else [[r.name, r.toolset, r.reason or ""] for r in others])
                out.append(_table(rows, "  "))
        if registry.notes:
            out.append("\nNotes:\n")
            out.append(_table([[n.toolset or "-", n.distribution or "-", n.reason]
                               for n in registry.notes], "  "))
        broken = [r for r in records if r.status == "error"]
        if registry.load_errors or broken:
            out.append("\nErrors:\n")
            out.append(_table([
                *([r.toolset, r.distribution, f"{r.name}: {r.reason}"] for r in broken),
                *([e.toolset or "-", e.distribution or "-", e.reason] for e in registry.load_errors),
            ], "  "))
        _write("".join(out))
    return EXIT_FAILED if args.strict and failures else EXIT_OK


def _policy_marks(registry: Registry, records: list[Any]) -> dict[str, dict[str, Any]]:
    """{tool: the policy's decision} for the tools its rules or its mode ask about or deny
    whatever the arguments; ``conditional`` says a rule on arguments or paths may too."""
    policy = registry.policy
    if policy is None or (not policy.rules and policy.mode == "full-auto"):
        return {}  # only janito's own places are guarded: nothing a listing needs to say
    from .policy import ToolFacts

    marks: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.status != "loaded":
            continue
        decision, conditional = policy.listing(
            ToolFacts(record.name, record.toolset or "", record.permissions),
            declares_writes=record.declares_writes)
        if decision.action != "allow" or conditional:
            marks[record.name] = {**decision.as_json(), "conditional": conditional}
    return marks


def _mark(decided: dict[str, Any] | None) -> str:
    if decided is None:
        return "-"
    shown = "-" if decided["decision"] == "allow" else decided["decision"]
    return shown + ("*" if decided["conditional"] else "")


def _grouped_rows(records: list[Any], every: list[Any]) -> list[list[str]]:
    """One row per tool, except that the tools of a toolset sharing one reason (seventeen
    mail tools with no account configured) share one row: the reason is said once."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for record in records:
        by_reason.setdefault((record.toolset, record.reason or ""), []).append(record.name)
    rows = []
    for (toolset, reason), names in by_reason.items():
        if len(names) == 1:
            rows.append([names[0], toolset, reason])
        elif len(names) == sum(1 for r in every if r.toolset == toolset):
            rows.append([f"all {len(names)} tools", toolset, reason])
        else:
            rows.append([", ".join(names), toolset, reason])
    return rows


def _sandbox_status(cls: type) -> str | None:
    """What a tool class says about its sandbox (``BaseTool.sandbox_status``); None if nothing."""
    hook = getattr(cls, "sandbox_status", None)
    if hook is None:
        return None
    try:
        status = hook()
    except Exception as exc:  # a broken hook is reported in the listing, never raised
        return f"unknown: sandbox_status() raised {type(exc).__name__}: {exc}"
    return status if isinstance(status, str) else None


def cmd_toolsets(args: argparse.Namespace) -> int:
    from .discovery import package_location
    from .registry import AUTOLOAD_TOOLSETS

    registry = build_registry(args)
    specs = registry.toolsets()
    loaded = registry.loaded_toolsets()
    available = set(registry.names())  # skipped and denied tools were not made available
    errors: dict[str, list[str]] = {}
    for error in registry.load_errors:
        if error.toolset:
            errors.setdefault(error.toolset, []).append(error.reason)
    failures = _summarise_failures(registry)
    rows: list[dict[str, Any]] = []
    for name, spec in sorted(specs.items()):
        rows.append({
            "name": name,
            "distribution": spec.distribution,
            "version": spec.version,
            "location": package_location(spec.module),  # the copy `import` uses
            "installed_in": spec.location or None,
            "autoload": name in AUTOLOAD_TOOLSETS,
            "allowed": registry.is_allowed(name),
            "loaded": name in loaded and not any(
                e.toolset == name and e.kind == "import" and e.module == spec.module
                for e in registry.load_errors
            ),
            "tools": [t for t in loaded.get(name, []) if t in available],
            "error": "; ".join(errors[name]) if name in errors else None,
        })
    if args.json:
        _dump(rows)
    else:
        table = [["TOOLSET", "DISTRIBUTION", "VERSION", "LOCATION", "STATE"]]
        for row in rows:
            if row["error"]:
                state = "error: " + str(row["error"])
            elif row["loaded"]:
                state = f"loaded ({counted(len(row['tools']), 'tool')})"
            elif not row["allowed"]:
                state = "not allowed by JANITO_TOOLSETS"
            else:
                state = "available" + ("" if row["autoload"] else f" (load with -t {row['name']})")
            table.append([str(row["name"]), str(row["distribution"]), str(row["version"]),
                          str(row["location"] or "(not found)"), state])
        _write(_table(table) if rows else "No toolsets are installed.\n")
    return EXIT_FAILED if args.strict and failures else EXIT_OK


# -- schema -----------------------------------------------------------------------------


def cmd_schema(args: argparse.Namespace) -> int:
    from .formats import render
    from .schema import AnnotationError

    registry = build_registry(args)
    names = args.tools or registry.names()
    unknown = [n for n in names if registry.get(n) is None]
    if unknown:
        raise UsageError("; ".join(_why_not_loaded(registry, n) for n in unknown))
    out = []
    for name in names:
        try:
            schema = registry.schema(name)
        except AnnotationError as exc:
            raise UsageError(str(exc)) from None
        if args.format == "mcp":
            from .formats import mcp

            tool = registry.get(name)
            reaches_out = tool is not None and bool(getattr(tool.tool_class, "open_world", False))
            out.append(mcp(schema, permissions=registry.get_tool_permissions(name),
                           open_world=reaches_out))
        else:
            out.append(render(schema, args.format, strict=args.strict))
        for diagnostic in schema.diagnostics:
            if args.strict or not diagnostic.startswith("no strict schema"):
                _warn(f"{name}: {diagnostic}")
    _dump(out)
    return EXIT_OK


def _why_not_loaded(registry: Registry, name: str) -> str:
    """Why ``name`` is no loaded tool here, and what to do about it, in one sentence."""
    record = registry.record(name)
    if record is not None and record.status == "denied":
        return f"{name} is denied: it {record.reason}"
    if record is not None:
        return f"{name} is not available here: {record.reason}"
    spec = registry.toolset_offering(name)
    if spec is not None:
        return (f"{name} belongs to toolset {spec.name!r} ({spec.distribution}), which is "
                f"installed but not loaded: add -t {spec.name}")
    from ._arguments import _failure_text

    cause, failures = registry.failures_behind(name)
    if cause is not None:
        return f"{name} could not be loaded: {_failure_text(cause)}"
    if failures:
        return (f"{name} is not a loaded tool; it may be missing because a toolset failed to "
                f"load: {_failure_text(failures[0])}"
                + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""))
    return f"{name} is not a loaded tool (see `janito tools`)"


# -- run --------------------------------------------------------------------------------


def _takes_array(node: Any) -> bool:
    """Whether a parameter's schema takes an array in any of its forms (``list[str]``,
    ``str | list[str]``, ``list[str] | None``)."""
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind):
        return True
    return any(_takes_array(option) for option in node.get("anyOf", ()) or ())


def _parse_params(extra: list[str], registry: Registry, tool: str) -> dict[str, Any]:
    """``--name value`` pairs after the tool name, as the arguments of one call."""
    import json

    params: dict[str, Any] = {}
    array_params: set[str] = set()
    try:
        schema = registry.schema(tool)
        array_params = {
            name for name, prop in schema.parameters["properties"].items() if _takes_array(prop)
        }
    except Exception:
        pass
    index = 0
    while index < len(extra):
        token = extra[index]
        if not token.startswith("--") or len(token) == 2:
            raise UsageError(f"unexpected argument {token!r}: pass parameters as --name value")
        key, eq, value = token[2:].partition("=")
        key = key.replace("-", "_")
        if not eq:
            if index + 1 >= len(extra) or extra[index + 1].startswith("--"):
                value = "true"
            else:
                index += 1
                value = extra[index]
        index += 1
        if key in array_params:
            try:
                decoded = json.loads(value)
            except RecursionError:
                raise UsageError(f"--{key}: the JSON array is nested too deeply to be read") from None
            except ValueError:
                decoded = value
            items = decoded if isinstance(decoded, list) else [value]
            params.setdefault(key, []).extend(items)
        else:
            params[key] = value
    return params


def cmd_run(args: argparse.Namespace) -> int:
    import json

    from .dispatch import call_tool

    registry = build_registry(args)
    # What failed to load may be why the tool is missing or is another toolset's: said
    # before the call, so a person reads the cause before the refusal. A tool's own fault
    # (should_load raised) is said by the call's refusal, if it is the one called; a
    # warning (a slow import, a distribution found twice) says nothing about the call.
    _say_load_errors(registry, warnings=False)
    _say_notes(registry)
    if args.args is not None and args.params:
        raise UsageError("give the arguments either with --args JSON or as --name value, not both")
    if args.args is not None:
        try:
            arguments: Any = json.loads(args.args)
        except RecursionError:
            raise UsageError("--args is nested too deeply to be read as JSON") from None
        except ValueError as exc:
            raise UsageError(f"--args is not valid JSON: {exc}") from None
    else:
        arguments = _parse_params(args.params, registry, args.tool_name)
    from ._context import current_caller

    timeout = args.call_timeout
    deadline = _deadline(args.tool_name, timeout)
    previous = _interrupt_on_sigterm()
    caller = current_caller.set({"kind": "cli", "pid": os.getpid()})
    result: dict[str, Any] | None = None
    from ._deadline import CallOverran

    try:
        try:
            with contextlib.redirect_stdout(sys.stderr):  # a tool's print() is not its result
                if deadline is not None:
                    deadline.start()
                result = call_tool(args.tool_name, arguments, registry=registry, timeout=timeout)
        finally:
            if deadline is not None:
                deadline.stop()
    except CallOverran:
        assert deadline is not None
        deadline.stop()  # again: the interrupt may have come inside the first stop()
    finally:
        current_caller.reset(caller)
        _restore_sigterm(previous)
    if deadline is not None and (result is None or deadline.overran or (
            deadline.expired and result.get("error_type") == "timeout")):
        result = _timed_out(args.tool_name, result, deadline)
    assert result is not None
    if not result.get("success") and result.get("error_type") in _REFUSALS:
        # refused before the tool ran, so no tool said so on stderr: say it here
        said = str(result.get("error"))
        if result.get("toolset"):
            said += f": add -t {result['toolset']}"
        _warn(_utf8_text(said))
    _dump(result)
    return EXIT_OK if result.get("success") else EXIT_FAILED


#: Seconds ``janito run`` gives a call by default (``--call-timeout``).
DEFAULT_CALL_TIMEOUT = 300.0


def _seconds(text: str) -> float | None:
    """``--call-timeout``: a positive number of seconds, or ``inf`` for no limit."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value != value or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a positive number of seconds (inf "
                                         "for no limit)")
    return None if value == float("inf") else value


def _deadline(tool: str, timeout: float | None) -> Any:
    """The :class:`janito_core._deadline.Deadline` of a call (None without a timeout); at
    its last step it answers ``timeout`` on stdout and ends the process."""
    if timeout is None:
        return None
    from ._deadline import Deadline

    out = sys.stdout

    def give_up() -> None:
        from .results import TIMEOUT, failure

        try:
            said = (f"{tool} did not finish within {timeout:g} s and could not be stopped: "
                    "janito exits without waiting for it")
            _warn(f"{said} (janito run --call-timeout SECONDS gives a call longer)")
            sys.stdout = out  # the call's redirection to stderr is still in place
            _dump(failure(said, TIMEOUT, tool=tool))
            out.flush()
        finally:
            os._exit(EXIT_FAILED)

    return Deadline(timeout, give_up)


def _timed_out(tool: str, result: dict[str, Any] | None, deadline: Any) -> dict[str, Any]:
    """The answer of a call whose time ran out: the tool's own when it stopped as told (a
    ``timeout`` result), else one saying it had to be interrupted; either way the
    processes it started and left are killed, and stderr says how to give it longer."""
    from .results import TIMEOUT, failure

    ended = deadline.end_leftovers()
    if result is None or deadline.overran:
        said = f"{tool} did not finish within {deadline.timeout:g} s and did not stop when told to"
        said += ": it was interrupted"
        result = failure(said, TIMEOUT, tool=tool)
    elif result.get("error_type") != TIMEOUT:
        return result
    if ended:
        result = {**result, "processes_ended": len(ended)}
    _warn(f"{_utf8_text(str(result.get('error')))} (janito run --call-timeout SECONDS gives a "
          "call longer)")
    return result


#: The failures dispatch answers before a tool runs.
_REFUSALS = frozenset({"invalid_json", "invalid_arguments", "unknown_tool", "tool_unavailable",
                       "permission_denied", "refused", "plugin_error", "denied_by_policy",
                       "approval_required", "approval_declined"})


def _utf8_text(text: str) -> str:
    from .dispatch import utf8_text

    return utf8_text(text)


def tool_help(registry: Registry, name: str) -> str:
    """``janito run TOOL --help``: the tool's description and each parameter's type, default,
    rules and description."""
    import json
    import textwrap

    from ._constraints import KEYWORDS, words

    schema = registry.schema(name)
    record = registry.record(name)
    lines = [f"usage: janito run {name} [--NAME VALUE ...] | janito run {name} --args JSON", "",
             f"{name}: {schema.description}"]
    if record is not None:
        lines.append(f"toolset {record.toolset} ({record.distribution}); "
                     f"permissions {record.permissions or 'none'}")
    properties = schema.parameters.get("properties", {})
    required = set(schema.parameters.get("required", []))
    lines += ["", "parameters:" if properties else "no parameters"]
    for pname, node in properties.items():
        facts = [_type_words(node)]
        if pname in required:
            facts.append("required")
        elif "default" in node:
            facts.append(f"default {json.dumps(node['default'], ensure_ascii=False)}")
        said = words(node, KEYWORDS) or " or ".join(
            w for w in (words(o, KEYWORDS) for o in node.get("anyOf", ()) if isinstance(o, dict)) if w)
        if said:
            facts.append(said)
        lines.append(f"  --{pname.replace('_', '-')}  ({'; '.join(facts)})")
        description = node.get("description")
        if description:
            lines += textwrap.wrap(str(description), 88, initial_indent="      ",
                                   subsequent_indent="      ")
    lines += ["", "Values are strings that dispatch coerces (docs/dispatch.md); an array takes the "
              "option again or a JSON array; a flag alone means true."]
    return "\n".join(lines) + "\n"


def _type_words(node: Any) -> str:
    """What a parameter's schema accepts, in words that read one way only: ``integer or
    null``, ``array of strings, or null``, ``array of (string, integer, or null)``,
    ``one of "fast", "slow"``, ``object {x: number, y: number (optional)}``: an array's
    items in parentheses when they may be of several kinds, a comma before the last
    alternative when any of them is compound."""
    options = _alternatives(node)
    if len(options) > 2 or (len(options) == 2 and any(_compound(o) for o in options)):
        return ", ".join(options[:-1]) + ", or " + options[-1]
    return " or ".join(options)


_PLURALS = {"string": "strings", "integer": "integers", "number": "numbers",
            "boolean": "booleans", "null": "nulls", "any value": "any values"}


def _alternatives(node: Any) -> list[str]:
    """The values ``node`` accepts, one phrase per alternative, null last."""
    import json

    if not isinstance(node, dict):
        return ["any value"]
    found: list[str] = []
    nullable = False
    if "const" in node:
        found.append(json.dumps(node["const"], ensure_ascii=False))
    elif isinstance(node.get("enum"), list):
        values = [v for v in node["enum"] if v is not None]
        nullable = len(values) != len(node["enum"])
        shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values)
        if values:
            found.append(shown if len(values) == 1 else f"one of {shown}")
    else:
        kind = node.get("type")
        for k in kind if isinstance(kind, list) else [kind] if kind else []:
            if k == "null":
                nullable = True
            else:
                found.append(_kind_words(k, node))
        for key in ("anyOf", "oneOf"):
            for option in node.get(key) or ():
                for phrase in _alternatives(option):
                    if phrase == "null":
                        nullable = True
                    else:
                        found.append(phrase)
        if not found and not nullable:
            found.append("any value")
    found = list(dict.fromkeys(found))
    return [*found, "null"] if nullable else found


def _kind_words(kind: str, node: dict[str, Any]) -> str:
    """One JSON type of ``node`` in words: ``array of ...``, ``object {...}``, ``string``."""
    if kind == "array":
        fixed = node.get("prefixItems")
        if isinstance(fixed, list):
            return f"array [{', '.join(_type_words(i) for i in fixed)}]"
        items = node.get("items")
        if not isinstance(items, dict) or not items:
            return "array"
        options = _alternatives(items)
        if len(options) == 1 and options[0] in _PLURALS:
            return f"array of {_PLURALS[options[0]]}"
        if len(options) == 1 and options[0].startswith("object "):
            return f"array of objects {options[0][len('object '):]}"
        return f"array of ({_type_words(items)})"
    if kind == "object":
        properties = node.get("properties")
        if isinstance(properties, dict) and properties:
            required = set(node.get("required") or ())
            fields = [f"{name}: {_type_words(prop)}{'' if name in required else ' (optional)'}"
                      for name, prop in properties.items()]
            return "object {" + ", ".join(fields) + "}"
        values = node.get("additionalProperties")
        if isinstance(values, dict) and values:
            options = _alternatives(values)
            if len(options) == 1:
                return f"object mapping names to {_PLURALS.get(options[0], options[0])}"
            return f"object mapping names to ({_type_words(values)})"
        return "JSON object"
    return str(kind)


def _compound(phrase: str) -> bool:
    return phrase.startswith(("array", "object", "one of"))


class Terminated(KeyboardInterrupt):
    """SIGTERM while a tool runs: unwinds like Ctrl-C, so the tool's clean-up runs."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


def _interrupt_on_sigterm() -> Any:
    import signal

    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        return None


def _restore_sigterm(previous: Any) -> None:
    if previous is None:
        return
    import signal

    signal.signal(signal.SIGTERM, previous)


# -- secrets ----------------------------------------------------------------------------


def cmd_policy(args: argparse.Namespace) -> int:
    """``janito policy show`` and ``janito policy check TOOL --args JSON``."""
    import json

    registry = build_registry(args)
    policy = registry.policy
    assert policy is not None
    if args.action == "show":
        data = policy.as_json()
        if args.json:
            _dump(data)
            return EXIT_OK
        files = ", ".join(data["files"]) or "none (no policy.toml here or in the configuration folder)"
        lines = [f"mode: {data['mode']} ({data['mode_source']})", f"files: {files}"]
        if not data["rules"]:
            lines.append("rules: none")
        for rule in data["rules"]:
            lines.append(f"  {rule['text']}  ({rule['source']})")
        lines.append("always: nothing writes .janito/; a write under .git/ asks a person")
        _write("\n".join(lines) + "\n")
        return EXIT_OK
    try:
        arguments = json.loads(args.args) if args.args is not None else {}
    except ValueError as exc:
        raise UsageError(f"--args is not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise UsageError("--args must be a JSON object")
    record = registry.record(args.tool_name)
    if record is None or record.status in ("skipped", "error"):
        raise UsageError(f"no tool {args.tool_name!r} is loaded here ({_why_not_loaded(registry, args.tool_name)})")
    from . import _gate
    from ._arguments import _validate

    if record.status == "denied" or not registry.privileges.allows(record.permissions):
        answer = {"decision": "deny", "rule": None, "source": "privileges",
                  "reason": f"{record.name} {registry.privileges.denied_reason(record.permissions)}"}
    else:
        validated = _validate(record, arguments)
        if isinstance(validated, list):
            raise UsageError(f"the arguments are not valid for {record.name}: "
                             + "; ".join(f"{d['field']}: {d['error']}" for d in validated))
        # Every declared path resolved and put to every rule: a call decides a deny on a
        # read only as the tool opens the path, but this answer must name it beforehand.
        answer = policy.decide(_gate.facts(record), validated,
                               _gate.uses(record.cls, validated, registry.workspace)).as_json()
    if args.json:
        _dump(answer)
    else:
        rule = f" by {answer['rule']} ({answer['source']})" if answer.get("rule") else ""
        _write(f"{answer['decision']}{rule}: {answer['reason']}\n")
    return EXIT_OK


def cmd_secrets(args: argparse.Namespace) -> int:
    from . import secrets

    try:
        if args.action == "list":
            names = secrets.list_secrets()
            if args.json:
                _dump(names)
            else:
                _write("".join(f"{n}\n" for n in names) or "No secrets are stored.\n")
                sys.stderr.write(f"(stored in {secrets.backend_name()})\n")
            return EXIT_OK
        if not args.name:
            raise UsageError(f"`janito secrets {args.action}` needs a NAME")
        if args.action == "set":
            if sys.stdin.isatty():
                import getpass

                value = getpass.getpass(f"Value for {args.name}: ")
            else:
                value = _read_text_from_stdin()
                value = value[:-1] if value.endswith("\n") else value
                value = value[:-1] if value.endswith("\r") else value
            if not value:
                raise UsageError("no value given; nothing was stored")
            secrets.set_secret(args.name, value)
            sys.stderr.write(f"Stored {args.name} in {secrets.backend_name()}.\n")
            return EXIT_OK
        if args.action == "get":
            found = secrets.get_secret(args.name)
            if found is None:
                _warn(f"no secret called {args.name}")
                return EXIT_FAILED
            _write(found + "\n")
            return EXIT_OK
        if args.action == "delete":
            if secrets.delete_secret(args.name):
                sys.stderr.write(f"Deleted {args.name}.\n")
                return EXIT_OK
            _warn(f"no stored secret called {args.name}")
            return EXIT_FAILED
    except secrets.SecretStoreError as exc:  # not a usage error: the store needs repair
        _warn(f"error: {exc}")
        return EXIT_FAILED
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    raise UsageError(f"unknown action {args.action!r}")


def _read_text_from_stdin() -> str:
    """Standard input as UTF-8 text, whatever the locale's error handler would make of it."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # replaced by a text-only stream (an embedding host)
        return sys.stdin.read()
    data = stream.read()
    try:
        return str(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        # A store keeps text; bytes that are not UTF-8 would not come back out as they went in.
        raise UsageError(f"the value is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start}); nothing was stored") from None


# -- plugins ----------------------------------------------------------------------------


def cmd_history(args: argparse.Namespace) -> int:
    """``janito history``: the journal's entries that changed something, newest first."""
    import json

    from .journal import Journal

    root = None if args.all else os.path.realpath(args.workspace or os.getcwd())
    entries = Journal().entries(root)
    if args.json:
        print(json.dumps([entry.as_dict() for entry in entries], ensure_ascii=False, indent=2))
        return EXIT_OK
    if not entries:
        print("no recorded call changed anything" + ("" if root is None else f" in {root}"))
        return EXIT_OK
    for entry in entries:
        paths = entry.paths
        shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
        where = f"  [{entry.root}]" if root is None else ""
        print(f"{entry.id}  {_when(entry.started)}  {entry.tool:<18} {shown}{where}")
    return EXIT_OK


def _when(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def cmd_undo(args: argparse.Namespace) -> int:
    """``janito undo ID... | --last N``: restore what those calls changed."""
    import json

    from .journal import Journal, JournalError

    journal = Journal()
    ids = list(args.ids)
    if args.last is not None:
        if args.last < 1:
            raise UsageError("--last takes a number of calls, at least 1")
        root = os.path.realpath(args.workspace or os.getcwd())
        ids += [entry.id for entry in journal.entries(root)[:args.last]]
    if not ids:
        raise UsageError("name the calls to undo (ids from janito history) or give --last N")
    try:
        plan = journal.undo(ids, force=args.force, dry_run=args.dry_run,
                            caller={"kind": "cli", "pid": os.getpid()})
    except JournalError as exc:
        if args.json:
            print(json.dumps({"success": False, "error": str(exc), "path": exc.path}))
        _warn(f"error: {exc}")
        return EXIT_FAILED
    if args.json:
        print(json.dumps({"success": True, "dry_run": args.dry_run, **plan.as_dict()},
                         ensure_ascii=False, indent=2))
        return EXIT_OK
    verb = "would be" if args.dry_run else "was"
    for entry_id, path, action in plan.steps:
        print(f"{entry_id}  {path}: {action}" + (" (dry run)" if args.dry_run else ""))
    for path, reason in plan.conflicts + plan.not_kept:
        print(f"forced past: {path}: {reason}")
    if plan.recorded:
        print(f"the undo {verb} recorded as {plan.recorded} (janito undo {plan.recorded} "
              "takes it back)")
    return EXIT_OK


def cmd_log(args: argparse.Namespace) -> int:
    """``janito log``: the audit log, newest first."""
    import json

    from .journal import Journal

    since = _since(args.since) if args.since else None
    for line in Journal().log(since):
        if args.json:
            print(json.dumps(line, ensure_ascii=False))
            continue
        outcome = "ok" if line.get("success") else f"failed: {line.get('error_type')}"
        caller = line.get("caller") or {}
        who = caller.get("client") or caller.get("kind") or "?"
        changed = ", ".join(str(c.get("path")) for c in line.get("changed") or [])
        print(f"{_when(float(line.get('time') or 0))}  {who:<8} {line.get('tool')!s:<18} "
              f"{outcome}" + (f"  changed {changed}" if changed else ""))
    return EXIT_OK


def _since(text: str) -> float:
    import re
    import time
    from datetime import datetime

    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", text.strip())
    if match:
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]
        return time.time() - float(match.group(1)) * unit
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise UsageError(f"--since {text!r} is neither an ISO time nor an age like 30m, 2h "
                         "or 7d") from None


def cmd_plugins(args: argparse.Namespace) -> int:
    from .registry import Registry

    registry = Registry(autoload=())
    registry.toolsets()
    names = registry.plugins.names()
    errors = list(registry.plugins.errors)  # load_errors holds them too: list each once
    errors.extend(e for e in registry.load_errors if e.kind == "plugin" and e not in errors)
    if args.json:
        rows: list[dict[str, Any]] = [
            {"name": name, "distribution": dist, "error": None} for name, dist in names
        ]
        rows.extend({"name": None, "distribution": e.distribution, "error": e.reason} for e in errors)
        _dump(rows)
    else:
        _write(_table([["PLUGIN", "DISTRIBUTION"], *[[n, d or "-"] for n, d in names]]))
        for error in errors:
            _warn(f"error: {error.distribution}: {error.reason}")
    return EXIT_OK


# -- new-toolset ------------------------------------------------------------------------


def cmd_new_toolset(args: argparse.Namespace) -> int:
    from .scaffold import ScaffoldError, write_toolset

    try:
        folder = write_toolset(args.name, args.path or os.getcwd(), dist=args.dist,
                               package=args.package, allow_clash=args.allow_clash)
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from None
    sys.stderr.write(f"Created {folder}\n")
    _write(str(folder) + "\n")
    return EXIT_OK


# -- parser -----------------------------------------------------------------------------


def build_parser(with_plugins: bool, only: str | None = None) -> argparse.ArgumentParser:
    """The ``janito`` parser; ``only`` names the one built-in subcommand to set up.

    Setting up a subparser costs about 0.2 ms (argparse looks up message catalogs for
    every help string), so a command that names its subcommand first builds only that one.
    """
    from . import __version__

    parser = _Parser(
        prog="janito",
        description="Discover, inspect and run the tools of installed janito toolsets.",
    )
    parser.add_argument("--version", action="version", version=f"janito {__version__}")
    _add_sandbox_option(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    shared: list[_Parser] = []

    def common() -> _Parser:
        if not shared:
            shared.append(registry_options())
        return shared[0]

    def wanted(name: str) -> bool:
        return only is None or only == name

    if wanted("tools"):
        tools = sub.add_parser("tools", parents=[common()], help="list tools, skipped tools and errors")
        tools.add_argument("--json", action="store_true", help="machine-readable output")
        tools.add_argument("--strict", action="store_true",
                           help="exit 1 if anything failed to load, or a tool's schema leaves "
                           "the model without a description or a type")
        tools.set_defaults(handler=cmd_tools)

    if wanted("toolsets"):
        toolsets = sub.add_parser("toolsets", parents=[common()], help="list installed toolsets")
        toolsets.add_argument("--json", action="store_true", help="machine-readable output")
        toolsets.add_argument("--strict", action="store_true", help="exit 1 if anything failed to load")
        toolsets.set_defaults(handler=cmd_toolsets)

    if wanted("schema"):
        schema = sub.add_parser("schema", parents=[common()], help="print tool schemas for a provider")
        schema.add_argument("tools", nargs="*", metavar="TOOL", help="tools to print (default: all)")
        schema.add_argument("--format", default="openai",
                            choices=["openai", "openai-responses", "anthropic", "gemini", "mcp"])
        schema.add_argument("--strict", action="store_true", help="the provider's strict mode")
        schema.set_defaults(handler=cmd_schema)

    if wanted("run"):
        run = sub.add_parser(
            "run", parents=[common()], help="run one tool through dispatch", allow_abbrev=False,
            description="Run TOOL as a model would call it; the JSON result goes to stdout. "
            "Pass arguments with --args JSON or as --name value pairs.",
        )
        run.add_argument("tool_name", metavar="TOOL")
        run.add_argument("--args", metavar="JSON", help="the arguments as one JSON object")
        run.add_argument("--no-journal", dest="journal", action="store_false",
                         help="neither journal the call's changes (no undo) nor log the call")
        run.add_argument("--call-timeout", type=_seconds, default=DEFAULT_CALL_TIMEOUT,
                         metavar="SECONDS",
                         help=f"stop the call after this long (default {DEFAULT_CALL_TIMEOUT:g}; "
                         "inf for no limit)")
        run.set_defaults(handler=cmd_run, params=[])
        parser.set_defaults(run_options={
            option: action.nargs != 0 for action in run._actions for option in action.option_strings
        })

    if wanted("policy"):
        policy = sub.add_parser("policy", help="show the policy in force, or what it says of a call")
        actions = policy.add_subparsers(dest="action", metavar="ACTION", required=True)
        show = actions.add_parser("show", parents=[common()],
                                  help="the merged rules, and where each came from")
        show.add_argument("--json", action="store_true", help="machine-readable output")
        show.set_defaults(handler=cmd_policy, tool_name=None, args=None)
        check = actions.add_parser("check", parents=[common()],
                                   help="what the policy decides for one call, and by which rule")
        check.add_argument("tool_name", metavar="TOOL")
        check.add_argument("--args", metavar="JSON", help="the call's arguments (default {})")
        check.add_argument("--json", action="store_true", help="machine-readable output")
        check.set_defaults(handler=cmd_policy)

    if wanted("secrets"):
        secrets = sub.add_parser("secrets", help="store credentials for toolsets")
        secrets.add_argument("action", choices=["set", "get", "delete", "list"])
        secrets.add_argument("name", nargs="?", metavar="NAME")
        secrets.add_argument("--json", action="store_true", help="machine-readable output (list)")
        secrets.set_defaults(handler=cmd_secrets)

    if wanted("plugins"):
        plugins = sub.add_parser("plugins", help="list hook plugins")
        plugins.add_argument("--json", action="store_true", help="machine-readable output")
        plugins.set_defaults(handler=cmd_plugins)

    if wanted("new-toolset"):
        new = sub.add_parser("new-toolset", help="write a new toolset distribution to start from")
        new.add_argument("name", metavar="NAME", help="the toolset name, e.g. wordtools")
        new.add_argument("--dist", metavar="DIST", help="the distribution name (default: janito-NAME)")
        new.add_argument("--package", metavar="PACKAGE",
                         help="the import package (default: the distribution name with _)")
        new.add_argument("--path", metavar="DIR", help="where to create the DIST/ folder (default: .)")
        new.add_argument("--allow-clash", action="store_true",
                         help="write it even if the toolset or package name is taken already")
        new.set_defaults(handler=cmd_new_toolset)

    if wanted("history"):
        history = sub.add_parser("history", help="the calls that changed files, newest first")
        history.add_argument("--workspace", metavar="DIR",
                             help="the workspace (default: the current directory)")
        history.add_argument("--all", action="store_true", help="of every workspace")
        history.add_argument("--json", action="store_true", help="machine-readable output")
        history.set_defaults(handler=cmd_history)

    if wanted("undo"):
        undo = sub.add_parser("undo", help="put back what recorded calls changed")
        undo.add_argument("ids", nargs="*", metavar="ID", help="the calls (ids of janito history)")
        undo.add_argument("--last", type=int, metavar="N", help="the N newest calls")
        undo.add_argument("--workspace", metavar="DIR",
                          help="the workspace of --last (default: the current directory)")
        undo.add_argument("--dry-run", action="store_true", help="say what would be done, do nothing")
        undo.add_argument("--force", action="store_true",
                          help="undo even paths changed since, or not kept")
        undo.add_argument("--json", action="store_true", help="machine-readable output")
        undo.set_defaults(handler=cmd_undo)

    if wanted("log"):
        log = sub.add_parser("log", help="the audit log: every call, newest first")
        log.add_argument("--since", metavar="T",
                         help="only calls since T: an ISO time (2026-12-03T10:00) or an age "
                         "(30m, 2h, 7d)")
        log.add_argument("--json", action="store_true", help="one JSON object per line")
        log.set_defaults(handler=cmd_log)

    if with_plugins:
        from .registry import default_registry

        registry = default_registry()
        registry.toolsets()
        registry.plugins.register_commands(sub)
        for error in registry.plugins.errors:
            _warn(f"error: {error.distribution or 'plugin'}: {error.reason}")
    return parser


def _keep_param_values(arguments: list[str], run_options: dict[str, bool]) -> list[str]:
    """``janito run`` arguments with each tool parameter written ``--name=value``.

    argparse would otherwise take a value that looks like an option (``--text -x``) for
    that option, silently changing the privileges. ``run_options`` maps each option of
    ``run`` to whether it takes a value.
    """
    out = list(arguments)
    index = out.index("run") + 1
    while index < len(out):
        token = out[index]
        if token in run_options:
            index += 2 if run_options[token] else 1
            continue
        is_param = token.startswith("--") and len(token) > 2 and "=" not in token
        if is_param and index + 1 < len(out) and not out[index + 1].startswith("--"):
            out[index : index + 2] = [f"{token}={out[index + 1]}"]
        index += 1
    return out


def _run_help(arguments: list[str], parser: argparse.ArgumentParser) -> int | None:
    """``janito run TOOL --help``: print the tool's parameters; None when no tool is named
    (argparse then shows the help of ``run`` itself)."""
    import io

    try:
        with contextlib.redirect_stderr(io.StringIO()):  # its complaints belong to the real parse
            args, _extra = parser.parse_known_args(arguments)
    except SystemExit:
        return None
    name = getattr(args, "tool_name", None)
    if not name:
        return None
    try:
        registry = build_registry(args)
        if registry.get(name) is None:
            raise UsageError(_why_not_loaded(registry, name))
        _write(tool_help(registry, name))
    except UsageError as exc:
        _warn(f"error: {exc}")
        return EXIT_USAGE
    return EXIT_OK


def _take_global_options(arguments: list[str]) -> str | None:
    """Remove a leading ``--sandbox POLICY`` from ``arguments``; return POLICY (or None).

    It comes off before the subcommand is looked for, so ``janito --sandbox off tools``
    still names ``tools`` first. UsageError for a missing or unknown policy.
    """
    from .sandbox import POLICIES

    policy = None
    while arguments and arguments[0].split("=", 1)[0] == "--sandbox":
        option = arguments.pop(0)
        if "=" in option:
            value = option.split("=", 1)[1]
        elif arguments:
            value = arguments.pop(0)
        else:
            raise UsageError("--sandbox needs a policy: " + ", ".join(POLICIES))
        if value not in POLICIES:
            raise UsageError(f"--sandbox {value!r} is not a policy: use one of "
                             + ", ".join(POLICIES))
        policy = value
    return policy


def _apply_sandbox(policy: str | None) -> None:
    """Make ``--sandbox`` the policy of this process and of what it starts."""
    if policy is not None:
        from .sandbox import ENV_VAR

        os.environ[ENV_VAR] = policy


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        _apply_sandbox(_take_global_options(arguments))
    except UsageError as exc:
        _warn(f"error: {exc}")
        return EXIT_USAGE
    first = next((a for a in arguments if not a.startswith("-")), None)
    builtin = first in BUILTIN_COMMANDS
    # When the subcommand comes first, everything after it is that subcommand's: the
    # other built-in subparsers would never be consulted, so they are not built.
    only = first if builtin and arguments[0] == first else None
    parser = build_parser(with_plugins=not builtin, only=only)
    if first == "run":
        arguments = _keep_param_values(arguments, parser.get_default("run_options"))
        asks_help = [a for a in arguments if a in ("-h", "--help")]
        if asks_help:
            shown = _run_help([a for a in arguments if a not in asks_help], parser)
            if shown is not None:
                return shown
        args, extra = parser.parse_known_args(arguments)
        args.params = extra
    else:
        args = parser.parse_args(arguments)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    _apply_sandbox(getattr(args, "sandbox", None))
    try:
        return int(handler(args) or 0)
    except UsageError as exc:
        _warn(f"error: {exc}")
        return EXIT_USAGE
    except Terminated:
        return 143
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    from .harness import forget_working_folder

    # ``python -m janito_core.cli``: nothing imported from here on comes from the working folder.
    forget_working_folder()
    sys.exit(main())
