"""Start-up of `janito mcp serve`: from launch to the answer of its first `tools/list`.

What every MCP client pays when it starts janito's server over stdio. janito-core,
janito-files, janito-system and janito-mcp are installed from this tree into a fresh
virtual environment (bytecode compiled), with `fastmcp` when it installs. Each server is
started with its standard input and output on pipes; the client writes `initialize`, the
`initialized` notification and `tools/list`, and the clock stops when the list arrives. The
server is then closed (its standard input ends) and its CPU time read from its rusage.

Measured, interleaved run by run:

- `janito mcp serve` (stdio, the default toolsets, read-only as it serves by default);
- the floor: the MCP SDK's own low-level server answering the same tool list (read from a
  JSON file) after scanning the `janito.toolsets` entry points, which is the least a
  Python server of janito's toolsets built on the SDK can cost;
- the anchor: a FastMCP server of the same tools (same names, descriptions, parameters
  with their JSON types and defaults; bodies that do nothing), written out by this script.

Target (issue 37): janito at most 1.2x the floor; FastMCP's figure is printed beside it.

    python bench/bench_startup_serve.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from _common import ROOT, Timing, exit_status, load_note, make_venv, timing_env, verdict

TARGET = 1.2

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}

FLOOR = '''
import json, sys
import anyio
import importlib_metadata
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

importlib_metadata.entry_points(group="janito.toolsets")
listed = [types.Tool.model_validate(tool) for tool in json.load(open(sys.argv[1]))]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=listed)


server = Server("floor", on_list_tools=list_tools)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
'''

JSON_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
              "array": "list", "object": "dict"}


def fastmcp_source(tools: list[dict[str, Any]]) -> str:
    """A FastMCP server declaring ``tools`` (as janito lists them) as Python functions."""
    lines = ["from typing import Any", "from fastmcp import FastMCP", "",
             "mcp = FastMCP('same-tools')", ""]
    for tool in tools:
        schema = tool["inputSchema"]
        required = set(schema.get("required", ()))
        params = []
        for name, spec in schema.get("properties", {}).items():
            kind = JSON_TYPES.get(spec.get("type"), "Any") if isinstance(spec.get("type"), str) \
                else "Any"
            if name in required:
                params.insert(len([p for p in params if "=" not in p]), f"{name}: {kind}")
            else:
                params.append(f"{name}: {kind} | None = {spec.get('default')!r}")
        lines += ["@mcp.tool", f"def {tool['name']}({', '.join(params)}) -> dict:",
                  f"    {json.dumps(tool.get('description', ''))}", "    return {}", ""]
    lines += ["if __name__ == '__main__':", "    mcp.run(show_banner=False)"]
    return "\n".join(lines)


def install(venv: Path, *requirements: str) -> bool:
    """Whether ``requirements`` installed into ``venv`` (an optional anchor may not)."""
    uv = shutil.which("uv")
    python = str(venv / "bin" / "python")
    command = ([uv, "pip", "install", "-q", "--compile-bytecode", "-p", python] if uv else
               [python, "-m", "pip", "install", "-q", "--compile"])
    return subprocess.run([*command, *requirements], check=False).returncode == 0


def first_list(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    """(wall seconds to the tools/list answer, CPU seconds of the server, tools listed)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    process.stdin.flush()
    process.stdout.readline()
    process.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(LIST) + "\n").encode())
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"{argv} ended before answering tools/list: "
                             f"{process.stderr.read() if process.stderr else ''}")
        answer = json.loads(line)
        if answer.get("id") == 2:
            break
    wall = time.perf_counter() - started
    process.stdin.close()
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    process.stdout.close()
    if process.stderr is not None:
        process.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, len(answer["result"]["tools"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="janito-bench-serve-") as tmp:
        venv = make_venv(Path(tmp) / "venv", str(ROOT), str(ROOT / "plugins" / "janito-files"),
                         str(ROOT / "plugins" / "janito-system"),
                         str(ROOT / "plugins" / "janito-mcp"))
        python = str(venv / "bin" / "python")
        has_fastmcp = install(venv, "fastmcp")
        env = timing_env()
        work = Path(tmp) / "work"
        work.mkdir()
        janito = [str(venv / "bin" / "janito"), "mcp", "serve"]
        tools = _listed_by(janito, env, str(work))
        (Path(tmp) / "tools.json").write_text(json.dumps(tools))
        (Path(tmp) / "floor.py").write_text(FLOOR)
        commands: dict[str, list[str]] = {
            "floor (SDK server + entry points)": [python, str(Path(tmp) / "floor.py"),
                                                  str(Path(tmp) / "tools.json")],
            "janito mcp serve": janito,
        }
        if has_fastmcp:
            (Path(tmp) / "same_tools.py").write_text(fastmcp_source(tools))
            commands["FastMCP, same tools"] = [python, str(Path(tmp) / "same_tools.py")]
        for argv in commands.values():  # warm up, and check each lists every tool
            count = first_list(argv, env, str(work))[2]
            if count != len(tools):
                raise SystemExit(f"{argv} listed {count} tools, not {len(tools)}")
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                wall, cpu, _ = first_list(argv, env, str(work))
                walls[name].append(wall)
                cpus[name].append(cpu)
        medians = {name: Timing(median(walls[name]), median(cpus[name])) for name in commands}
    floor = medians["floor (SDK server + entry points)"]
    print(f"{len(tools)} tools listed; {args.runs} interleaved runs; {load_note()}")
    print(f"{'server':<36} {'wall ms':>8} {'CPU ms':>8} {'/floor (CPU, wall)':>20}")
    for name, value in medians.items():
        ratio = value.ratio(floor)
        print(f"{name:<36} {value.wall * 1e3:>8.1f} {value.cpu * 1e3:>8.1f} "
              f"{ratio.cpu:>9.2f}x {ratio.wall:>8.2f}x")
    ratio = medians["janito mcp serve"].ratio(floor)
    status = verdict(ratio.cpu, TARGET)
    print(f"janito mcp serve: {ratio.cpu:.2f}x the floor in CPU time, {ratio.wall:.2f}x in "
          f"wall time (target {TARGET}x): {status}")
    if has_fastmcp:
        anchor = medians["janito mcp serve"].ratio(medians["FastMCP, same tools"])
        print(f"against FastMCP with the same tools: {anchor.cpu:.2f}x in CPU time, "
              f"{anchor.wall:.2f}x in wall time")
    else:
        print("fastmcp did not install: no anchor")
    return exit_status(status)


def _listed_by(argv: list[str], env: dict[str, str], cwd: str) -> list[dict[str, Any]]:
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env, cwd=cwd, text=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE) + "\n")
    process.stdin.flush()
    process.stdout.readline()
    process.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(LIST) + "\n")
    process.stdin.flush()
    while True:
        answer = json.loads(process.stdout.readline())
        if answer.get("id") == 2:
            break
    process.stdin.close()
    process.wait()
    return [{k: v for k, v in tool.items() if k in ("name", "description", "inputSchema")}
            for tool in answer["result"]["tools"]]


if __name__ == "__main__":
    sys.exit(main())
