"""``main()`` harnesses: run one tool class from the shell, outside any registry.

In a tool module::

    def main(argv: list[str] | None = None) -> None:
        from janito_core.harness import run_main
        run_main(ReadFile, argv)

    if __name__ == "__main__":
        main()

Required parameters become positional arguments in order, optional ones ``--name``
options; ``--json`` prints the whole result as JSON. The call goes through dispatch, so
arguments are validated exactly as a model's would be; the workspace is the current
directory and every permission is granted (the person at the shell chose to run it).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def build_parser(cls: type) -> argparse.ArgumentParser:
    from .schema import tool_schema

    schema = tool_schema(cls)
    parser = argparse.ArgumentParser(prog=f"python -m {cls.__module__}",
                                     description=schema.description)
    for name, param in schema.params.items():
        kind = param.info.schema.get("type")
        is_array = kind == "array"
        help_text = param.description or ""
        if param.required:
            parser.add_argument(name, nargs="+" if is_array else None, help=help_text)
        elif kind == "boolean":
            option = "--" + name.replace("_", "-")
            parser.add_argument(option, dest=name, default=None,
                                action=argparse.BooleanOptionalAction, help=help_text)
        else:
            option = "--" + name.replace("_", "-")
            parser.add_argument(option, dest=name, default=None,
                                nargs="+" if is_array else None, help=help_text)
    parser.add_argument("--json", dest="_json", action="store_true",
                        help="print the whole result as JSON")
    parser.add_argument("--workspace", dest="_workspace", metavar="DIR", default=None,
                        help="the workspace root (default: the current directory)")
    return parser


def run_main(cls: type, argv: list[str] | None = None) -> int:
    """Parse ``argv``, call the tool through dispatch, print the result, exit 0 or 1."""
    from .dispatch import call_tool
    from .registry import Registry
    from .workspace import Workspace

    parser = build_parser(cls)
    namespace = vars(parser.parse_args(argv))
    as_json = namespace.pop("_json")
    workspace_root = namespace.pop("_workspace")
    arguments = {k: v for k, v in namespace.items() if v is not None}
    registry = Registry(autoload=(), workspace=Workspace(workspace_root))
    registry.add_tool(cls, toolset="main", distribution=cls.__module__.split(".")[0])
    result = call_tool(cls.__name__, arguments, registry=registry)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_human(result)
    code = 0 if result.get("success") else 1
    if argv is None:
        sys.exit(code)
    return code


def _print_human(result: dict[str, Any]) -> None:
    for key, value in result.items():
        if isinstance(value, str) and "\n" in value:
            sys.stdout.write(f"{key}:\n{value}\n")
        else:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            sys.stdout.write(f"{key}: {text}\n")
