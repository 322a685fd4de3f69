"""The calls of one turn at the same time (issue 21): four GetUrl calls to a slow server.

A server on 127.0.0.1 answers each request after a fixed delay (1 s by default). One
turn of four GetUrl calls goes through ``execute_tool_calls`` three ways, interleaved
run by run: at the same time (the default), one after the other (``sequential=True``),
and through ``aexecute_tool_calls`` on an event loop. A single GetUrl call is measured
in the same run as the reference. Target: the concurrent turn takes about the time of
one call, at most 1.5x it, and so well under the sequential turn (about 4x one call).

Wall time is what matters here (the calls wait on the network); the CPU time of the
process is printed alongside it, to show that running together costs no extra work.
GetUrl refuses private addresses only for servers (``janito mcp serve``); a local call,
as here, may reach 127.0.0.1, and the script says so explicitly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from _common import exit_status, load_note, verdict

from janito_core import Registry
from janito_core.dispatch import aexecute_tool_calls, call_tool, execute_tool_calls
from janito_core.network import private_network

CALLS = 4
TARGET = 1.5  # the concurrent turn, in times one call


class SlowHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    delay = 0.3

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        time.sleep(self.delay)
        body = f"page {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def timed(function: Callable[[], Any]) -> tuple[float, float, Any]:
    cpu = time.process_time()
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, time.process_time() - cpu, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=1.0, help="the server's delay (s)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    SlowHandler.delay = args.delay
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    registry = Registry(autoload=("system",))
    turn = [{"id": f"call_{i}", "type": "function",
             "function": {"name": "GetUrl", "arguments": json.dumps({"url": f"{base}/{i}"})}}
            for i in range(CALLS)]

    def check(items: list[dict[str, Any]]) -> None:
        for i, item in enumerate(items):
            result = json.loads(item["content"])
            assert result["success"], result
            assert f"page /{i}" in result["content"], result

    def one() -> None:
        result = call_tool("GetUrl", {"url": f"{base}/one"}, registry=registry)
        assert result["success"], result

    ways: dict[str, Callable[[], Any]] = {
        "one call": one,
        "turn, concurrent": lambda: check(execute_tool_calls(turn, registry=registry)),
        "turn, sequential": lambda: check(execute_tool_calls(turn, registry=registry,
                                                             sequential=True)),
        "turn, aexecute_tool_calls": lambda: check(asyncio.run(
            aexecute_tool_calls(turn, registry=registry))),
    }
    walls: dict[str, list[float]] = {name: [] for name in ways}
    cpus: dict[str, list[float]] = {name: [] for name in ways}
    with private_network(True):
        for way in ways.values():  # warm-up: imports, the first loop, the first pool
            way()
        for _ in range(args.repeat):
            for name, way in ways.items():
                wall, cpu, _ = timed(way)
                walls[name].append(wall)
                cpus[name].append(cpu)
    server.shutdown()
    wall = {name: statistics.median(values) for name, values in walls.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    print(f"{CALLS} GetUrl calls to 127.0.0.1 answering after {args.delay:g} s, medians of "
          f"{args.repeat} interleaved runs; {load_note()}")
    print(f"  {'':<28} {'wall':>9} {'CPU':>9}  {'wall / one call':>15}")
    for name in ways:
        print(f"  {name:<28} {wall[name] * 1e3:6.1f} ms {cpu[name] * 1e3:6.1f} ms  "
              f"{wall[name] / wall['one call']:14.2f}x")
    ratio = wall["turn, concurrent"] / wall["one call"]
    against = wall["turn, concurrent"] / wall["turn, sequential"]
    async_ratio = wall["turn, aexecute_tool_calls"] / wall["one call"]
    print(f"concurrent turn: {ratio:.2f}x one call, {against:.2f}x the sequential turn; "
          f"aexecute_tool_calls: {async_ratio:.2f}x one call (target at most {TARGET:g}x one "
          f"call): {verdict(max(ratio, async_ratio), TARGET)}")
    return exit_status(verdict(max(ratio, async_ratio), TARGET))


if __name__ == "__main__":
    sys.exit(main())
