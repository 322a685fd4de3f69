"""The cost of the sandbox: ``RunBashCode("true")`` through ``call_tool`` under each policy.

Target (issue 17): the sandboxed call (the default policy, workspace-write) at most 1.5x
the unsandboxed one (policy ``off``: no filesystem or network restriction, processes
still contained), both with the mechanism this machine would use. Also printed, for the
record: the supervisor fallback (Landlock and seccomp, when bubblewrap is not used) and
the bare process start the run tools made before processes were contained (the child in
its own process group, nothing more), measured with the same output loop.

Then, without janito around them, the process starts behind each mechanism (``bash -c
true`` alone, in bubblewrap as each policy runs it, under the supervisor, and a bare
``python -I -S``), which is what docs/decisions/0006 compares.

Runs are interleaved variant by variant; medians. Wall time is the verdict here, not
CPU time as in the other benchmarks: what the sandbox costs is mostly the kernel setting
up and tearing down namespaces, during which janito waits rather than computes, so the
CPU time of janito and its children (printed beside it) understates what a user waits.

    python bench/bench_sandbox.py [--number 20] [--repeat 15]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from _common import Timing, alternate_calls, exit_status, load_note, verdict

from janito_core import Privileges, Registry, Workspace
from janito_core.dispatch import call_tool

TARGET = 1.5



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=20, help="calls per batch")
    parser.add_argument("--repeat", type=int, default=15, help="interleaved batches")
    args = parser.parse_args()

    from janito_system import _sandbox
    from janito_system._process import run_process

    from janito_core.sandbox import SandboxPolicy

    workspace = tempfile.mkdtemp(prefix="janito-bench-sandbox-")
    registry = Registry(privileges=Privileges.from_string("x"), workspace=Workspace(workspace),
                        autoload=(), allowed=None)
    registry.add_toolset("system")
    bash = shutil.which("bash")
    if bash is None:
        print("bash is not on PATH: nothing to measure")
        return 1

    def call(policy: str, mechanism: str) -> Callable[[], object]:
        def run() -> object:
            os.environ["JANITO_SANDBOX"] = policy
            os.environ[_sandbox.MECHANISM_ENV] = mechanism
            result = call_tool("RunBashCode", {"code": "true"}, registry=registry)
            if not result.get("success"):
                raise SystemExit(f"RunBashCode failed under {policy} ({mechanism}): {result}")
            return result
        return run

    def bare() -> object:
        return run_process([bash, "--noprofile", "--norc", "-c", "true"], cwd=workspace,
                           timeout=60)

    auto = _sandbox.choose(SandboxPolicy("workspace-write", "bench"), probe=True).mechanism
    variants: dict[str, Callable[[], object]] = {}
    if auto is not None:
        variants["workspace-write (" + auto + ")"] = call("workspace-write", "auto")
        variants["off (" + auto + ")"] = call("off", "auto")
    os.environ[_sandbox.MECHANISM_ENV] = "supervisor"
    supervised = _sandbox.choose(SandboxPolicy("workspace-write", "bench"), probe=True)
    if auto != "supervisor" and supervised.mechanism == "supervisor":
        variants["workspace-write (supervisor)"] = call("workspace-write", "supervisor")
        variants["off (supervisor)"] = call("off", "supervisor")
    variants["bare process group, no call_tool"] = bare
    # the tools' progress reports go to stderr: not what is measured, and not worth reading
    with open(os.devnull, "w") as quiet, contextlib.redirect_stderr(quiet):
        for function in variants.values():  # warm up: imports, probes, page cache
            function()
        try:
            medians = alternate_calls(variants, args.number, args.repeat, children=True)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)

    print(f"RunBashCode('true'), medians of {args.repeat} interleaved batches of {args.number} "
          f"calls; {load_note()}")
    print(f"  {'':<36} {'wall':>9} {'CPU (janito + children)':>24}")
    for name, value in medians.items():
        print(f"  {name:<36} {value.wall * 1e3:6.2f} ms {value.cpu * 1e3:21.2f} ms")
    if auto is None:
        print("no sandbox mechanism works here: the target cannot be measured")
        return 1
    sandboxed = medians[f"workspace-write ({auto})"]
    unsandboxed = medians[f"off ({auto})"]
    ratio = sandboxed.ratio(unsandboxed)
    base = medians["bare process group, no call_tool"]
    print(f"workspace-write / off with {auto}: {ratio.wall:.2f}x wall, {ratio.cpu:.2f}x CPU "
          f"(target at most {TARGET}x in wall time): {verdict(ratio.wall, TARGET)}")
    print(f"for the record, against the bare start of before: workspace-write "
          f"{sandboxed.wall / base.wall:.2f}x wall ({sandboxed.cpu / base.cpu:.2f}x CPU), "
          f"off {unsandboxed.wall / base.wall:.2f}x wall ({unsandboxed.cpu / base.cpu:.2f}x CPU)")
    if "workspace-write (supervisor)" in medians:
        fallback = medians["workspace-write (supervisor)"]
        print(f"the supervisor fallback: workspace-write {fallback.wall * 1e3:.2f} ms, "
              f"{fallback.wall / unsandboxed.wall:.2f}x the off call with {auto}")
    starts(args.repeat * 4, bash, auto)
    if auto == "bubblewrap":
        masked(args.number, args.repeat)
    return exit_status(verdict(ratio.wall, TARGET))


def masked(number: int, repeat: int) -> None:
    """Print what a policy's path mask costs a call: its workspace walked for the paths
    the policy hides (10,000 files in 100 folders, 10 of them hidden), and a mount per
    hidden path, against the same call with no policy."""
    from janito_core.policy import Policy

    workspace = tempfile.mkdtemp(prefix="janito-bench-mask-")
    for folder in range(100):
        path = os.path.join(workspace, f"pkg{folder}")
        os.mkdir(path)
        for name in range(100):
            with open(os.path.join(path, f"m{name}.py"), "w") as handle:
                handle.write("x = 1\n")
        if folder % 10 == 0:
            with open(os.path.join(path, ".env"), "w") as handle:
                handle.write("TOKEN=1\n")
    os.mkdir(os.path.join(workspace, ".git"))
    policy = Policy.from_data({"rules": [{"action": "deny", "paths": [".env"]}]})
    registries = {}
    for name, chosen in (("no policy", None), ("deny .env (10 of 10,000 files)", policy)):
        made = Registry(privileges=Privileges.from_string("x"), workspace=Workspace(workspace),
                        autoload=(), allowed=None, policy=chosen, reports="off")
        made.add_toolset("system")
        registries[name] = made

    def call(registry: Registry) -> Callable[[], object]:
        def run() -> object:
            result = call_tool("RunBashCode", {"code": "true"}, registry=registry)
            if not result.get("success"):
                raise SystemExit(f"RunBashCode failed: {result}")
            return result
        return run

    os.environ["JANITO_SANDBOX"] = "workspace-write"
    os.environ.pop("JANITO_SANDBOX_MECHANISM", None)
    variants = {name: call(registry) for name, registry in registries.items()}
    try:
        for function in variants.values():
            function()
        medians = alternate_calls(variants, number, repeat, children=True)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    print(f"RunBashCode('true') under bubblewrap with a policy's path mask, medians of "
          f"{repeat} interleaved batches of {number} calls; {load_note()}")
    for name, value in medians.items():
        print(f"  {name:<36} {value.wall * 1e3:6.2f} ms {value.cpu * 1e3:13.2f} ms")
    plain, with_mask = medians.values()
    ratio = with_mask.ratio(plain)
    print(f"the mask: {ratio.wall:.2f}x wall, {ratio.cpu:.2f}x CPU of the call without a policy")


def starts(runs: int, bash: str, auto: str | None) -> None:
    """Print what starting ``bash -c true`` costs behind each mechanism, without janito."""
    from janito_system import _sandbox
    from janito_system._supervisor import DEVICE_FILES, options

    from janito_core.sandbox import SandboxPolicy

    folder = os.path.realpath(tempfile.mkdtemp(prefix="janito-bench-starts-"))
    command = [bash, "--noprofile", "--norc", "-c", "true"]
    commands: dict[str, Callable[[], list[str]]] = {"bash -c true": lambda: command}
    bwrap = _sandbox.trusted_bwrap().path
    if auto == "bubblewrap" and bwrap is not None:
        for name in ("workspace-write", "workspace-write+network", "off"):
            policy = SandboxPolicy(name, "bench")
            tmpdir = folder if policy.confined else None
            argv = [*_sandbox.bwrap_argv(bwrap, policy, workspace=folder, tmpdir=tmpdir,
                                         cwd=folder), *command]
            commands[f"bwrap, {name}"] = lambda argv=argv: argv
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, True)
    python = _sandbox.trusted_python().path
    code_fds: list[int] = []
    if python is not None:
        for name, confine in (("workspace-write", True), ("off", False)):
            settings = {"parent": os.getpid(), "control": read_end, "cwd": folder,
                        "confine": confine, "write": [folder], "devices": list(DEVICE_FILES)}

            def supervised(settings: dict[str, object] = settings) -> list[str]:
                # the supervisor reads its code from a pipe, once: a new pipe per start
                code = _sandbox.code_pipe()
                os.set_inheritable(code, True)
                code_fds.append(code)
                return [*_sandbox.supervisor_command(python, code), *options(settings), "--",
                        *command]

            commands[f"supervisor, {name}"] = supervised
    commands["python -I -S -c pass"] = lambda: [sys.executable, "-I", "-S", "-c", "pass"]
    try:
        medians = alternate_with_fds(commands, runs, read_end, code_fds)
    finally:
        os.close(read_end)
        os.close(write_end)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"starting bash -c true, medians of {runs} interleaved runs; {load_note()}")
    print(f"  {'':<36} {'wall':>9} {'CPU (children)':>16}")
    for name, value in medians.items():
        print(f"  {name:<36} {value.wall * 1e3:6.2f} ms {value.cpu * 1e3:13.2f} ms")


def alternate_with_fds(commands: dict[str, Callable[[], list[str]]], runs: int, fd: int,
                       code_fds: list[int]) -> dict[str, Timing]:
    """Median wall and children-CPU time of each command (``fd`` passed on), interleaved;
    ``code_fds`` collects the descriptors a command line made, closed after its run."""
    import subprocess

    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, make in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            argv = make()
            subprocess.run(argv, check=True, pass_fds=(fd, *code_fds), stdout=subprocess.DEVNULL)
            walls[name].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            while code_fds:
                os.close(code_fds.pop())
    return {name: Timing(statistics.median(walls[name]), statistics.median(cpus[name]))
            for name in commands}


if __name__ == "__main__":
    sys.exit(main())
