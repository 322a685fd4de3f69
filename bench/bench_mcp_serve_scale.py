"""Serving past one process: 200 concurrent clients against ``janito mcp serve --stateless``.

Issue 23 asks for calls per second, p50 and p99 latency with 200 concurrent clients on
loopback, against 1 and 4 workers, calling a cheap read tool (``Ping`` of janito-mcp's
test toolset: it returns ``{"success": true}``). The baseline, measured in the same run,
is the MCP SDK's own low-level server, stateless streamable HTTP in one process, with a
tool that returns the same result: everything janito adds (its registry, dispatch,
privileges, the hook, the worker thread a call runs in) is the difference.

Each client is one keep-alive HTTP/1.1 connection sending ``tools/call`` POSTs back to
back (stateless: no initialize, no session), through a small client on asyncio streams so
that the load generator costs little of the machine's CPU. The servers' CPU time per
call (from /proc, the server and its workers) says where the time goes, next to what the
load generator used.

    python bench/bench_mcp_serve_scale.py [--clients 200] [--seconds 8] [--profile]

``--profile`` also runs one janito worker under cProfile for a shorter load and prints
the share of its CPU time per package. Needs janito-mcp and its test extra; loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from _common import ROOT, load_note

SITE = ROOT / "plugins" / "janito-mcp" / "tests" / "site"
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "Ping", "arguments": {}}}).encode()

BASELINE = textwrap.dedent('''
    import sys, warnings
    warnings.simplefilter("ignore")
    import mcp_types as types, uvicorn
    from mcp.server.lowlevel import Server

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool(name="Ping", description="Answer.",
            input_schema={"type": "object", "properties": {}})])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text",
            text='{"success": true}')], structured_content={"success": True}, is_error=False)

    server = Server("baseline", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(stateless_http=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                access_log=False, backlog=1024)
''')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, name: str, argv: list[str], port: int, env: dict[str, str],
                 cwd: str) -> None:
        self.name, self.port = name, port
        self.process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError(f"{name} did not start")

    def cpu(self) -> float:
        """CPU seconds of the server process and of every process it started."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick
            except (OSError, ValueError, IndexError):
                pass
        return total

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


async def _read_response(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(b":") for line in head.split(b"\r\n")[1:] if line)}
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            body += await reader.readexactly(size + 2)
        data = bytes(body)
    else:
        data = await reader.readexactly(int(headers.get(b"content-length", b"0")))
    if status != 200 or b'"structuredContent":{"success":true}' not in data:
        raise RuntimeError(f"unexpected answer {status}: {data[:200]!r}")
    return data


async def _client(port: int, stop_at: float, latencies: list[float], errors: list[str]) -> None:
    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               f"Content-Length: {len(BODY)}\r\n\r\n").encode() + BODY
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        errors.append(f"connect: {exc}")
        return
    try:
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            writer.write(request)
            await writer.drain()
            await asyncio.wait_for(_read_response(reader), 60)
            latencies.append(time.perf_counter() - started)
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        writer.close()


async def _load(port: int, clients: int, seconds: float) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    started = time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(*(_client(port, stop_at, latencies, errors) for _ in range(clients)))
    return latencies, errors, time.perf_counter() - started


def measure(server: Server, clients: int, seconds: float) -> dict[str, Any]:
    asyncio.run(_load(server.port, min(clients, 20), 1.0))  # warm-up: imports, first calls
    cpu_before, own_before = server.cpu(), _own_cpu()
    latencies, errors, elapsed = asyncio.run(_load(server.port, clients, seconds))
    cpu = server.cpu() - cpu_before
    own = _own_cpu() - own_before
    latencies.sort()
    calls = len(latencies)
    return {
        "calls": calls,
        "calls_per_s": calls / elapsed,
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": 1000 * latencies[min(calls - 1, int(calls * 0.99))] if latencies else float("nan"),
        "server_cpu_ms_per_call": 1000 * cpu / calls if calls else float("nan"),
        "client_cpu_ms_per_call": 1000 * own / calls if calls else float("nan"),
        "errors": errors[:3],
        "error_count": len(errors),
    }


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _env(config: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SITE), env.get("PYTHONPATH", "")) if p)
    env["JANITO_CONFIG_DIR"] = config
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    for name in ("JANITO_TOOLSETS", "JANITO_PLUGINS", "JANITO_MCP_CONFIG",
                 "JANITO_SECRET_MCP_SERVE_TOKEN"):
        env.pop(name, None)
    return env


