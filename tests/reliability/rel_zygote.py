"""A janito process that forks writers on demand, for the kill tests.

Started once per test with the workspace as argv[1] (``--unconfined`` as argv[2] makes the
workspace unconfined, for moves across filesystems). It imports janito and loads the files
toolset, then reads commands on stdin, one per line:

``fork KIND PATH [PATH2]``
    fork a child that calls the files tools through ``call_tool`` in a loop until it is
    killed; the zygote answers ``pid N`` and the child, once it is about to make its first
    call, ``go N``. KIND is ``create`` (CreateFile with overwrite, versions 1, 2, ... of a
    multi-megabyte text), ``replace`` (ReplaceTextInFile turning every token ``tok-K`` into
    ``tok-K+1``) or ``move`` (MoveFile PATH -> PATH2 and back).
``reap N``
    wait for child N; answers ``reaped N STATUS``.

Forking keeps a cycle cheap (no interpreter start-up), so many cycles fit in a short run,
and each kill still lands on a real process in the middle of real janito calls.
"""

from __future__ import annotations

import os
import sys

SIZE = 3 * 1024 * 1024


def version_text(k: int) -> str:
    """Version ``k`` of the created file: a header naming it, then a body derived from it."""
    line = f"version {k:08d} " + "abcdefghijklmnopqrstuvwxyz0123456789"[k % 36] * 60 + "\n"
    return f"header {k:08d}\n" + line * (SIZE // len(line))


def token_text(k: int, count: int = 300_000) -> str:
    return f"tok-{k:07d} " * count


def _loop(kind: str, registry: object, paths: list[str]) -> None:
    from janito_core.dispatch import call_tool

    sys.stdout.write(f"go {os.getpid()}\n")
    sys.stdout.flush()
    if kind == "create":
        k = int(open(paths[0], encoding="utf-8").readline().split()[1]) + 1
        while True:
            result = call_tool("CreateFile", {"filepath": paths[0], "content": version_text(k),
                                              "overwrite": True}, registry=registry)
            if not result.get("success"):
                sys.stderr.write(f"CreateFile failed: {result}\n")
                os._exit(3)
            k += 1
    elif kind == "replace":
        k = int(open(paths[0], encoding="utf-8").read(12).split("-")[1])
        while True:
            result = call_tool("ReplaceTextInFile", {
                "filepath": paths[0], "old_str": f"tok-{k:07d} ",
                "new_str": f"tok-{k + 1:07d} ", "replace_all": True,
            }, registry=registry)
            if not result.get("success"):
                sys.stderr.write(f"ReplaceTextInFile failed: {result}\n")
                os._exit(3)
            k += 1
    elif kind == "move":
        source, target = paths
        while True:
            result = call_tool("MoveFile", {"source": source, "destination": target},
                               registry=registry)
            if not result.get("success"):
                sys.stderr.write(f"MoveFile failed: {result}\n")
                os._exit(3)
            source, target = target, source
    os._exit(2)


def main() -> None:
    from janito_core import Registry, Workspace
    from janito_core.dispatch import call_tool  # noqa: F401  (imported before forking)

    confined = not (len(sys.argv) > 2 and sys.argv[2] == "--unconfined")
    registry = Registry(workspace=Workspace(sys.argv[1], confined=confined), autoload=(),
                        allowed=None)
    registry.add_toolset("files")
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "fork":
            pid = os.fork()
            if pid == 0:
                try:
                    _loop(words[1], registry, words[2:])
                finally:
                    os._exit(4)
            sys.stdout.write(f"pid {pid}\n")
            sys.stdout.flush()
        elif words[0] == "reap":
            _, status = os.waitpid(int(words[1]), 0)
            sys.stdout.write(f"reaped {words[1]} {status}\n")
            sys.stdout.flush()
        elif words[0] == "quit":
            return


if __name__ == "__main__":
    main()
