"""Many writers of one secrets store at the same moment: threads of this process, or processes.

Each writer sets its own names (``t<writer>_<n>`` from threads, ``p<writer>_<n>`` from
processes) to ``value-of-<name>``; afterwards every one of them must be in the store.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from helpers.distributions import clean_env


def set_from_threads(threads: int, each: int) -> list[str]:
    """``threads`` threads released together by a barrier; the names they set."""
    from janito_core.secrets import set_secret

    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def work(index: int) -> None:
        barrier.wait()
        try:
            for n in range(each):
                set_secret(f"t{index}_{n}", f"value-of-t{index}_{n}")
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == [], errors
    return [f"t{i}_{n}" for i in range(threads) for n in range(each)]


SETTER = """
import os, sys, time
from janito_core.secrets import set_secret
index, each, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.001)
for n in range(each):
    set_secret(f"p{index}_{n}", f"value-of-p{index}_{n}")
"""


def set_from_processes(config: Path, processes: int, each: int) -> list[str]:
    """``processes`` interpreters started first and then released together by a file."""
    go = config.parent / f"go-{time.monotonic_ns()}"
    children = [
        subprocess.Popen([sys.executable, "-c", SETTER, str(i), str(each), str(go)],
                         env=clean_env({"JANITO_CONFIG_DIR": str(config)}),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(processes)
    ]
    time.sleep(0.3)  # time to start and import, so they all write at once
    go.write_text("go", encoding="utf-8")
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    return [f"p{i}_{n}" for i in range(processes) for n in range(each)]