def janito_argv(port: int, workers: int) -> list[str]:
    return [sys.executable, "-m", "janito_mcp", "serve", "-t", "mcptest", "--transport", "http",
            "--port", str(port), "--stateless", "--workers", str(workers)]


def profile(folder: str, env: dict[str, str], clients: int, seconds: float) -> None:
    """One janito process under cProfile for a load; CPU share per package."""
    import pstats

    port = free_port()
    out = Path(folder) / "serve.prof"
    script = Path(folder) / "profiled.py"
    script.write_text(textwrap.dedent(f'''
        import cProfile, os, signal
        from janito_mcp._commands import main
        profiler = cProfile.Profile()
        def stop(*_):
            # uvicorn raises the signal again once it has shut down
            profiler.disable()
            profiler.dump_stats({str(out)!r})
            os._exit(0)
        signal.signal(signal.SIGTERM, stop)
        profiler.enable()
        main({janito_argv(port, 1)[3:]!r})
        stop()
    '''), encoding="utf-8")
    server = Server("profiled", [sys.executable, str(script)], port, env, folder)
    try:
        measure(server, clients, seconds)
    finally:
        server.stop()
    stats = pstats.Stats(str(out))
    shares: dict[str, float] = {}
    total = 0.0
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        total += own
        key = "other"
        for marker in ("janito_core", "janito_mcp", "uvicorn", "starlette", "sse_starlette",
                       "mcp_types", "/mcp/", "pydantic", "anyio", "h11", "asyncio", "json",
                       "threading", "concurrent", "selectors", "socket", "logging"):
            if marker in filename:
                key = marker.strip("/")
                break
        if filename.startswith("~"):
            key = "builtins (C)"
        shares[key] = shares.get(key, 0.0) + own
    print("\nwhere one janito process spends its CPU under load (own time, cProfile):")
    for key, value in sorted(shares.items(), key=lambda kv: -kv[1])[:14]:
        print(f"  {key:<14} {100 * value / total:5.1f} %")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    try:
        import janito_mcp  # noqa: F401
        import mcp  # noqa: F401
    except ImportError:
        print("bench_mcp_serve_scale: skipped, janito-mcp[test] is not installed")
        return 0
    print(f"{args.clients} concurrent clients, {args.seconds:g} s each; {load_note()}")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4 * args.clients:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="janito-bench-scale-") as folder:
        env = _env(folder)
        baseline_script = Path(folder) / "baseline.py"
        baseline_script.write_text(BASELINE, encoding="utf-8")
        plans = {
            "SDK server, 1 process (baseline)": lambda port: [sys.executable, str(baseline_script),
                                                               str(port)],
            "janito, 1 worker": lambda port: janito_argv(port, 1),
            "janito, 4 workers": lambda port: janito_argv(port, 4),
        }
        for name, argv in plans.items():
            port = free_port()
            server = Server(name, argv(port), port, env, folder)
            try:
                time.sleep(1.0 if "4" in name else 0.3)  # every worker up before the load
                results[name] = measure(server, args.clients, args.seconds)
            finally:
                server.stop()
        base = results["SDK server, 1 process (baseline)"]
        print(f"{'server':<34} {'calls/s':>8} {'ratio':>6} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'srv CPU ms/call':>16} {'client CPU ms/call':>19} {'errors':>6}")
        for name, r in results.items():
            print(f"{name:<34} {r['calls_per_s']:8.0f} {r['calls_per_s'] / base['calls_per_s']:5.2f}x"
                  f" {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} {r['server_cpu_ms_per_call']:16.2f}"
                  f" {r['client_cpu_ms_per_call']:19.2f} {r['error_count']:6d}")
            for error in r["errors"]:
                print(f"    error: {error}")
        if args.profile:
            profile(folder, env, args.clients, min(args.seconds, 5.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
