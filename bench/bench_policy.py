"""The policy's cost: one `call_tool` under a policy of 20 rules against the same call with
no policy, in the same process, interleaved.

ReadNote reads a small file through the workspace and declares it reads that path, so the
call pays for everything the policy does: the tool's rules, the path resolved and matched
before the call, and the guarded workspace that checks the path again as the tool opens
it. Ping takes nothing and touches nothing. The 20 rules are the kind a person writes:
denied secrets, asked deletions and code, allowed tests, a few for other toolsets.
Target (issue 32): at most 1.2x for ReadNote.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from _common import alternate_calls, exit_status, load_note, verdict

from janito_core import BaseTool, Registry, Workspace, tool
from janito_core.dispatch import call_tool

RULES: list[dict[str, Any]] = [
    {"action": "deny", "paths": [".env", ".env.*", "secrets/**", "*.pem", "*.key"]},
    {"action": "deny", "paths": ["id_rsa*", ".ssh/**", ".aws/**"]},
    {"action": "deny", "tools": ["RunBashCode"], "args": {"code": ["*rm -rf*", "*sudo*"]}},
    {"action": "ask", "tools": ["DeleteFile", "RemoveDirectory", "MoveFile"]},
    {"action": "ask", "tools": ["Run*"]},
    {"action": "ask", "toolsets": ["gmail"], "permissions": "w"},
    {"action": "ask", "paths": ["deploy/**", "infra/**"], "access": "write"},
    {"action": "ask", "paths": ["migrations/**"], "access": "write"},
    {"action": "allow", "tools": ["RunBashCode"], "args": {"code": ["pytest*", "ruff *"]}},
    {"action": "allow", "tools": ["ReadFile", "ListFiles", "SearchText", "FindFiles"]},
    {"action": "allow", "tools": ["GetCurrentTime"]},
    {"action": "deny", "tools": ["GetUrl"], "args": {"url": ["http://169.254.*"]}},
    {"action": "ask", "tools": ["SendEmail", "ForwardEmail", "ReplyToEmail"]},
    {"action": "deny", "tools": ["TrashEmails"], "args": {"folder": ["INBOX"]}},
    {"action": "ask", "toolsets": ["onedrive"], "permissions": "w"},
    {"action": "allow", "toolsets": ["skills"]},
    {"action": "deny", "paths": ["*.sqlite", "*.db"], "access": "write"},
    {"action": "ask", "paths": ["pyproject.toml", "setup.cfg"], "access": "write"},
    {"action": "allow", "paths": ["docs/**"], "access": "write"},
    {"action": "deny", "tools": ["RunPythonCode"], "args": {"code": ["*os.system*"]}},
]


@tool(permissions="r", reads_paths=("filepath",))
class ReadNote(BaseTool):
    """Read a small file."""

    def run(self, filepath: str) -> dict[str, Any]:
        return {"text": self.workspace.read_bytes(filepath).decode()}


@tool(permissions="r")
class Ping(BaseTool):
    """Answer at once."""

    def run(self) -> dict[str, Any]:
        return {"success": True}


def _registry(root: str, policy: Any) -> Registry:
    registry = Registry(autoload=(), workspace=Workspace(root), policy=policy, reports="off")
    registry.add_tool(ReadNote)
    registry.add_tool(Ping)
    return registry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    assert len(RULES) == 20
    root = tempfile.mkdtemp(prefix="janito-bench-policy-")
    os.makedirs(os.path.join(root, "src"))
    with open(os.path.join(root, "src", "note.txt"), "w") as handle:
        handle.write("a small note\n")
    with open(os.path.join(root, ".env"), "w") as handle:
        handle.write("TOKEN=1\n")
    plain = _registry(root, None)
    ruled = _registry(root, {"mode": "auto-edit", "rules": RULES})
    note = {"filepath": "src/note.txt"}
    for registry in (plain, ruled):
        assert call_tool("ReadNote", note, registry=registry)["text"] == "a small note\n"
        assert call_tool("Ping", {}, registry=registry) == {"success": True}
    assert call_tool("ReadNote", {"filepath": ".env"}, registry=ruled)["error_type"] \
        == "denied_by_policy"
    medians = alternate_calls({
        "ReadNote, no policy": lambda: call_tool("ReadNote", note, registry=plain),
        "ReadNote, 20 rules": lambda: call_tool("ReadNote", note, registry=ruled),
        "Ping, no policy": lambda: call_tool("Ping", {}, registry=plain),
        "Ping, 20 rules": lambda: call_tool("Ping", {}, registry=ruled),
    }, args.number, args.repeat)
    print(f"policy, medians of {args.repeat} interleaved repeats of {args.number} calls; "
          f"{load_note()}")
    for name, value in medians.items():
        print(f"  {name:<22} {value.wall * 1e6:8.2f} µs wall {value.cpu * 1e6:8.2f} µs CPU")
    verdicts = []
    for label, target in (("ReadNote", 1.2), ("Ping", None)):
        ratio = medians[f"{label}, 20 rules"].cpu / medians[f"{label}, no policy"].cpu
        added = (medians[f"{label}, 20 rules"].cpu - medians[f"{label}, no policy"].cpu) * 1e6
        if target is None:
            print(f"{label}: {ratio:.2f}x with the policy ({added:.2f} µs added; no target)")
            continue
        print(f"{label}: {ratio:.2f}x with the policy ({added:.2f} µs added; target at most "
              f"{target}x): {verdict(ratio, target)}")
        verdicts.append(verdict(ratio, target))
    return exit_status(*verdicts)


if __name__ == "__main__":
    sys.exit(main())
