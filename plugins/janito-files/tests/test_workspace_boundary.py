"""Every tool that takes a path, against every way out of the workspace.

Each case is a real call through dispatch. Whatever the outcome, the result is a JSON
object with "success", nothing of the outside secret appears in it, and nothing outside
the workspace changes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest
from files_helpers import ok, snapshot

Call = Callable[[str], tuple[str, dict[str, Any]]]

CALLS: dict[str, Call] = {
    "ReadFile": lambda p: ("ReadFile", {"filepath": p}),
    "ReadMultipleFiles": lambda p: ("ReadMultipleFiles", {"filepaths": [p]}),
    "WordCount": lambda p: ("WordCount", {"filepath": p}),
    "CreateFile": lambda p: ("CreateFile", {"filepath": p, "content": "pwned",
                                            "overwrite": True}),
    "ReplaceTextInFile": lambda p: ("ReplaceTextInFile", {
        "filepath": p, "old_str": "OUTSIDE", "new_str": "pwned",
        "replace_all": True}),
    "DeleteFile": lambda p: ("DeleteFile", {"filepath": p}),
    "MoveFile(src)": lambda p: ("MoveFile", {"source": p, "destination": "moved",
                                             "overwrite": True}),
    "MoveFile(dest)": lambda p: ("MoveFile", {"source": "inside.txt", "destination": p,
                                              "overwrite": True}),
    "CreateDirectory": lambda p: ("CreateDirectory", {"directory": p}),
    "RemoveDirectory": lambda p: ("RemoveDirectory", {"directory": p, "recursive": True}),
    "ListFiles": lambda p: ("ListFiles", {"directory": p, "recursive": True}),
    "FindFiles": lambda p: ("FindFiles", {"paths": [p], "pattern": "*"}),
    "SearchText": lambda p: ("SearchText", {"paths": [p], "query": "OUTSIDE"}),
    "SearchRegex": lambda p: ("SearchRegex", {"paths": [p], "pattern": "OUT.IDE"}),
}

# Ways out: each must fail.
ESCAPES = {
    "dotdot": "../outside/secret.txt",
    "dotdot_dir": "../outside",
    "deep_dotdot": "a/b/../../../outside/secret.txt",
    "many_dotdots": "../" * 40 + "outside/secret.txt",
    "absolute": "{outside}/secret.txt",
    "absolute_dir": "{outside}",
    "link_to_file": "link_file",
    "link_to_dir": "link_dir",
    "through_link_dir": "link_dir/secret.txt",
    "dangling_link_out": "link_dangling",
    "nul": "inside.txt\x00../../outside/secret.txt",
}

# Odd paths that stay inside: they may succeed or fail, but never reach outside.
ODD = {
    "link_loop": "loop_a",
    "very_long_name": "n" * 5000,
    "very_long_path": "d/" * 3000 + "f.txt",
    "non_utf8_name": os.fsdecode(b"caf\xe9-\xff.txt"),
    "lone_surrogate": "bad\ud800name.txt",
    "tilde": "~/x.txt",
    "dot": ".",
}


@pytest.fixture
def setup(files: Any, ws: Path, outside: Path) -> Iterator[Path]:
    (ws / "inside.txt").write_text("inside OUTSIDE word\n")
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_dir").symlink_to(outside)
    (ws / "link_dangling").symlink_to(outside / "not-there.txt")
    (ws / "loop_a").symlink_to("loop_b")
    (ws / "loop_b").symlink_to("loop_a")
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.txt").write_text("OUTSIDE-SECRET deep\n")
    yield outside
    # "very_long_path" makes a tree 3000 folders deep; pytest removes old temporary folders
    # recursively and would stop on it, so it goes now, by descriptor.
    if (ws / "d").is_dir():
        from janito_core import Workspace

        Workspace(ws).rmdir("d", recursive=True)


def check(files: Any, outside: Path, tool: str, path: str) -> dict[str, Any]:
    """Call through dispatch, then directly (past dispatch's validation); return the first."""
    name, arguments = CALLS[tool](path)
    results = []
    for call in (lambda: files.call(name, arguments),
                 lambda: files.registry.tools()[name](**arguments)):
        before = snapshot(outside)
        siblings = sorted(p.name for p in outside.parent.iterdir())
        result = call()
        assert isinstance(result, dict) and isinstance(result.get("success"), bool), result
        text = json.dumps(result, ensure_ascii=False)
        text.encode("utf-8")  # the result can be sent as UTF-8
        assert "OUTSIDE-SECRET" not in text
        assert snapshot(outside) == before
        assert sorted(p.name for p in outside.parent.iterdir()) == siblings
        results.append(result)
    return results[0]


# Tools that act on a directory entry itself: a link whose target lies outside is still an
# entry of the workspace, and deleting, moving or replacing the link never touches what it
# points to (``check`` makes sure nothing outside changed).
ENTRY_TOOLS = {"DeleteFile", "MoveFile(src)", "MoveFile(dest)", "RemoveDirectory"}
LINK_ESCAPES = {"link_to_file", "link_to_dir", "dangling_link_out"}


@pytest.mark.parametrize("escape", sorted(ESCAPES))
@pytest.mark.parametrize("tool", sorted(CALLS))
def test_escapes_are_refused(files: Any, setup: Path, tool: str, escape: str) -> None:
    path = ESCAPES[escape].format(outside=setup)
    result = check(files, setup, tool, path)
    if tool in ENTRY_TOOLS and escape in LINK_ESCAPES:
        assert result["success"] or result["error_type"] == "not_a_directory", result
        return
    assert result["success"] is False, result
    if tool == "MoveFile(src)" or tool == "MoveFile(dest)":
        (files.workspace / "inside.txt").write_text("inside OUTSIDE word\n")
    kinds = {result.get("error_type")}
    kinds |= {f.get("error_type") for f in result.get("files", [])}
    kinds |= {e.get("error_type") for e in result.get("errors", [])}
    # A path with a NUL byte is no path at all, wherever it would lead.
    assert ("invalid_path" if escape == "nul" else "outside_workspace") in kinds, result


@pytest.mark.parametrize("odd", sorted(ODD))
@pytest.mark.parametrize("tool", sorted(CALLS))
def test_odd_paths_stay_inside(files: Any, setup: Path, tool: str, odd: str) -> None:
    check(files, setup, tool, ODD[odd])


def test_non_utf8_names_are_usable_and_shown_safely(files: Any, ws: Path) -> None:
    raw = os.path.join(os.fsencode(str(ws)), b"caf\xe9.txt")
    with open(raw, "wb") as handle:
        handle.write(b"hello\n")
    name = os.fsdecode(b"caf\xe9.txt")
    # Dispatch hands a tool U+FFFD for each lone surrogate (no such file); a direct call
    # reaches the tool with the name as it is.
    assert files.call("ReadFile", filepath=name)["error_type"] == "not_found"
    read = files.registry.tools()["ReadFile"]
    assert ok(read(filepath=name))["content"] == "hello\n"
    listing = ok(files.call("ListFiles", directory="."))
    assert listing["entries"] == ["caf\\xe9.txt"]
    found = ok(files.call("SearchText", paths=".", query="hello"))
    assert found["matches"][0]["path"] == "caf\\xe9.txt"
    json.dumps(listing, ensure_ascii=False).encode("utf-8")


def test_unconfined_workspace_is_explicit(janito: Any, outside: Path) -> None:
    janito.load("files", privileges="r", confined=False)
    result = ok(janito.call("ReadFile", filepath=str(outside / "secret.txt")))
    assert result["content"] == "OUTSIDE-SECRET\n"
