"""Round-trip time of one MCP tool call, served and mounted (not a test; run it by hand).

    python tests/measure_roundtrip.py [--calls 300] [--rounds 5]

Figures are medians over the rounds of the mean time per call, for a tool that answers
at once (``Ping`` of the test toolset, ``pid`` of the SDK echo server):

- serve/stdio, serve/http: the SDK's client calling ``janito mcp serve`` over stdio and
  streamable HTTP on 127.0.0.1 (default protocol negotiation);
- mount/stdio: janito's ``call_tool`` on a tool of the SDK echo server mounted over stdio;
- sdk/stdio: the SDK's client calling the SDK echo server directly, the same transport
  without janito at either end (the baseline measured in the same run);
- dispatch: ``call_tool("Ping")`` in process, for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
warnings.filterwarnings("ignore")

from conftest import ECHO_SERVER, SERVE, HttpServer, child_env  # noqa: E402


def _per_call(seconds: float, calls: int) -> float:
    return seconds / calls * 1000.0


async def _client_calls(server: Any, tool: str, calls: int, rounds: int) -> list[float]:
    from mcp.client import Client

    figures = []
    async with Client(server) as client:
        for _ in range(20):
            await client.call_tool(tool, {})
        for _ in range(rounds):
            started = time.perf_counter()
            for _ in range(calls):
                await client.call_tool(tool, {})
            figures.append(_per_call(time.perf_counter() - started, calls))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    import anyio
    from mcp.client.stdio import StdioServerParameters, stdio_client

    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        config = root / "config"
        config.mkdir()
        os.environ.update({k: v for k, v in child_env(config).items() if k.startswith(("JANITO", "PYTHON"))})

        janito_stdio = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "-t", "mcptest"],
                                             cwd=folder, env=child_env(config))
        results["serve/stdio"] = anyio.run(
            _client_calls, stdio_client(janito_stdio), "Ping", options.calls, options.rounds)

        http = HttpServer(root, config)
        try:
            results["serve/http"] = anyio.run(
                _client_calls, http.url, "Ping", options.calls, options.rounds)
        finally:
            http.stop()

        sdk_stdio = StdioServerParameters(command=sys.executable, args=[str(ECHO_SERVER)])
        results["sdk/stdio"] = anyio.run(
            _client_calls, stdio_client(sdk_stdio), "pid", options.calls, options.rounds)

        mcp_json = root / "mcp.json"
        mcp_json.write_text(json.dumps({"servers": {"echo": {
            "command": sys.executable, "args": [str(ECHO_SERVER)], "permissions": "r"}}}))
        os.environ["JANITO_MCP_CONFIG"] = str(mcp_json)
        from janito_core import Registry
        from janito_core.dispatch import call_tool

        registry = Registry(autoload=())
        registry.add_toolset("mcp")
        registry.add_toolset("mcptest")
        for name, tool in (("mount/stdio", "echo__pid"), ("dispatch", "Ping")):
            for _ in range(20):
                call_tool(tool, "{}", registry=registry)
            figures = []
            for _ in range(options.rounds):
                started = time.perf_counter()
                for _ in range(options.calls):
                    call_tool(tool, "{}", registry=registry)
                figures.append(_per_call(time.perf_counter() - started, options.calls))
            results[name] = figures

    baseline = statistics.median(results["sdk/stdio"])
    print(f"{'path':<12} {'ms per call':>12} {'vs sdk/stdio':>13}")
    for name, figures in results.items():
        median = statistics.median(figures)
        print(f"{name:<12} {median:>12.3f} {median / baseline:>12.2f}x")


if __name__ == "__main__":
    main()
