"""Shared helpers of the benchmarks: alternating runs, medians, clean environments.

Every timing is taken twice: wall-clock time, and the CPU time (user + system) the
measured code used. The machines these run on are shared: another process taking the
CPU stretches wall time, but not the CPU time of the process being measured, so CPU
times stay comparable from one run to the next while wall times wander. For code that
neither sleeps nor waits on the network (start-up, dispatch, schema building) the two
agree on a quiet machine. Ratios are always against a baseline measured in the same run,
interleaved with it.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]


class Timing(NamedTuple):
    """Medians of one measured thing, in seconds."""

    wall: float
    cpu: float

    def ratio(self, baseline: Timing) -> Timing:
        return Timing(self.wall / baseline.wall, self.cpu / baseline.cpu)


def timing_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for timed processes: bytecode caches allowed, as after a real install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra or {})
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(command: Sequence[str], env: dict[str, str] | None = None,
             cwd: str | Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and the children it waited for)."""
    cpu = _children_cpu()
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu


class Command(NamedTuple):
    """A command with its own environment (``env`` replaces the shared one)."""

    argv: Sequence[str]
    env: dict[str, str]


def alternate(commands: dict[str, Sequence[str] | Command], runs: int,
              env: dict[str, str] | None = None, cwd: str | Path | None = None,
              warmup: int = 2) -> dict[str, Timing]:
    """Median wall and CPU time of each command, the commands interleaved run by run."""
    plain = {name: (c.argv, c.env) if isinstance(c, Command) else (c, env)
             for name, c in commands.items()}
    for _ in range(warmup):
        for argv, command_env in plain.values():
            run_once(argv, command_env, cwd)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, command_env) in plain.items():
            wall, cpu = run_once(argv, command_env, cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: Timing(statistics.median(walls[name]), statistics.median(cpus[name]))
            for name in commands if walls[name]}


def alternate_calls(functions: dict[str, Callable[[], object]], number: int,
                    repeat: int, *, children: bool = False) -> dict[str, Timing]:
    """Median seconds per call of each function, the functions interleaved repeat by repeat.

    The CPU figure is the process's CPU time (``time.process_time``) over the batch, with
    that of the children it waited for when ``children`` (a sandbox's launch is theirs).
    """
    def cpu_now() -> float:
        return time.process_time() + (_children_cpu() if children else 0.0)

    walls: dict[str, list[float]] = {name: [] for name in functions}
    cpus: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeat):
        for name, function in functions.items():
            cpu = cpu_now()
            started = time.perf_counter()
            for _ in range(number):
                function()
            walls[name].append((time.perf_counter() - started) / number)
            cpus[name].append((cpu_now() - cpu) / number)
    return {name: Timing(statistics.median(walls[name]), statistics.median(cpus[name]))
            for name in functions}


def make_venv(folder: Path, *requirements: str) -> Path:
    """A virtual environment with ``requirements`` installed and bytecode compiled."""
    uv = shutil.which("uv")
    python = folder / "bin" / "python"
    if uv:
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(folder)], check=True)
        subprocess.run([uv, "pip", "install", "-q", "--compile-bytecode", "-p", str(python),
                        *requirements], check=True)
    else:
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--compile", *requirements],
                       check=True)
    return folder


def verdict(value: float, target: float, lower_is_better: bool = True) -> str:
    ok = value <= target if lower_is_better else value >= target
    return "meets target" if ok else "MISSES target"


def exit_status(*verdicts: str) -> int:
    """The exit status of a benchmark: 1 when one of its verdicts missed its target."""
    return 1 if any(v != "meets target" for v in verdicts) else 0


def load_note() -> str:
    """The machine's load while the benchmark ran, for the record."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return ""
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"
