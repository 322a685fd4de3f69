"""``janito mcp serve --transport http --stateless --workers N``: N processes, one port.

The supervisor binds the listening socket (before anything slow, as a single server
does), checks authentication and the address as a single server does, then starts N workers
that inherit that socket and accept on it: the kernel hands each new connection to one
of them. Stateless streamable HTTP is what makes this correct: no request depends on
another, so it does not matter which worker answers it, here or behind a load balancer
spread over several hosts.

Workers are separate interpreters started afresh (``python -m janito_mcp serve
--worker-fd FD``), not forks: the supervisor may have threads (a mounted server's event
loop) that a fork would copy in an undefined state. A worker that dies is started again;
SIGTERM or SIGINT stops them all.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import socket

    from ._auth import BearerAuth
    from ._serve import ServeOptions

RESTARTS_PER_MINUTE = 10
STOP_GRACE = 10.0


def worker_command(options: ServeOptions, fd: int) -> list[str]:
    """The command line of one worker, with the supervisor's options."""
    argv = [sys.executable, "-m", "janito_mcp", "serve", "--transport", "http",
            "--host", options.host, "--port", str(options.port), "--path", options.path,
            "--stateless", "--workers", str(options.workers), "--worker-fd", str(fd),
            "--workspace", os.path.abspath(options.workspace or os.getcwd()),
            "--header-timeout", repr(options.header_timeout),
            "--body-timeout", repr(options.body_timeout),
            "--max-connections", str(options.max_connections),
            "--max-connections-per-client", str(options.max_connections_per_client),
            "--ask-timeout", repr(options.ask_timeout)]
    for toolset in options.toolsets:
        argv += ["-t", toolset]
    if options.write:
        argv.append("-w")
    if options.execute:
        argv.append("-x")
    if options.no_auth:
        argv.append("--no-auth")
    if options.allow_private_network:
        argv.append("--allow-private-network")
    if not options.journal:
        argv.append("--no-journal")
    for flag, value in (("--oauth-issuer", options.oauth_issuer),
                        ("--oauth-jwks-uri", options.oauth_jwks_uri),
                        ("--oauth-resource", options.oauth_resource)):
        if value:
            argv += [flag, value]
    return argv


def supervise(options: ServeOptions, sock: socket.socket, auth: BearerAuth | None,
              err: TextIO) -> int:
    """Start the workers, announce the address, keep them running until told to stop."""
    from ._serve import announce

    fd = sock.fileno()
    os.set_inheritable(fd, True)
    command = worker_command(options, fd)
    stopping = False

    # One key for every worker: a client may bring the answer to an input-required result
    # to another worker than the one that asked. It travels on stdin, not in argv or the
    # environment, where other processes could read it.
    state_key = secrets.token_bytes(32)

    def start() -> subprocess.Popen[Any]:
        worker = subprocess.Popen(command, pass_fds=(fd,), stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL)
        assert worker.stdin is not None
        try:
            with worker.stdin:
                worker.stdin.write(state_key)
        except BrokenPipeError:
            pass  # it exited at once; the loop below sees it and says so
        return worker

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    workers = [start() for _ in range(options.workers)]
    announce(options, sock, auth, err)
    restarts: list[float] = []
    try:
        while not stopping:
            time.sleep(0.2)
            for index, worker in enumerate(workers):
                code = worker.poll()
                if code is None or stopping:
                    continue
                now = time.monotonic()
                restarts = [t for t in restarts if now - t < 60] + [now]
                if len(restarts) > RESTARTS_PER_MINUTE:
                    print(f"janito mcp: workers keep exiting (the last with {code}); stopping",
                          file=err)
                    return 1
                print(f"janito mcp: worker {worker.pid} exited with {code}; starting another",
                      file=err)
                workers[index] = start()
        return 0
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for worker in workers:
            try:
                worker.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
