"""The ``main()`` harness shared by the tool modules: run one tool from the shell."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def base_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="the project folder whose skills are found (default: the current one)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    return parser


def run(cls: type, args: argparse.Namespace, **kwargs: Any) -> None:
    """Run tool ``cls`` with ``kwargs`` in ``args.workspace``, print it, exit 0 or 1."""
    from janito_core import Workspace

    tool = cls(Workspace(args.workspace))
    result = tool.run(**kwargs)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    sys.exit(0 if result.get("success") else 1)
