"""Serving at scale: janito's ASGI application against FastMCP 4, same tool, same server.

Issue 34 asks for calls per second and p50/p99 latency of ``janito_mcp.asgi:create_app``
against FastMCP 4 serving the same tool under the same uvicorn worker count, in one run:
1 and 2 uvicorn workers, and two instances (one worker each) behind HAProxy. Targets:
janito at least 1.0x FastMCP at every count; for a CPU-bound tool, 2 workers at least
1.6x 1 worker.

The tool is ``DoWork`` of janito-mcp's test toolset (``cpu_ms`` of SHA-256 hashing, then
``{"success": true, "pid": ...}``); FastMCP serves a function with the same body. Both
are stateless streamable HTTP, started by the uvicorn command line (``--factory``);
janito with the protocol ``janito mcp serve`` runs (``GuardedH11Protocol``), FastMCP with
uvicorn's default. Each client is one keep-alive HTTP/1.1 connection posting
``tools/call`` back to back; the clients run in a separate load-generating process on
asyncio streams, so the measured servers' CPU is not the generator's. The servers' CPU
time per call (from /proc) is printed beside the figures.

    python bench/bench_mcp_serve_scale.py [--clients 48] [--seconds 8] [--cpu-ms 4]
        [--rounds 3] [--only janito|fastmcp] [--journal]

Each round runs every set-up, janito and FastMCP one after the other; the figures are
the medians over the rounds (the machines are shared: one round's neighbour is noise).

``--journal`` keeps janito's journal and audit log on (``janito mcp serve``'s default;
FastMCP keeps none, so the comparison turns it off by default and says so).
Needs janito-mcp, FastMCP 4 (bench/requirements.txt) and haproxy; loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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
HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")

FASTMCP_APP = textwrap.dedent('''
    import hashlib, os, time, warnings
    warnings.simplefilter("ignore")
    from fastmcp import FastMCP

    def create():
        server = FastMCP("bench")

        @server.tool
        def DoWork(seconds: float = 0.0, steps: int = 0, cpu_ms: float = 0.0) -> dict:
            """Work for a while and say which server process did it."""
            digest = b""
            if cpu_ms > 0:
                until = time.process_time() + cpu_ms / 1000
                while time.process_time() < until:
                    for _ in range(200):
                        digest = hashlib.sha256(digest).digest()
            if seconds > 0:
                time.sleep(seconds)
            return {"success": True, "pid": os.getpid(), "steps": steps}

        return server.http_app(stateless_http=True)
''')

HAPROXY_CONFIG = """
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
frontend bench
    bind 127.0.0.1:{port}
    default_backend servers
backend servers
    balance roundrobin
    server a 127.0.0.1:{a}
    server b 127.0.0.1:{b}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the load generator (its own process) ---------------------------------------------------


def _body(cpu_ms: float) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "DoWork", "arguments": {"cpu_ms": cpu_ms}}}).encode()


async def _read_response(reader: asyncio.StreamReader) -> None:
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
    if status != 200 or b'"success":true' not in data.replace(b" ", b""):
        raise RuntimeError(f"unexpected answer {status}: {data[:200]!r}")


async def _client(port: int, body: bytes, stop_at: float, latencies: list[float],
                  errors: list[str]) -> None:
    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    writer = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            writer.write(request)
            await writer.drain()
            await asyncio.wait_for(_read_response(reader), 60)
            latencies.append(time.perf_counter() - started)
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        if writer is not None:
            writer.close()


async def _load(port: int, clients: int, seconds: float, cpu_ms: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    body = _body(cpu_ms)
    started = time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(*(_client(port, body, stop_at, latencies, errors)
                           for _ in range(clients)))
    return {"latencies": latencies, "errors": errors, "elapsed": time.perf_counter() - started}


def generate(port: int, clients: int, seconds: float, cpu_ms: float) -> None:
    """``--generate``: warm up, load, print one JSON line of what was measured."""
    asyncio.run(_load(port, min(clients, 8), 1.0, cpu_ms))
    found = asyncio.run(_load(port, clients, seconds, cpu_ms))
    print(json.dumps(found))


# -- the servers ----------------------------------------------------------------------------


class Processes:
    """Server processes started for one set-up, and their CPU time."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.processes.append(subprocess.Popen(argv, env=env, cwd=cwd,
                                               stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))

    def cpu(self) -> float:
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        pids = [p.pid for p in self.processes]
        pids += [child for pid in pids for child in _children(pid)]
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick
            except (OSError, ValueError, IndexError):
                pass
        return total

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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


def _wait_ready(port: int, cpu_ms: float) -> None:
    """Until a call answers (every worker is then likely up: workers start together)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            asyncio.run(_load(port, 1, 0.01, cpu_ms))
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
            found = asyncio.run(_load(port, 2, 0.2, cpu_ms))
            if found["latencies"] and not found["errors"]:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"no server answered on {port}")


def uvicorn_argv(app: str, port: int, workers: int, janito: bool) -> list[str]:
    argv = [sys.executable, "-m", "uvicorn", "--factory", app, "--host", "127.0.0.1",
            "--port", str(port), "--workers", str(workers), "--log-level", "warning",
            "--no-access-log", "--backlog", "2048"]
    if janito:
        argv += ["--http", "janito_mcp.asgi:GuardedH11Protocol"]
    return argv


