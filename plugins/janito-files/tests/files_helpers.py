"""Helpers shared by the tests of janito-files."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

# Every tool of the toolset and the permissions it needs.
EXPECTED = {
    "CreateDirectory": "w",
    "CreateFile": "w",
    "DeleteFile": "w",
    "FindFiles": "r",
    "ListFiles": "r",
    "MoveFile": "w",
    "ReadFile": "r",
    "ReadMultipleFiles": "r",
    "RemoveDirectory": "w",
    "ReplaceTextInFile": "w",
    "SearchRegex": "r",
    "SearchText": "r",
    "WordCount": "r",
}


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry below ``folder`` with its content (None for folders and links)."""
    state: dict[str, bytes | None] = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = os.path.join(root, name)
            if os.path.islink(path):
                state[path] = ("->" + os.readlink(path)).encode()
            elif os.path.isdir(path):
                state[path] = None
            else:
                with open(path, "rb") as handle:
                    state[path] = handle.read()
    return state


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result["success"] is True, result
    return result


def fails(result: dict[str, Any], error_type: str) -> dict[str, Any]:
    assert result["success"] is False, result
    assert result["error_type"] == error_type, result
    assert isinstance(result["error"], str) and result["error"]
    return result


def random_ignore_file(root: str, rng: random.Random, gitignore: float, janitoignore: float
                       ) -> None:
    """Now and then an ignore file in folder ``root`` of a random tree: a ``.gitignore``
    with odds ``gitignore``, else a ``.janitoignore`` up to odds ``janitoignore``."""
    roll = rng.random()
    if roll < gitignore:
        with open(os.path.join(root, ".gitignore"), "w") as handle:
            handle.write(rng.choice(["*.log\n", "sub*/\n", "*.py\n!keep*.py\n", "a0\n"]))
    elif roll < janitoignore:
        with open(os.path.join(root, ".janitoignore"), "w") as handle:
            handle.write(rng.choice(["*.txt\n", "b*\n"]))
