"""What the conformance kit measures in a fresh interpreter: the toolset's import time, and
the tool names of every other installed toolset.

Run by the kit as a program (``python -c`` running this file, so that ``janito_core.testing``
itself is not imported first)::

    OUT TOOLSET [--others]

It writes JSON lines to OUT, each flushed as soon as it is known, so a toolset whose
import hangs costs only what came after it:

- ``{"wall": s, "cpu": s, "queued": s, "errors": n}``: importing TOOLSET's package and
  its public modules, as janito does, once janito-core itself is imported (that cost is
  not the author's). Wall time is what a person waits for; CPU time tells work from
  waiting; ``queued`` is the part of the wait the interpreter stood ready to run while
  other processes had the CPU (Linux's ``/proc/self/schedstat``; 0 where it cannot be
  read): the machine's load, not the toolset's doing.
- with ``--others``, then one line per other installed toolset:
  ``{"toolset", "distribution", "autoload", "tools"}``. They are imported with a private,
  empty configuration folder and no keyring, so none starts a server or reads a secret.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import IO, Any


def _emit(out: IO[str], line: dict[str, Any]) -> None:
    out.write(json.dumps(line) + "\n")
    out.flush()


def _queued() -> float:
    """Seconds this thread has waited on a run queue so far (0.0 where unknown)."""
    try:
        with open("/proc/self/schedstat", encoding="ascii") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def main(argv: list[str]) -> None:
    path, toolset, *rest = argv
    import janito_core  # noqa: F401 - imported before the clock starts: not the author's cost
    from janito_core.discovery import import_toolset, scan
    from janito_core.registry import AUTOLOAD_TOOLSETS

    specs = scan().toolsets
    with open(path, "w", encoding="utf-8") as out:
        spec = specs.get(toolset)
        if spec is not None:
            wall, cpu, queued = time.perf_counter(), time.process_time(), _queued()
            imported = import_toolset(spec)
            _emit(out, {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                        "queued": _queued() - queued, "errors": len(imported.errors)})
        if "--others" not in rest:
            return
        with tempfile.TemporaryDirectory(prefix="janito-survey-") as config:
            os.environ["JANITO_CONFIG_DIR"] = config
            os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
            for other in sorted(specs.values()):
                if other.name == toolset:
                    continue
                imported = import_toolset(other)
                _emit(out, {"toolset": other.name, "distribution": other.distribution,
                            "autoload": other.name in AUTOLOAD_TOOLSETS,
                            "tools": [cls.__name__ for cls in imported.classes]})


if __name__ == "__main__":
    main(sys.argv[1:])
