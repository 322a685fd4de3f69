"""What capturing code's changes costs a run: ``RunBashCode("true")``'s launch, four ways.

For a workspace of 100 files and one of 10,000 (100 folders of 100), each measured
variant starts ``bash -c true`` in bubblewrap as the policy workspace-write runs it
(``_sandbox.bwrap_argv``), and does what its way of capturing needs around it:

- plain: nothing (the launch of today, the baseline of the ratios);
- overlay: the call's layers made, the overlay mounted before bubblewrap by ``unshare``
  and ``mount`` (``_overlay.wrap_bwrap``), the upper layer read with ``changes()`` against
  the workspace, the layers removed;
- overlay, Python launcher: the same mount made by ``python -I -S`` through ctypes
  instead of unshare, sh and mount (the other way to launch it, for the record);
- manifest: the workspace walked and every entry ``lstat``ed before and after, the two
  compared (what a snapshot costs at least; it keeps no content to restore);
- hard-link farm: every file linked into a farm beside the workspace before, the workspace
  walked and compared with the farm after, the farm removed (keeps old content cheaply,
  except for files written in place, which share the inode with their link).

No verdict: the numbers are for docs/decisions/0015-capturing-code-changes.md. Ratios are
against the plain launch measured in the same run, variants interleaved batch by batch;
medians. Wall time is what a user waits (namespaces and mounts are kernel work janito
waits on); the CPU column is janito's and its children's.

    python bench/bench_code_capture.py [--number 10] [--repeat 11]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable

from _common import Timing, alternate_calls, load_note

SIZES = ((100, 1), (10_000, 100))
"""(files, folders they are spread over)."""

# The ctypes launcher: what unshare, sh and mount do, in one Python process.
PYTHON_LAUNCHER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def check(result, what):
    if result != 0:
        raise OSError(ctypes.get_errno(), what)
uid, gid = os.getuid(), os.getgid()
flags = 0x00020000 | (0x10000000 if uid else 0)  # CLONE_NEWNS, and CLONE_NEWUSER unless root
check(libc.unshare(flags), "unshare")
if uid:
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                       ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)
check(libc.mount(b"none", b"/", None, 0x40000 | 0x4000, None), "private")
workspace, upper, work = sys.argv[1:4]
os.chdir(workspace)
options = f"lowerdir=.,upperdir={upper},workdir={work},userxattr".encode()
check(libc.mount(b"janito", workspace.encode(), b"overlay", 0, options), "mount")
os.chdir(workspace)
os.execv(sys.argv[4], sys.argv[4:])
"""



