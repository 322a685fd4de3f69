"""docs/policy.md's worked examples are true: each policy reads, each call is decided so.

Every ```toml block is followed by a ```policy-checks block of lines
``TOOL JSON -> decision``. The tools are the built-in ones, described here as the policy
sees them (name, toolset, permissions, the arguments they declare as paths they read and
write); the paths are taken as written, relative to a workspace root.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest

from janito_core.policy import READ, WRITE, PathUse, Policy, ToolFacts

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "policy.md"

# name: (toolset, permissions, argument read, argument written)
BUILT_IN = {
    "ReadFile": ("files", "r", "filepath", None),
    "SearchText": ("files", "r", "paths", None),
    "CreateFile": ("files", "w", None, "filepath"),
    "ReplaceTextInFile": ("files", "w", None, "filepath"),
    "DeleteFile": ("files", "w", None, "filepath"),
    "RemoveDirectory": ("files", "w", None, "directory"),
    "RunBashCode": ("system", "x", None, None),
    "RunPythonCode": ("system", "x", None, None),
    "SendEmail": ("gmail", "w", None, None),
    "ReadEmails": ("gmail", "r", None, None),
}


def examples() -> list[tuple[str, list[str]]]:
    text = GUIDE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```([\w-]+)\n(.*?)^```", text, re.S | re.M)
    found: list[tuple[str, list[str]]] = []
    for kind, body in blocks:
        if kind == "toml":
            found.append((body, []))
        elif kind == "policy-checks":
            assert found, "a policy-checks block comes after its policy"
            found[-1][1].extend(line for line in body.splitlines() if line.strip())
    return [(policy, checks) for policy, checks in found if checks]


def test_the_guide_has_an_example_per_mode() -> None:
    modes = {Policy.from_toml(policy).mode for policy, _ in examples()}
    assert modes == {"read-only", "ask", "auto-edit", "full-auto"}


@pytest.mark.parametrize("policy_text, checks", examples())
def test_each_call_of_the_guide_gets_the_decision_shown(policy_text: str,
                                                         checks: list[str]) -> None:
    policy = Policy.from_toml(policy_text, "docs/policy.md")
    for line in checks:
        match = re.fullmatch(r"(\w+) (\{.*\}) -> (allow|ask|deny)", line.strip())
        assert match, f"not a check line: {line!r}"
        name, raw, expected = match.groups()
        arguments: dict[str, Any] = json.loads(raw)
        toolset, permissions, reads, writes = BUILT_IN[name]
        tool = ToolFacts(name, toolset, permissions, reads is not None, writes is not None)

        def resolve(wanted: set[str], arguments: dict[str, Any] = arguments,
                    reads: str | None = reads, writes: str | None = writes) -> list[PathUse]:
            uses = []
            for access, argument in ((READ, reads), (WRITE, writes)):
                if argument is not None and access in wanted:
                    uses.append(PathUse(argument, posixpath.normpath(arguments[argument]),
                                        access))
            return uses

        decision = policy.decide_call(tool, arguments, resolve)
        assert decision.action == expected, (line, decision)
