"""Concurrent edits of one file: no update is ever lost.

``janito mcp serve -w`` runs calls in threads, and several janito processes may work in
one folder. Each edit replaces its own token; afterwards every token must be replaced,
every call must have said so, and nothing may be left behind. Threads share one registry,
processes each load their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import rel_support as rel

from janito_core.dispatch import call_tool, execute_tool_calls

ROUNDS = 20
THREADS = 16
PROCESSES = 4
EDITS_PER_PROCESS = 8


def tokens(count: int, prefix: str = "token") -> list[str]:
    return [f"{prefix}-{i:03d}" for i in range(count)]


def test_concurrent_edits_from_threads_lose_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    registry = rel.make_registry(ws, "rw", toolsets=["files"])
    lost = 0
    for round_number in range(ROUNDS):
        names = tokens(THREADS, f"r{round_number}")
        target = ws / "shared.txt"
        target.write_text("".join(f"{t}\n" for t in names), encoding="utf-8")
        barrier = threading.Barrier(THREADS)
        results: list[dict[str, Any]] = []

        def edit(token: str, barrier: threading.Barrier = barrier,
                 results: list[dict[str, Any]] = results) -> None:
            barrier.wait()
            results.append(call_tool("ReplaceTextInFile", {
                "filepath": "shared.txt", "old_str": token,
                "new_str": token.upper()}, registry=registry))

        workers = [threading.Thread(target=edit, args=(t,)) for t in names]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        failed = [r for r in results if not r["success"]]
        assert not failed, failed[:3]
        final = target.read_text(encoding="utf-8")
        lost += sum(t in final for t in names)
        assert sorted(os.listdir(ws)) == ["shared.txt"], os.listdir(ws)
        rel.count("concurrent edits: edits from threads", THREADS)
    rel.count("concurrent edits: rounds of 16 threads", ROUNDS)
    rel.count("concurrent edits: lost updates", lost)
    assert lost == 0


def test_a_turn_that_edits_one_file_step_by_step_runs_in_the_order_of_its_calls(
        tmp_path: Path) -> None:
    # Each edit replaces what the one before it wrote: run at the same time, most of them
    # would find nothing to replace. execute_tool_calls runs the calls of a turn together,
    # except those writing one path, which run in the order of the calls.
    ws = tmp_path / "ws"
    ws.mkdir()
    registry = rel.make_registry(ws, "rw", toolsets=["files"])
    steps = 12
    for round_number in range(5):
        name = f"chain-{round_number}.txt"
        turn = [{"type": "tool_use", "id": "create", "name": "CreateFile",
                 "input": {"filepath": name, "content": "step-00\n"}}]
        turn += [{"type": "tool_use", "id": f"edit-{i}", "name": "ReplaceTextInFile",
                  "input": {"filepath": name, "old_str": f"step-{i - 1:02d}",
                            "new_str": f"step-{i:02d}"}} for i in range(1, steps + 1)]
        # reads of another file in the same turn are not held up by the chain
        turn += [{"type": "tool_use", "id": f"read-{i}", "name": "ReadFile",
                  "input": {"filepath": "other.txt"}} for i in range(3)]
        (ws / "other.txt").write_text("other\n", encoding="utf-8")
        items = execute_tool_calls(turn, registry=registry, max_concurrency=8)
        assert [item["tool_use_id"] for item in items] == [c["id"] for c in turn]
        failed = [item["content"] for item in items if item["is_error"]]
        assert not failed, failed[:3]
        assert (ws / name).read_text(encoding="utf-8") == f"step-{steps:02d}\n"
        rel.count("concurrent edits: chained edits in one turn", steps)


EDITOR = textwrap.dedent("""
    import json, sys
    from janito_core import Privileges, Registry, Workspace
    from janito_core.dispatch import call_tool
    ws, *names = sys.argv[1:]
    registry = Registry(privileges=Privileges.from_string("rw"), workspace=Workspace(ws),
                        autoload=(), allowed=None)
    registry.add_toolset("files")
    results = [call_tool("ReplaceTextInFile", {"filepath": "shared.txt", "old_str": name,
                                                "new_str": name.upper()},
                         registry=registry) for name in names]
    print(json.dumps([r["success"] for r in results]))
""")


def test_concurrent_edits_from_processes_lose_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    names = tokens(PROCESSES * EDITS_PER_PROCESS)
    (ws / "shared.txt").write_text("".join(f"{t}\n" for t in names), encoding="utf-8")
    groups = [names[i::PROCESSES] for i in range(PROCESSES)]
    editors = [subprocess.Popen([sys.executable, "-c", EDITOR, str(ws), *group],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
               for group in groups]
    outcomes = []
    for editor in editors:
        out, _ = editor.communicate(timeout=300)
        assert editor.returncode == 0
        outcomes.extend(json.loads(out))
    assert all(outcomes), outcomes
    final = (ws / "shared.txt").read_text(encoding="utf-8")
    lost = sum(t in final for t in names)
    rel.count("concurrent edits: edits from separate processes", len(names))
    rel.count("concurrent edits: lost updates", lost)
    assert lost == 0, final
    assert sorted(os.listdir(ws)) == ["shared.txt"]
