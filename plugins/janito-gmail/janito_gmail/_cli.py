"""The ``main()`` harness of each tool module: ``python -m janito_gmail.read_emails ...``.

Options mirror ``run()``'s parameters (``folder`` -> ``--folder``, lists take several
values, booleans are ``--flag``/``--no-flag``). The result is printed as JSON, indented,
or on one line with ``--json``; the exit status is 0 on success, 1 on failure and 2
when the tool cannot load here (no credentials).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import typing
from typing import Any, Literal

from janito_core import BaseTool
from janito_core.schema import parse_param_docs
from janito_core.workspace import Workspace


def _strip_optional(tp: Any) -> Any:
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if type(None) in typing.get_args(tp) and len(args) == 1:
        return args[0]
    return tp


def build_parser(tool: type[BaseTool]) -> argparse.ArgumentParser:
    doc = (tool.__doc__ or "").strip().splitlines()
    parser = argparse.ArgumentParser(
        prog=f"python -m {tool.__module__}",
        description=doc[0] if doc else None,
    )
    hints = typing.get_type_hints(tool.run)
    docs = parse_param_docs(tool.run.__doc__)
    for name, param in inspect.signature(tool.run).parameters.items():
        if name == "self" or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        tp = _strip_optional(hints.get(name, str))
        flag = "--" + name.replace("_", "-")
        help_text = docs.get(name, "")
        required = param.default is inspect.Parameter.empty
        kwargs: dict[str, Any] = {"dest": name, "help": help_text}
        if not required:
            kwargs["default"] = param.default
        else:
            kwargs["required"] = True
        origin = typing.get_origin(tp)
        if tp is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif origin in (list, tuple, set):
            (item,) = typing.get_args(tp)[:1] or (str,)
            kwargs["nargs"] = "+"
            kwargs["type"] = item if item in (int, str, float) else str
        elif origin is Literal:
            kwargs["choices"] = list(typing.get_args(tp))
        elif tp in (int, float, str):
            kwargs["type"] = tp
        parser.add_argument(flag, **kwargs)
    parser.add_argument("--json", action="store_true", help="print the result on one line")
    return parser


def run_cli(tool: type[BaseTool], argv: list[str] | None = None) -> int:
    """Parse ``argv``, run ``tool`` in a workspace rooted at the current folder, print."""
    parser = build_parser(tool)
    args = vars(parser.parse_args(argv))
    compact = args.pop("json")
    if not tool.should_load():
        print(json.dumps({"success": False, "error": tool._load_skip_reason,
                          "error_type": "tool_unavailable"}), file=sys.stdout)
        return 2
    instance = tool(Workspace())
    result = instance.run(**args)
    if compact:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0 if result.get("success") else 1


def main_for(tool: type[BaseTool]) -> None:
    sys.exit(run_cli(tool))
