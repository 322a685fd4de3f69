"""Helpers shared by the tests of janito-files."""

from __future__ import annotations

import os
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
