"""Helpers for tests that watch processes come and go."""

from __future__ import annotations

import os
import time
from pathlib import Path


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def wait_dead(pid: int, limit: float = 10.0) -> bool:
    """True once ``pid`` is gone (SIGKILL is delivered asynchronously), False after ``limit``."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if not process_alive(pid):
            return True
        time.sleep(0.02)
    return not process_alive(pid)


def read_pids(path: Path, count: int, limit: float = 10.0) -> list[int]:
    """Wait until ``path`` holds ``count`` pids, one a line, and return them."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if path.exists():
            lines = [ln for ln in path.read_text().split() if ln.strip()]
            if len(lines) >= count:
                return [int(x) for x in lines[:count]]
        time.sleep(0.02)
    raise AssertionError(f"{path} did not receive {count} pids")
