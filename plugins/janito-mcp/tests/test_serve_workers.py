"""``--stateless --workers N``: uvicorn's multiprocess mode on one port, each request
standing alone, with the token and the non-loopback refusal of a single server."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import SERVE, HttpServer, child_env, run_async
from test_serve_auth import TOKEN, TOKEN_ENV, _client, _local_url, _post


def _workers_of(server: HttpServer) -> list[int]:
    """The pids of uvicorn's worker processes (spawned interpreters)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == server.process.pid and any(b"spawn_main" in arg for arg in argv):
            found.append(int(entry))
    return sorted(found)


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = HttpServer(tmp_path_factory.mktemp("pool-ws"), tmp_path_factory.mktemp("pool-cfg"),
                        "--stateless", "--workers", "2", env={TOKEN_ENV: TOKEN})
    try:
        yield server
    finally:
        server.stop()


def test_workers_serve_stateless_requests_with_the_token(pool: HttpServer) -> None:
    assert "stateless, 2 workers" in pool.banner[-1]
    assert "need 'Authorization: Bearer'" in pool.banner[-1]
    deadline = time.monotonic() + 60
    while len(_workers_of(pool)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(_workers_of(pool)) == 2
    assert _post(pool.url, None)[0] == 401
    assert _post(pool.url, "Bearer wrong")[0] == 401

    async def many() -> list[Any]:
        results: list[Any] = []

        async def one(n: int) -> None:
            async with _client(pool.url, TOKEN) as client:
                result = await client.call_tool("EchoText", {"text": str(n)})
                results.append(result.structured_content)

        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(one, n)
        return results

    results = run_async(many)
    assert sorted(r["text"] for r in results) == sorted(str(n) for n in range(20))

    async def with_progress() -> Any:
        steps: list[str] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            steps.append(message or "")

        async with _client(pool.url, TOKEN) as client:
            result = await client.call_tool("CountSteps", {"steps": 2}, progress_callback=progress)
        return result, steps

    result, steps = run_async(with_progress)
    assert result.structured_content["success"] is True
    assert any("2" in step for step in steps), steps


def test_a_dead_worker_is_replaced(pool: HttpServer) -> None:
    deadline = time.monotonic() + 60  # the workers start after the address is announced
    while len(_workers_of(pool)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    before = _workers_of(pool)
    os.kill(before[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = _workers_of(pool)
        if len(now) == 2 and before[0] not in now:
            break
        time.sleep(0.1)
    assert len(_workers_of(pool)) == 2 and before[0] not in _workers_of(pool)
    assert _post(pool.url, f"Bearer {TOKEN}")[0] == 200


def test_workers_import_nothing_from_the_workspace(workspace: Path, config_dir: Path) -> None:
    """Workers start as `python -c ...`, which puts the working folder first on the import
    path: a module a client wrote into the workspace must never run in them."""
    for name in ("multiprocessing", "json", "uvicorn", "encodings"):
        (workspace / f"{name}.py").write_text(
            "import pathlib\npathlib.Path(__file__).with_suffix('.ran').write_text('x')\n",
            encoding="utf-8")
    server = HttpServer(workspace, config_dir, "--stateless", "--workers", "2")
    try:
        deadline = time.monotonic() + 60
        while len(_workers_of(server)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _post(server.url, None)[0] == 200
    finally:
        server.stop()
    assert not list(workspace.glob("*.ran"))


def test_workers_refuse_a_non_loopback_address_without_a_token(workspace: Path,
                                                                config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "--transport", "http", "--host", "0.0.0.0", "--port", "0",
                           "--stateless", "--workers", "2"],
                          cwd=workspace, env=child_env(config_dir), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0" in done.stderr and "listening" not in done.stderr


def test_workers_on_a_non_loopback_address_require_the_token(workspace: Path,
                                                             config_dir: Path) -> None:
    server = HttpServer(workspace, config_dir, "--host", "0.0.0.0", "--stateless",
                        "--workers", "2", env={TOKEN_ENV: TOKEN})
    try:
        url = _local_url(server)
        assert _post(url, None)[0] == 401
        assert _post(url, f"Bearer {TOKEN}")[0] == 200
    finally:
        server.stop()


@pytest.mark.parametrize("flags, problem", [
    (["--transport", "http", "--workers", "2"], "--workers needs --stateless"),
    (["--stateless"], "are for --transport http"),
    (["--transport", "http", "--stateless", "--workers", "0"], "at least 1"),
])
def test_scale_out_usage_errors(flags: list[str], problem: str, workspace: Path,
                                config_dir: Path) -> None:
    done = subprocess.run([*SERVE, *flags], cwd=workspace, env=child_env(config_dir),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and problem in done.stderr, done.stderr
