"""Served tools declare what they answer: ``janito mcp serve`` offers every tool of the
repository's toolsets with an ``outputSchema``, and every answer it sends as
``structuredContent`` holds to it.

The MCP SDK's own client checks the structured content of each result that is not an
error against the tool's output schema and refuses one that breaks it; MCP does not
exempt errors, which the SDK leaves unchecked, so each answer is also checked here against
the whole schema, as a client that checks every result would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

#: (tool, arguments, whether it succeeds; None where that depends on the sandbox here)
CALLS: list[tuple[str, dict[str, Any], bool | None]] = [
    ("CreateFile", {"filepath": "notes/a.txt", "content": "alpha\nbeta\n"}, True),
    ("CreateDirectory", {"directory": "empty"}, True),
    ("ReadFile", {"filepath": "notes/a.txt", "max_lines": 1}, True),
    ("ReadMultipleFiles", {"filepaths": ["notes/a.txt", "missing.txt"]}, True),
    ("ListFiles", {"recursive": True}, True),
    ("FindFiles", {"paths": ".", "pattern": "*.txt"}, True),
    ("SearchText", {"paths": ".", "query": "beta"}, True),
    ("SearchRegex", {"paths": ["notes"], "pattern": "b.ta"}, True),
    ("WordCount", {"filepath": "notes/a.txt"}, True),
    ("ReplaceTextInFile", {"filepath": "notes/a.txt", "old_str": "beta", "new_str": "gamma"}, True),
    ("MoveFile", {"source": "notes/a.txt", "destination": "notes/b.txt"}, True),
    ("DeleteFile", {"filepath": "notes/b.txt"}, True),
    ("RemoveDirectory", {"directory": "empty"}, True),
    ("GetCurrentTime", {"timezone": "Europe/Lisbon"}, True),
    ("RunPythonCode", {"code": "print(6 * 7)"}, None),
    ("RunBashCode", {"code": "echo hi >&2"}, None),
    ("RunPythonFile", {"file_path": "missing.py"}, False),
    ("UndoCalls", {"count": 3, "dry_run": True}, True),
    # failures: the tools' own, and janito's before a tool runs
    ("ReadFile", {"filepath": "notes/a.txt"}, False),
    ("ListFiles", {"directory": "../"}, False),
    ("ReadFile", {"filepath": "x.txt", "max_lines": 0}, False),
    ("WordCount", {"filepath": "x.txt", "colour": "red"}, False),
    ("GetUrl", {"url": "http://127.0.0.1:9/"}, False),
]


def test_served_answers_match_the_output_schemas(tmp_path: Path,
                                                 inventory: list[dict[str, Any]]) -> None:
    pytest.importorskip("janito_mcp")
    import anyio
    from jsonschema import Draft202012Validator
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = rel.base_env(tmp_path / "config", secrets=True)
    command = rel.janito_command()
    toolsets = [flag for name in ("skills", "gmail", "onedrive", "undo")
                for flag in ("-t", name)]
    params = StdioServerParameters(command=command[0],
                                   args=[*command[1:], "mcp", "serve", "-w", "-x", *toolsets],
                                   cwd=str(workspace), env=env)
    errlog = tmp_path / "stderr.txt"

    async def main() -> tuple[dict[str, Any], list[tuple[str, Any]]]:
        with errlog.open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err)) as client:
                listed = {tool.name: tool.output_schema
                          for tool in (await client.list_tools()).tools}
                # a result that breaks its schema raises here, in the SDK, unless an error
                answers = [(name, await client.call_tool(name, arguments))
                           for name, arguments, _ in CALLS]
                return listed, answers

    listed, answers = anyio.run(main)
    rel.SWEEP.check(errlog.read_text(encoding="utf-8", errors="replace"), "mcp server stderr")
    loaded = {t["name"] for t in inventory if t["status"] == "loaded"}
    assert loaded <= set(listed), sorted(loaded - set(listed))
    undeclared = sorted(name for name in loaded if not listed[name])
    assert not undeclared, f"served without an outputSchema: {undeclared}"

    for (name, answer), (_, arguments, succeeds) in zip(answers, CALLS, strict=True):
        data = answer.structured_content
        assert data is not None and bool(answer.is_error) is (data["success"] is False), data
        if succeeds is not None:
            assert data["success"] is succeeds, (name, arguments, data)
        problems = [e.message for e in Draft202012Validator(listed[name]).iter_errors(data)]
        assert not problems, (name, arguments, problems, data)
    rel.count("serving: answers checked against their tools' output schemas", len(answers))
