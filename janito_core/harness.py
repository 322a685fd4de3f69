"""The ``main()`` harness: run one tool class from the shell, outside any installed toolset.

In a tool module::

    def main(argv: list[str] | None = None) -> int:
        from janito_core.harness import run_main

        return run_main(ReadFile, argv)

    if __name__ == "__main__":
        main()

A module without ``main()`` runs the same way with
``python -m janito_core.harness PACKAGE.MODULE[:TOOL] ARGS`` (TOOL only when the module
holds several tools).

Required parameters become positional arguments in order, optional ones ``--name``
options; ``--json`` prints the whole result as JSON. The call goes through dispatch, so
arguments are validated exactly as a model's would be; the workspace is the current
directory (or ``--workspace DIR``) and every permission is granted (the person at the
shell chose to run it).

``python -m`` puts the working folder first on the import path, so a ``difflib.py`` that
a tool wrote there would run when dispatch imports ``difflib``. When the tool module is
the program being run, :func:`run_main` takes that folder off the path before it imports
anything more; what Python imported to load the tool module itself came first and is out
of its reach (``python -P`` or ``janito run`` avoid even that).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse


def forget_working_folder() -> None:
    """Take the working folder that ``python -m`` (or ``-c``) put first on ``sys.path`` off it.

    Meant for a program's entry point, before it imports on demand: files a tool wrote
    in the working folder must never be importable by the process that serves the tools.
    Does nothing under ``python -P`` / ``PYTHONSAFEPATH`` (nothing was added) or when the
    first entry is some other folder (a console script's own).
    """
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    first = sys.path[0]
    if first == "":
        del sys.path[0]
        return
    try:
        here = os.getcwd()
    except OSError:  # the working folder was removed: whatever is first is not it
        return
    if first == here or os.path.realpath(first) == os.path.realpath(here):
        del sys.path[0]


def _add_own_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", dest="_json", action="store_true",
                        help="print the whole result as JSON")
    parser.add_argument("--workspace", dest="_workspace", metavar="DIR", default=None,
                        help="the workspace root (default: the current directory)")


def own_options() -> dict[str, str]:
    """The harness's own options, each with its help: a tool's optional parameter of that
    name cannot be given as an option here (the conformance check says so)."""
    import argparse

    parser = argparse.ArgumentParser()
    _add_own_options(parser)
    return {option: action.help or "" for action in parser._actions
            for option in action.option_strings}


def build_parser(cls: Any, prog: str | None = None) -> argparse.ArgumentParser:
    import argparse

    from .decorator import tool_class
    from .schema import tool_schema

    cls = tool_class(cls)
    schema = tool_schema(cls)
    parser = argparse.ArgumentParser(prog=prog or f"python -m {module_name(cls)}",
                                     description=schema.description)
    _add_own_options(parser)
    taken = {option for action in parser._actions for option in action.option_strings}
    for name, param in schema.params.items():
        node = param.info.schema
        forms: list[Any] = []
        for kind in [node.get("type"), *(o.get("type") for o in node.get("anyOf", ()) if isinstance(o, dict))]:
            forms.extend(kind if isinstance(kind, list) else [kind])  # ["array", "null"]: nullable
        is_array = "array" in forms  # a list, or a list or one value: several may be given
        help_text = param.description or ""
        if param.required:
            parser.add_argument(name, nargs="+" if is_array else None, help=help_text)
        elif "--" + name.replace("_", "-") in taken:
            continue  # the harness's own option keeps its meaning, as janito run's do
        elif "boolean" in forms:
            option = "--" + name.replace("_", "-")
            parser.add_argument(option, dest=name, default=None,
                                action=argparse.BooleanOptionalAction, help=help_text)
        else:
            option = "--" + name.replace("_", "-")
            choices = [str(v) for v in node["enum"]] if isinstance(node.get("enum"), list) else None
            parser.add_argument(option, dest=name, default=None, choices=choices,
                                nargs="+" if is_array else None, help=help_text)
    return parser


def module_name(cls: type) -> str:
    """The module ``cls`` comes from, by its import name even when run as ``python -m``."""
    module = cls.__module__
    if module == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = getattr(spec, "name", None) or module
    return module


def run_main(cls: Any, argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Parse ``argv``, call the tool (a ``@tool`` class or function) through dispatch, print
    the result; exit status 0 on success, 1 on failure, 2 when the tool cannot work here
    (``should_load`` said why)."""
    if cls.__module__ == "__main__":
        forget_working_folder()
    # Everything else is imported only now, once the working folder is off the path.
    import json

    from .decorator import tool_class
    from .dispatch import call_tool
    from .registry import Registry
    from .workspace import Workspace

    cls = tool_class(cls)
    parser = build_parser(cls, prog)
    namespace = vars(parser.parse_args(argv))
    as_json = namespace.pop("_json")
    workspace_root = namespace.pop("_workspace")
    arguments = {k: v for k, v in namespace.items() if v is not None}
    registry = Registry(autoload=(), workspace=Workspace(workspace_root))
    record = registry.add_tool(cls, toolset="main", distribution=module_name(cls).split(".")[0])
    if record.status != "loaded":
        result: dict[str, Any] = {"success": False, "error_type": "tool_unavailable",
                                  "error": f"{cls.__name__} cannot run here: {record.reason}"}
        code = 2
    else:
        result = call_tool(cls.__name__, arguments, registry=registry)
        code = 0 if result.get("success") else 1
    if as_json:
        _write(json.dumps(result, indent=2, ensure_ascii=False), sys.stdout)
    else:
        _print_human(result)
    if argv is None:
        sys.exit(code)
    return code


def _print_human(result: dict[str, Any]) -> None:
    """What a person at the shell wants: a run's output streams as they are, then the error
    on stderr; or a file's text as it is; any other result as indented JSON."""
    streams = [(result.get(key), stream) for key, stream in (("stdout", sys.stdout),
                                                              ("stderr", sys.stderr))]
    for text, stream in streams:
        if isinstance(text, str) and text:
            _write(text.removesuffix("\n"), stream)
    if not result.get("success"):
        _write(f"error ({result.get('error_type')}): {result.get('error')}", sys.stderr)
    elif any(isinstance(text, str) for text, _ in streams):
        pass  # a run's output streams are its result
    elif isinstance(result.get("content"), str):
        _write(result["content"], sys.stdout)
    else:
        import json

        _write(json.dumps(result, indent=2, ensure_ascii=False), sys.stdout)


def _write(text: str, stream: Any) -> None:
    """Write a line that may hold characters the terminal's encoding lacks, escaped."""
    data = (text + "\n").encode("utf-8", "backslashreplace")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8"))


USAGE = """usage: python -m janito_core.harness PACKAGE.MODULE[:TOOL] [ARGS ...] [--json]

Run one tool of a module from the shell, as the module's own main() would: required
parameters are positional, optional ones --name options (PACKAGE.MODULE:TOOL --help
lists them). TOOL is needed only when the module holds several tools.
"""


def main(argv: list[str] | None = None) -> int:
    """``python -m janito_core.harness PACKAGE.MODULE[:TOOL] ARGS``: the harness for a
    module that has no ``main()`` of its own."""
    import importlib

    from .discovery import describe_exception, tool_classes

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stderr.write(USAGE)
        return 0 if args else 2
    target, _, wanted = args[0].partition(":")
    try:
        module = importlib.import_module(target)
    except (Exception, SystemExit) as exc:
        sys.stderr.write(f"error: cannot import {target}: {describe_exception(exc)}\n")
        return 2
    classes = tool_classes(module)
    names = [c.__name__ for c in classes]
    if wanted:
        classes = [c for c in classes if c.__name__ == wanted]
    if len(classes) != 1:
        if not names:
            problem = f"{target} holds no @tool class or function"
        elif wanted:
            problem = f"{target} has no tool {wanted!r}; it has {', '.join(names)}"
        else:
            problem = f"{target} holds several tools; name one: {target}:{names[0]} ({', '.join(names)})"
        sys.stderr.write(f"error: {problem}\n")
        return 2
    # The working folder was on the path to find the module; dispatch's on-demand imports
    # must not come from it.
    forget_working_folder()
    return run_main(classes[0], args[1:], prog=f"python -m janito_core.harness {args[0]}")


if __name__ == "__main__":
    sys.exit(main())
