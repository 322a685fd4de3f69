"""Shared helpers of the benchmarks: alternating runs, medians, clean environments."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timing_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for timed processes: bytecode caches allowed, as after a real install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra or {})
    return env


def run_once(command: Sequence[str], env: dict[str, str] | None = None,
             cwd: str | Path | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def alternate(commands: dict[str, Sequence[str]], runs: int, env: dict[str, str] | None = None,
              cwd: str | Path | None = None, warmup: int = 2) -> dict[str, float]:
    """Median wall time of each command, the commands interleaved run by run."""
    for _ in range(warmup):
        for command in commands.values():
            run_once(command, env, cwd)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(run_once(command, env, cwd))
    return {name: statistics.median(values) for name, values in samples.items() if values}


def alternate_calls(functions: dict[str, Callable[[], object]], number: int,
                    repeat: int) -> dict[str, float]:
    """Median seconds per call of each function, the functions interleaved repeat by repeat."""
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeat):
        for name, function in functions.items():
            started = time.perf_counter()
            for _ in range(number):
                function()
            samples[name].append((time.perf_counter() - started) / number)
    return {name: statistics.median(values) for name, values in samples.items()}


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
