"""The cost of the descriptor walk: ReadFile and CreateFile against the path checks they
replaced, in the same process.

The baselines are the previous implementations, kept here only to be measured: the path
a model sent was made absolute with ``os.path.realpath``, checked to start with the
workspace root, and then opened (ReadFile) or written through a temporary file beside it,
fsynced and renamed (CreateFile), all by path string. The new calls walk the path from a
descriptor of the root (``openat2`` first) and act relative to the folder they reached.
Both go through ``call_tool`` and report progress the same way, so the figures are whole
calls as a model makes them (the reports go to /dev/null, so no terminal is measured).
Target: each new call at most 1.3x its baseline (CPU time).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import alternate_calls, exit_status, load_note, verdict

from janito_core import BaseTool, Registry, Workspace, failure, tool
from janito_core.dispatch import call_tool

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def _checked(tool_: BaseTool, path: str) -> str:
    """The previous workspace check: realpath, then a prefix test on the string."""
    root = tool_.workspace.root
    real = os.path.realpath(path if os.path.isabs(path) else os.path.join(root, path))
    if real != root and not real.startswith(root + os.sep):
        raise ValueError("outside")
    return real


@tool(permissions="r")
class PathReadFile(BaseTool):
    """ReadFile as it was: resolved by path string, then opened by path."""

    def run(self, filepath: str, start_line: int = 1, max_lines: int | None = None,
            max_bytes: int = 64_000) -> dict[str, Any]:
        """Read.

        Args:
            filepath: Path.
            start_line: First line.
            max_lines: Most lines.
            max_bytes: Most bytes.
        """
        from janito_files._read import read_range

        real = _checked(self, filepath)
        self.report_start(f"Reading {self.display_path(real)}")
        fd = os.open(real, _READ)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return failure("not a file", "not_a_file")
        os.set_blocking(fd, True)
        result = read_range(fd, info, start_line, max_lines, max_bytes)
        self.report_result(f"Read lines {result['start_line']}-{result['end_line']}")
        return {"success": True, "filepath": filepath, "path": self.display_path(real), **result}


@tool(permissions="w")
class PathCreateFile(BaseTool):
    """CreateFile as it was: a temporary file beside the target by path, fsync, rename."""

    def run(self, filepath: str, content: str, overwrite: bool = False) -> dict[str, Any]:
        """Write.

        Args:
            filepath: Path.
            content: Text.
            overwrite: Replace.
        """
        real = _checked(self, filepath)
        folder = os.path.dirname(real)
        if not os.path.isdir(folder):
            os.makedirs(folder)
        try:
            existing: os.stat_result | None = os.stat(real)
        except FileNotFoundError:
            existing = None
        if existing is not None and not overwrite:
            return failure("exists", "file_exists")
        data = content.encode("utf-8")
        self.report_start(f"Writing {self.display_path(real)} ({len(data)} bytes)")
        temp = os.path.join(folder, f".{os.path.basename(real)}.{os.urandom(4).hex()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            os.write(fd, data)
            if existing is not None:
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(temp, real)
        else:
            try:
                os.link(temp, real)
            except FileExistsError:
                os.unlink(temp)
                return failure("exists", "file_exists")
            os.unlink(temp)
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)
        self.report_result(f"Replaced {self.display_path(real)}")
        return {"success": True, "filepath": filepath, "path": self.display_path(real),
                "created": existing is None, "bytes": len(data)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--target", type=float, default=1.3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="janito-bench-ws-"))
    try:
        (folder / "src" / "janito" / "tools").mkdir(parents=True)
        text = "".join(f"line {n}: some text of a source file\n" for n in range(200))
        (folder / "src" / "janito" / "tools" / "module.py").write_text(text)
        registry = Registry(workspace=Workspace(folder), autoload=(), allowed=None)
        registry.add_toolset("files")
        registry.add_tool(PathReadFile)
        registry.add_tool(PathCreateFile)
        read = {"filepath": "src/janito/tools/module.py"}
        write = {"filepath": "src/janito/tools/out.txt", "content": text, "overwrite": True}
        for name, arguments in (("ReadFile", read), ("PathReadFile", read),
                                ("CreateFile", write), ("PathCreateFile", write)):
            result = call_tool(name, arguments, registry=registry)
            assert result["success"] is True, (name, result)
        quiet = open(os.devnull, "w")
        saved, sys.stderr = sys.stderr, quiet
        try:
            medians = alternate_calls({
                "ReadFile (path check)": lambda: call_tool("PathReadFile", read,
                                                           registry=registry),
                "ReadFile (descriptor)": lambda: call_tool("ReadFile", read, registry=registry),
                "CreateFile (path check)": lambda: call_tool("PathCreateFile", write,
                                                             registry=registry),
                "CreateFile (descriptor)": lambda: call_tool("CreateFile", write,
                                                             registry=registry),
            }, args.number, args.repeat)
        finally:
            sys.stderr = saved
            quiet.close()
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    print(f"workspace, medians of {args.repeat} interleaved repeats of {args.number} calls; "
          f"{load_note()}")
    print(f"  {'':<26} {'wall':>10} {'CPU':>10}")
    for name, value in medians.items():
        print(f"  {name:<26} {value.wall * 1e6:7.1f} µs {value.cpu * 1e6:7.1f} µs")
    verdicts = []
    for label in ("ReadFile", "CreateFile"):
        new, old = medians[f"{label} (descriptor)"], medians[f"{label} (path check)"]
        ratio = new.cpu / old.cpu
        print(f"{label}: {ratio:.2f}x the path-check call in CPU time ({new.wall / old.wall:.2f}x "
              f"wall; target at most {args.target:g}x): {verdict(ratio, args.target)}")
        verdicts.append(verdict(ratio, args.target))
    return exit_status(*verdicts)


if __name__ == "__main__":
    if sys.platform != "linux":
        print("the descriptor walk is measured on Linux only")
        sys.exit(0)
    sys.exit(main())