def run_setup(kind: str, setup: str, folder: str, env: dict[str, str],
              args: argparse.Namespace) -> dict[str, Any]:
    janito = kind == "janito"
    app = "janito_mcp.asgi:create_app" if janito else "fastmcp_app:create"
    servers = Processes()
    try:
        if setup == "haproxy":
            a, b, port = free_port(), free_port(), free_port()
            servers.start(uvicorn_argv(app, a, 1, janito), env, folder)
            servers.start(uvicorn_argv(app, b, 1, janito), env, folder)
            config = Path(folder) / "haproxy.cfg"
            config.write_text(HAPROXY_CONFIG.format(port=port, a=a, b=b), encoding="utf-8")
            _wait_ready(a, args.cpu_ms)
            _wait_ready(b, args.cpu_ms)
            servers.start([str(HAPROXY), "-f", str(config), "-db"], env, folder)
        else:
            port = free_port()
            servers.start(uvicorn_argv(app, port, int(setup), janito), env, folder)
        _wait_ready(port, args.cpu_ms)
        time.sleep(1.0)  # the last workers' imports
        before = servers.cpu()
        done = subprocess.run([sys.executable, __file__, "--generate", str(port),
                               str(args.clients), str(args.seconds), str(args.cpu_ms)],
                              env=env, cwd=folder, capture_output=True, text=True, check=True)
        cpu = servers.cpu() - before
    finally:
        servers.stop()
    found = json.loads(done.stdout.strip().splitlines()[-1])
    latencies = sorted(found["latencies"])
    calls = len(latencies)
    return {
        "calls_per_s": calls / found["elapsed"],
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": 1000 * latencies[min(calls - 1, int(calls * 0.99))] if latencies
        else float("nan"),
        "cpu_ms_per_call": 1000 * cpu / calls if calls else float("nan"),
        "errors": found["errors"][:3],
        "error_count": len(found["errors"]),
    }


def _median(found: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {key: statistics.median(r[key] for r in found)
                              for key in ("calls_per_s", "p50_ms", "p99_ms", "cpu_ms_per_call")}
    merged["each"] = [round(r["calls_per_s"]) for r in found]
    merged["errors"] = [e for r in found for e in r["errors"]][:3]
    merged["error_count"] = sum(r["error_count"] for r in found)
    return merged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=48)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--cpu-ms", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("janito", "fastmcp"))
    parser.add_argument("--journal", action="store_true")
    parser.add_argument("--generate", nargs=4, metavar=("PORT", "CLIENTS", "SECONDS", "CPU_MS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        port, clients, seconds, cpu_ms = args.generate
        generate(int(port), int(clients), float(seconds), float(cpu_ms))
        return 0
    try:
        import fastmcp  # noqa: F401
        import janito_mcp  # noqa: F401
    except ImportError:
        print("bench_mcp_serve_scale: skipped, needs janito-mcp and fastmcp (bench/requirements.txt)")
        return 0
    setups = ["1", "2"] + (["haproxy"] if HAPROXY else [])
    if not HAPROXY:
        print("haproxy is not installed: the 2-instance set-up is left out")
    kinds = [args.only] if args.only else ["janito", "fastmcp"]
    print(f"{args.clients} concurrent clients, {args.seconds:g} s each, DoWork with "
          f"{args.cpu_ms:g} ms of CPU; janito's journal {'on' if args.journal else 'off'}; "
          f"before: {load_note()}")
    rounds: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="janito-bench-scale-") as folder:
        (Path(folder) / "fastmcp_app.py").write_text(FASTMCP_APP, encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(SITE), folder, env.get("PYTHONPATH", "")) if p)
        env["JANITO_CONFIG_DIR"] = folder
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
        env["JANITO_MCP_SERVE"] = ("-t mcptest --stateless --task-store off"
                                   + ("" if args.journal else " --no-journal")
                                   + f" --workspace {folder}")
        for name in ("JANITO_TOOLSETS", "JANITO_PLUGINS", "JANITO_MCP_CONFIG",
                     "JANITO_SECRET_MCP_SERVE_TOKEN"):
            env.pop(name, None)
        for _ in range(args.rounds):
            for setup in setups:
                for kind in kinds:  # interleaved: each pair shares the machine's moment
                    rounds.setdefault((kind, setup), []).append(
                        run_setup(kind, setup, folder, env, args))
    print(f"after: {load_note()}")
    results = {key: _median(found) for key, found in rounds.items()}
    names = {"1": "1 worker", "2": "2 workers", "haproxy": "2 instances + HAProxy"}
    print(f"{'server':<9} {'set-up':<22} {'calls/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'CPU ms/call':>12} {'errors':>6}  calls/s of each round")
    for (kind, setup), r in results.items():
        print(f"{kind:<9} {names[setup]:<22} {r['calls_per_s']:8.0f} {r['p50_ms']:8.1f} "
              f"{r['p99_ms']:8.1f} {r['cpu_ms_per_call']:12.2f} {r['error_count']:6d}  "
              f"{r['each']}")
        for error in r["errors"]:
            print(f"    error: {error}")
    missed = []
    if not args.only:
        for setup in setups:
            ratio = results[("janito", setup)]["calls_per_s"] / results[("fastmcp", setup)]["calls_per_s"]
            print(f"janito / FastMCP, {names[setup]}: {ratio:.2f}x (target 1.0x)")
            if ratio < 1.0:
                missed.append(f"janito/FastMCP {names[setup]}")
    for kind in kinds:
        scale = results[(kind, "2")]["calls_per_s"] / results[(kind, "1")]["calls_per_s"]
        print(f"{kind}: 2 workers / 1 worker: {scale:.2f}x (target 1.6x)")
        if kind == "janito" and scale < 1.6:
            missed.append("janito 2 workers / 1 worker")
    if missed:
        print("missed: " + ", ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
