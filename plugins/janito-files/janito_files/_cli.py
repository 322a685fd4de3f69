"""The command-line harness every tool module offers: ``python -m janito_files.read_file PATH``.

The options are built from the tool's ``run()`` signature: required parameters are
positional, the others ``--long-options`` (booleans as ``--flag/--no-flag``, path lists
taking several values). ``--json`` prints the result object; ``--workspace`` sets the root
(default: the current folder). The exit code is 0 on success and 1 on failure.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import typing
from typing import Any

from janito_core import Workspace


def _kind(annotation: Any) -> str:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if annotation is bool or bool in args:
        return "bool"
    if annotation is int or args == [int]:
        return "int"
    if typing.get_origin(annotation) is list or any(typing.get_origin(a) is list for a in args):
        return "list"
    return "str"


def build_parser(cls: type) -> argparse.ArgumentParser:
    from janito_core.schema import parse_param_docs

    doc = inspect.getdoc(cls) or ""
    module = cls.__module__
    if module == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = getattr(spec, "name", None) or module
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc)
    helps = parse_param_docs(cls.run.__doc__)  # type: ignore[attr-defined]
    hints = typing.get_type_hints(cls.run)  # type: ignore[attr-defined]
    signature = inspect.signature(cls.run)  # type: ignore[attr-defined]
    for name, param in list(signature.parameters.items())[1:]:
        kind = _kind(hints.get(name, str))
        if param.default is inspect.Parameter.empty:
            if kind == "list":
                parser.add_argument(name, nargs="+", help=helps.get(name))
            else:
                parser.add_argument(name, type=int if kind == "int" else str,
                                    help=helps.get(name))
            continue
        flag = "--" + name.replace("_", "-")
        if kind == "bool":
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction,
                                default=argparse.SUPPRESS, help=helps.get(name))
        elif kind == "int":
            parser.add_argument(flag, dest=name, type=int, default=argparse.SUPPRESS,
                                help=helps.get(name))
        elif kind == "list":
            parser.add_argument(flag, dest=name, nargs="+", default=argparse.SUPPRESS,
                                help=helps.get(name))
        else:
            parser.add_argument(flag, dest=name, default=argparse.SUPPRESS, help=helps.get(name))
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--workspace", default=None,
                        help="the workspace root (default: the current folder)")
    return parser


def _write(text: str, stream: Any) -> None:
    data = (text + "\n").encode("utf-8", "backslashreplace")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8"))


def run_cli(cls: type, argv: list[str] | None = None) -> int:
    """Parse ``argv``, run the tool once in the workspace and print its result."""
    parser = build_parser(cls)
    args = vars(parser.parse_args(argv))
    as_json = args.pop("json")
    root = args.pop("workspace")
    tool = cls(Workspace(root))
    try:
        result = tool.run(**args)
    except Exception as exc:  # run() should not raise; the harness still answers
        result = {"success": False, "error": f"{type(exc).__name__}: {exc}",
                  "error_type": "tool_exception"}
    if as_json:
        _write(json.dumps(result, indent=2, ensure_ascii=False), sys.stdout)
    elif not result.get("success"):
        _write(f"error ({result.get('error_type')}): {result.get('error')}", sys.stderr)
    elif isinstance(result.get("content"), str):
        _write(result["content"], sys.stdout)
    else:
        _write(json.dumps(result, indent=2, ensure_ascii=False), sys.stdout)
    return 0 if result.get("success") else 1