def make_workspace(files: int, folders: int) -> str:
    root = os.path.realpath(tempfile.mkdtemp(prefix="janito-bench-capture-"))
    for folder in range(folders):
        path = os.path.join(root, f"pkg{folder}") if folders > 1 else root
        os.makedirs(path, exist_ok=True)
        for name in range(files // folders):
            with open(os.path.join(path, f"m{name}.py"), "w") as handle:
                handle.write("x = 1\n")
    return root


def manifest(root: str) -> dict[str, tuple[int, int, int, int]]:
    """Every path below ``root``: (mode, inode, size, mtime in ns), links not followed."""
    seen = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                seen[entry.path] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return seen


def link_farm(root: str, farm: str) -> None:
    """A hard link in ``farm`` of every file below ``root``, folders made alike."""
    for folder, _folders, files in os.walk(root):
        mirror = os.path.join(farm, os.path.relpath(folder, root))
        os.makedirs(mirror, exist_ok=True)
        for name in files:
            os.link(os.path.join(folder, name), os.path.join(mirror, name))


def farm_differs(root: str, farm: str) -> list[str]:
    """Paths whose entry is not the farm's (another inode, size or time), or is new or gone."""
    now, then = manifest(root), manifest(farm)
    before = {os.path.relpath(path, farm): look for path, look in then.items()}
    different = []
    for path, look in now.items():
        name = os.path.relpath(path, root)
        old = before.pop(name, None)
        if old is None or (old[0] & 0o170000 != 0o040000 and old[1:] != look[1:]):
            different.append(name)
    return different + list(before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=10, help="calls per batch")
    parser.add_argument("--repeat", type=int, default=11, help="interleaved batches")
    args = parser.parse_args()

    from janito_system import _overlay, _sandbox

    from janito_core.sandbox import SandboxPolicy

    bash = shutil.which("bash")
    bwrap = _sandbox.trusted_bwrap().path
    if bash is None or bwrap is None or _sandbox.bwrap_problem(bwrap, probe=True) is not None:
        print("needs bash and a working trusted bubblewrap: nothing to measure")
        return 1
    problem = _overlay.overlay_available()
    if problem is not None:
        print(f"the overlay cannot be mounted here ({problem}): nothing to measure")
        return 1
    policy = SandboxPolicy("workspace-write", "bench")
    command = [bash, "--noprofile", "--norc", "-c", "true"]
    tmpdir = os.path.realpath(tempfile.mkdtemp(prefix="janito-bench-capture-tmp-"))
    print(f"RunBashCode('true')'s launch, medians of {args.repeat} interleaved batches of "
          f"{args.number}; ratios against the plain launch of the same run")
    try:
        for files, folders in SIZES:
            workspace = make_workspace(files, folders)
            try:
                bwrapped = [*_sandbox.bwrap_argv(bwrap, policy, workspace=workspace,
                                                 tmpdir=tmpdir, cwd=workspace), *command]
                variants = capture_variants(bwrapped, workspace, with_python=files == 100)
                for function in variants.values():  # warm up: page cache, the probe's programs
                    function()
                medians = alternate_calls(variants, args.number, args.repeat, children=True)
            finally:
                shutil.rmtree(workspace, ignore_errors=True)
            report(f"{files:,} files", medians)
        through_call_tool(args.number, args.repeat)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


def through_call_tool(number: int, repeat: int) -> None:
    """The whole call, as a model's call pays it: RunBashCode through ``call_tool`` with no
    journal (nothing captured) against a journaled registry (the overlay mounted, the
    upper layer read, its changes made through the journaled workspace)."""
    from janito_core import Privileges, Registry, Workspace
    from janito_core.dispatch import call_tool
    from janito_core.journal import Journal

    os.environ["JANITO_SANDBOX"] = "workspace-write"
    os.environ["JANITO_SANDBOX_MECHANISM"] = "bubblewrap"
    base = tempfile.mkdtemp(prefix="janito-bench-capture-calls-")
    os.environ["JANITO_CONFIG_DIR"] = os.path.join(base, "config")
    workspace = make_workspace(100, 1)
    try:
        def registry(journal: Journal | None) -> Registry:
            made = Registry(privileges=Privileges.from_string("rwx"),
                            workspace=Workspace(workspace), autoload=(), allowed=None,
                            journal=journal, reports="off")
            made.add_toolset("system")
            return made

        plain, journaled = registry(None), registry(Journal(os.path.join(base, "journal")))

        def call(on: Registry, code: str) -> Callable[[], object]:
            def run() -> object:
                result = call_tool("RunBashCode", {"code": code}, registry=on)
                assert result["success"], result
                return result
            return run

        write = "echo x > out.txt"
        variants = {"plain bwrap": call(plain, "true"), "captured": call(journaled, "true"),
                    "plain, one write": call(plain, write),
                    "captured, one write": call(journaled, write)}
        for function in variants.values():
            function()
        medians = alternate_calls(variants, number, repeat, children=True)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)
    report("RunBashCode through call_tool, 100 files, journal off (plain) and on (captured)",
           medians)
    written = medians["captured, one write"].ratio(medians["plain, one write"])
    print(f"  one write: captured {written.wall:.2f}x wall, {written.cpu:.2f}x CPU of plain")


def capture_variants(bwrapped: list[str], workspace: str, *, with_python: bool
                     ) -> dict[str, Callable[[], object]]:
    from janito_system import _overlay

    def launch(argv: list[str]) -> None:
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def plain() -> object:
        return launch(bwrapped)

    def overlaid(python: bool) -> Callable[[], object]:
        def run() -> object:
            layers = _overlay.make_layers(workspace)
            try:
                if python:
                    argv = [sys.executable, "-I", "-S", "-c", PYTHON_LAUNCHER, workspace,
                            layers.upper, layers.work, bwrapped[0],
                            *_overlay.bwrap_user_options(), *bwrapped[1:]]
                else:
                    argv = _overlay.wrap_bwrap(bwrapped, workspace, layers)
                launch(argv)
                found = _overlay.changes(layers.upper, workspace)
            finally:
                _overlay.remove_layers(layers)
            if found:
                raise SystemExit(f"`true` changed the workspace? {found}")
            return found
        return run

    def manifested() -> object:
        before = manifest(workspace)
        launch(bwrapped)
        if manifest(workspace) != before:
            raise SystemExit("`true` changed the workspace?")
        return before

    def farmed() -> object:
        farm = tempfile.mkdtemp(prefix="janito-bench-farm-", dir=os.path.dirname(workspace))
        try:
            link_farm(workspace, farm)
            launch(bwrapped)
            different = farm_differs(workspace, farm)
        finally:
            shutil.rmtree(farm, ignore_errors=True)
        if different:
            raise SystemExit(f"`true` changed the workspace? {different[:3]}")
        return different

    variants: dict[str, Callable[[], object]] = {"plain bwrap": plain,
                                                 "overlay (unshare+mount)": overlaid(False)}
    if with_python:
        variants["overlay (Python launcher)"] = overlaid(True)
    variants["manifest (walk+lstat x2)"] = manifested
    variants["hard-link farm"] = farmed
    return variants


def report(title: str, medians: dict[str, Timing]) -> None:
    print(f"{title}; {load_note()}")
    print(f"  {'':<28} {'wall':>9} {'CPU':>9} {'wall x':>7} {'CPU x':>6}")
    base = medians["plain bwrap"]
    for name, value in medians.items():
        ratio = value.ratio(base)
        print(f"  {name:<28} {value.wall * 1e3:6.2f} ms {value.cpu * 1e3:6.2f} ms "
              f"{ratio.wall:6.2f}x {ratio.cpu:5.2f}x")


if __name__ == "__main__":
    sys.exit(main())
