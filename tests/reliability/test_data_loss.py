"""No data lost: writers killed with SIGKILL, failed edits, moves across filesystems.

The kills land on real processes: a zygote (``rel_zygote.py``) imports janito once and
forks, for each cycle, a child that writes a multi-megabyte file through ``call_tool`` in a
loop; the test kills the child with SIGKILL after a random delay (seeded, so every run
draws the same delays) and then reads the file: it must be one complete version, never a
mix or a truncation. Only hidden temporary files (``.NAME.XXXXXXXX.tmp``) may be left
behind, which the files toolset documents.
"""

from __future__ import annotations

import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel
from rel_zygote import token_text, version_text

from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool

CYCLES = int(os.environ.get("JANITO_RELIABILITY_KILL_CYCLES", "100"))
MOVE_CYCLES = max(10, CYCLES // 3)
ZYGOTE = Path(__file__).with_name("rel_zygote.py")


def temp_files(folder: Path, name: str) -> list[Path]:
    pattern = re.compile(rf"^\.{re.escape(name)}\.[0-9a-f]{{8}}\.tmp$")
    return [p for p in folder.iterdir() if pattern.match(p.name)]


class Zygote:
    def __init__(self, workspace: Path, log: Path, *, unconfined: bool = False) -> None:
        self.log = log.open("w", encoding="utf-8")
        args = [sys.executable, str(ZYGOTE), str(workspace)] + (["--unconfined"] if unconfined else [])
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env, cwd=workspace)
        assert self.readline() == "ready"

    def readline(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the zygote stopped"
        return line.strip()

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def fork(self, *words: str) -> int:
        """Fork a writer; return its pid once it is about to make its first call."""
        self.send("fork " + " ".join(words))
        first, second = self.readline(), self.readline()
        lines = {first.split()[0]: first, second.split()[0]: second}
        pid = int(lines["pid"].split()[1])
        assert int(lines["go"].split()[1]) == pid
        return pid

    def kill(self, pid: int) -> int:
        os.kill(pid, signal.SIGKILL)
        self.send(f"reap {pid}")
        line = self.readline()
        assert line.startswith(f"reaped {pid} "), line
        return int(line.split()[2])

    def close(self) -> str:
        self.send("quit")
        try:
            self.proc.wait(timeout=30)
        finally:
            self.log.close()
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")


def kill_cycles(zygote: Zygote, kind: str, paths: list[str], cycles: int, seed: int,
                check: Any) -> Counter[str]:
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    for cycle in range(cycles):
        pid = zygote.fork(kind, *paths)
        time.sleep(rng.uniform(0, 0.15))
        status = zygote.kill(pid)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
            f"cycle {cycle}: the writer ended by itself (status {status}); see the zygote log")
        outcomes[check(cycle)] += 1
        rel.count(f"kill cycles: {kind}")
        rel.count("kill cycles")
    return outcomes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_create_file_killed_at_random_moments(workspace: Path, tmp_path: Path) -> None:
    target = workspace / "big.txt"
    target.write_text(version_text(0), encoding="utf-8")
    zygote = Zygote(workspace, tmp_path / "zygote.log")
    seen = {"last": 0}

    def check(cycle: int) -> str:
        data = target.read_text(encoding="utf-8")
        header = data[:16]
        assert header.startswith("header "), f"cycle {cycle}: torn file starting {data[:40]!r}"
        k = int(header.split()[1])
        assert data == version_text(k), f"cycle {cycle}: version {k} is incomplete or mixed"
        assert k >= seen["last"], f"cycle {cycle}: went back from version {seen['last']} to {k}"
        outcome = "new" if k > seen["last"] else "old"
        seen["last"] = k
        for leftover in temp_files(workspace, "big.txt"):
            leftover.unlink()
            rel.count("kill cycles: hidden temporary files left and removed")
        assert sorted(p.name for p in workspace.iterdir()) == ["big.txt"]
        return outcome

    try:
        outcomes = kill_cycles(zygote, "create", ["big.txt"], CYCLES, 1, check)
    finally:
        log = zygote.close()
    rel.SWEEP.check(log, "zygote stderr")
    assert "failed" not in log, log[-2000:]
    rel.count("kill cycles: create, file left at the old version", outcomes["old"])
    rel.count("kill cycles: create, file left at a new version", outcomes["new"])


def test_replace_text_killed_at_random_moments(workspace: Path, tmp_path: Path) -> None:
    target = workspace / "tokens.txt"
    count = 300_000
    target.write_text(token_text(0, count), encoding="utf-8")
    zygote = Zygote(workspace, tmp_path / "zygote.log")
    seen = {"last": 0}

    def check(cycle: int) -> str:
        data = target.read_text(encoding="utf-8")
        k = int(data[4:11])
        assert data == token_text(k, count), f"cycle {cycle}: mixed or truncated tokens"
        assert k >= seen["last"]
        outcome = "new" if k > seen["last"] else "old"
        seen["last"] = k
        for leftover in temp_files(workspace, "tokens.txt"):
            leftover.unlink()
            rel.count("kill cycles: hidden temporary files left and removed")
        assert sorted(p.name for p in workspace.iterdir()) == ["tokens.txt"]
        return outcome

    try:
        outcomes = kill_cycles(zygote, "replace", ["tokens.txt"], CYCLES, 2, check)
    finally:
        log = zygote.close()
    assert "failed" not in log, log[-2000:]
    rel.count("kill cycles: replace, file left at the old version", outcomes["old"])
    rel.count("kill cycles: replace, file left at a new version", outcomes["new"])


# -- failed edits leave the file untouched -------------------------------------------------------


def state(path: Path) -> tuple[Any, ...]:
    info = path.stat()
    return (path.read_bytes(), info.st_mtime_ns, info.st_mode, info.st_ino)


FAILING_EDITS = [
    ("text not found", {"old_str": "absent", "new_str": "x"}, "text_not_found"),
    ("several matches", {"old_str": "line", "new_str": "x"}, "multiple_matches"),
    ("empty search", {"old_str": "", "new_str": "x"}, "invalid_arguments"),
    ("wrong types", {"old_str": ["first"], "new_str": "x"}, "invalid_arguments"),
    ("unknown field", {"old_str": "first", "new_str": "x", "mode": "w"}, "invalid_arguments"),
]


def test_a_lone_surrogate_in_a_replacement_is_written_as_u_fffd(workspace: Path) -> None:
    """No UTF-8 file can hold a lone surrogate: dispatch takes it as U+FFFD
    (docs/dispatch.md), so the edit is made and the file stays valid UTF-8."""
    target = workspace / "edit.txt"
    target.write_text("first line\nsecond line\n", encoding="utf-8")
    registry = rel.make_registry(workspace, "rw", ("files",))
    result = rel.swept(call_tool("ReplaceTextInFile", {"filepath": "edit.txt", "old_str": "first",
                                                       "new_str": "\ud800"},
                                 registry=registry), "ReplaceTextInFile")
    assert result["success"] is True, result
    assert target.read_bytes() == "\ufffd line\nsecond line\n".encode()
    assert sorted(p.name for p in workspace.iterdir()) == ["edit.txt"]


@pytest.mark.parametrize(("label", "args", "error_type"), FAILING_EDITS,
                         ids=[f[0] for f in FAILING_EDITS])
def test_a_failed_replace_leaves_the_file_untouched(label: str, args: dict[str, Any],
                                                    error_type: str | None, workspace: Path) -> None:
    target = workspace / "edit.txt"
    target.write_text("first line\nsecond line\n", encoding="utf-8")
    os.chmod(target, 0o640)
    before = state(target)
    registry = rel.make_registry(workspace, "rw", ("files",))
    result = rel.swept(call_tool("ReplaceTextInFile", {"filepath": "edit.txt", **args},
                                 registry=registry), "ReplaceTextInFile")
    assert result["success"] is False, result
    if error_type:
        assert result["error_type"] == error_type, result
    assert state(target) == before
    assert sorted(p.name for p in workspace.iterdir()) == ["edit.txt"]
    rel.count("failed edits checked")


def test_a_binary_file_is_not_edited(workspace: Path) -> None:
    target = workspace / "data.bin"
    target.write_bytes(b"first\x00line\n" * 100)
    before = state(target)
    registry = rel.make_registry(workspace, "rw", ("files",))
    result = call_tool("ReplaceTextInFile", {"filepath": "data.bin", "old_str": "first",
                                             "new_str": "x", "replace_all": True},
                       registry=registry)
    assert result["success"] is False and result["error_type"] == "binary_file", result
    assert state(target) == before
    rel.count("failed edits checked")


WRITE_UNDER_LIMIT = r'''
import json, resource, signal, sys
from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # writing past the limit fails with EFBIG
registry = Registry(workspace=Workspace(sys.argv[1], confined=sys.argv[2] == "confined"),
                    autoload=(), allowed=None)
registry.add_toolset("files")
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
print(json.dumps(call_tool(sys.argv[4], json.loads(sys.stdin.read()), registry=registry)))
'''


def write_under_limit(workspace: Path | str, tool: str, args: dict[str, Any], limit: int,
                      confined: bool = True) -> dict[str, Any]:
    """Run one call in a process that may not write files larger than ``limit`` bytes."""
    import json

    done = subprocess.run([sys.executable, "-c", WRITE_UNDER_LIMIT, str(workspace),
                           "confined" if confined else "unconfined", str(limit), tool],
                          input=json.dumps(args), capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    rel.SWEEP.check(done.stdout + done.stderr, "write under limit")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_replace_that_cannot_be_written_leaves_the_file_untouched(workspace: Path) -> None:
    """The new content does not fit (EFBIG): the call fails and the old file stays whole."""
    target = workspace / "grow.txt"
    target.write_text("x" * 50_000, encoding="utf-8")
    before = state(target)
    result = write_under_limit(workspace, "ReplaceTextInFile",
                               {"filepath": "grow.txt", "old_str": "x", "new_str": "yy",
                                "replace_all": True}, limit=80_000)
    assert result["success"] is False, result
    assert state(target) == before
    assert sorted(p.name for p in workspace.iterdir()) == ["grow.txt"], list(workspace.iterdir())
    result = write_under_limit(workspace, "CreateFile",
                               {"filepath": "grow.txt", "content": "z" * 200_000, "overwrite": True},
                               limit=80_000)
    assert result["success"] is False, result
    assert state(target) == before
    assert sorted(p.name for p in workspace.iterdir()) == ["grow.txt"]
    rel.count("failed edits checked", 2)


# -- moves across filesystems -------------------------------------------------------------------


def other_filesystem(near: Path) -> Path | None:
    for candidate in ("/dev/shm", os.environ.get("XDG_RUNTIME_DIR") or "/run/user"):
        folder = Path(candidate)
        try:
            if folder.is_dir() and os.access(folder, os.W_OK) and \
                    os.stat(folder).st_dev != os.stat(near).st_dev:
                return folder
        except OSError:
            continue
    return None


@pytest.fixture
def far(tmp_path: Path) -> Any:
    base = other_filesystem(tmp_path)
    if base is None:
        pytest.skip("no second writable filesystem (such as /dev/shm on tmpfs) next to "
                    f"{tmp_path}: a move across filesystems cannot be made here")
    folder = Path(os.path.realpath(base)) / f"janito-rel-{os.getpid()}-{tmp_path.name}"
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def unconfined(root: Path) -> Registry:
    registry = Registry(workspace=Workspace(root, confined=False), autoload=(), allowed=None)
    rel.watch(registry)
    registry.add_toolset("files")
    return registry


def test_move_across_filesystems(workspace: Path, far: Path) -> None:
    registry = unconfined(workspace)
    payload = os.urandom(5 * 1024 * 1024)
    (workspace / "a.bin").write_bytes(payload)
    tree = workspace / "tree"
    (tree / "deep").mkdir(parents=True)
    (tree / "deep" / "f.txt").write_text("deep\n", encoding="utf-8")
    os.symlink("deep/f.txt", tree / "link")
    result = call_tool("MoveFile", {"source": str(workspace / "a.bin"), "destination": str(far / "a.bin")},
                       registry=registry)
    assert result["success"] is True and result["method"] == "copy", result
    assert (far / "a.bin").read_bytes() == payload and not (workspace / "a.bin").exists()
    result = call_tool("MoveFile", {"source": str(tree), "destination": str(far / "tree")},
                       registry=registry)
    assert result["success"] is True, result
    assert (far / "tree" / "deep" / "f.txt").read_text(encoding="utf-8") == "deep\n"
    assert os.readlink(far / "tree" / "link") == "deep/f.txt" and not tree.exists()
    # an existing destination is kept without overwrite, and the source with it
    (workspace / "b.txt").write_text("b\n", encoding="utf-8")
    (far / "b.txt").write_text("keep\n", encoding="utf-8")
    result = call_tool("MoveFile", {"source": str(workspace / "b.txt"), "destination": str(far / "b.txt")},
                       registry=registry)
    assert result["success"] is False and result["error_type"] == "file_exists", result
    assert (workspace / "b.txt").read_text(encoding="utf-8") == "b\n"
    assert (far / "b.txt").read_text(encoding="utf-8") == "keep\n"
    rel.count("moves across filesystems checked", 3)


def test_a_move_across_filesystems_that_cannot_finish_keeps_the_source(workspace: Path, far: Path) -> None:
    """The copy fails part-way (EFBIG): the source stays whole, no partial destination."""
    payload = b"y" * 300_000
    (workspace / "big.bin").write_bytes(payload)
    result = write_under_limit(workspace, "MoveFile", {"source": str(workspace / "big.bin"),
                                                       "destination": str(far / "big.bin")},
                               limit=100_000, confined=False)
    assert result["success"] is False, result
    assert result.get("source_kept") is True, result
    assert (workspace / "big.bin").read_bytes() == payload
    assert list(far.iterdir()) == [], list(far.iterdir())
    rel.count("moves across filesystems checked")


def test_move_across_filesystems_killed_at_random_moments(workspace: Path, far: Path,
                                                           tmp_path: Path) -> None:
    payload = os.urandom(16 * 1024 * 1024)
    near_file, far_file = workspace / "m.bin", far / "m.bin"
    near_file.write_bytes(payload)
    zygote = Zygote(workspace, tmp_path / "zygote.log", unconfined=True)

    def check(cycle: int) -> str:
        near_ok = near_file.exists() and near_file.read_bytes() == payload
        far_ok = far_file.exists() and far_file.read_bytes() == payload
        assert near_ok or far_ok, f"cycle {cycle}: no complete copy of the file is left"
        for folder in (workspace, far):
            for leftover in temp_files(folder, "m.bin"):
                leftover.unlink()
                rel.count("kill cycles: hidden temporary files left and removed")
        # a partial file under the real name would be data loss in disguise
        for path in (near_file, far_file):
            if path.exists():
                assert path.read_bytes() == payload, f"cycle {cycle}: {path} is incomplete"
        outcome = "both" if near_ok and far_ok else ("near" if near_ok else "far")
        if outcome == "both":
            far_file.unlink()
        if not near_file.exists():
            shutil.copyfile(far_file, near_file)
            far_file.unlink()
        assert near_file.read_bytes() == payload
        return outcome

    try:
        outcomes = kill_cycles(zygote, "move", [str(near_file), str(far_file)], MOVE_CYCLES, 3, check)
    finally:
        log = zygote.close()
    assert "failed" not in log, log[-2000:]
    for outcome, n in outcomes.items():
        rel.count(f"kill cycles: move, copies left: {outcome}", n)


def test_the_limit_helper_really_limits(workspace: Path) -> None:
    """Guard for the EFBIG tests: the limit is enforced in the child, not here."""
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY or \
        resource.getrlimit(resource.RLIMIT_FSIZE)[0] > 10**9
    result = write_under_limit(workspace, "CreateFile", {"filepath": "n.txt", "content": "q" * 1000},
                               limit=100)
    assert result["success"] is False and not (workspace / "n.txt").exists(), result


# -- the secrets store ----------------------------------------------------------------------------

SECRET_CYCLES = max(10, CYCLES // 4)


def stored_secrets(config: Path) -> dict[str, str]:
    """The file store as JSON (the environment overrides of the suite are not in it)."""
    import json

    data: dict[str, str] = json.loads((config / "secrets.json").read_text(encoding="utf-8"))
    return data


def test_secrets_set_from_16_threads_and_4_processes_lose_nothing(isolated: Path) -> None:
    from helpers.concurrent_secrets import set_from_processes, set_from_threads

    names = set_from_threads(threads=16, each=10)
    names += set_from_processes(isolated, processes=4, each=25)
    stored = stored_secrets(isolated)
    lost = sorted(set(names) - set(stored))
    assert lost == [], f"{len(lost)} of {len(names)} secrets lost: {lost[:10]}"
    assert all(stored[name] == f"value-of-{name}" for name in names)
    assert not list(isolated.glob(".secrets.*"))
    rel.count("secrets: concurrent sets (16 threads, 4 processes)", len(names))
    rel.count("secrets: concurrent sets lost", len(lost))


@pytest.mark.parametrize("stray", [b"x", b"\x00", b"\xff", b","], ids=["x", "NUL", "0xff", "comma"])
def test_a_secrets_store_with_one_stray_byte_is_refused_and_kept(isolated: Path, stray: bytes,
                                                                  tmp_path: Path) -> None:
    from janito_core.secrets import SecretStoreError, delete_secret, get_secret, list_secrets, set_secret

    set_secret("mail_password", "kept-1")
    set_secret("api_token", "kept-2")
    store = isolated / "secrets.json"
    content = store.read_bytes() + stray
    store.write_bytes(content)
    before = os.stat(store)
    for attempt in (lambda: set_secret("other", "v"), lambda: delete_secret("api_token"),
                    lambda: get_secret("mail_password"), list_secrets):
        with pytest.raises(SecretStoreError, match=re.escape(str(store))):
            attempt()
    env = rel.base_env(isolated)
    for args, stdin in ((["secrets", "set", "other"], "v\n"), (["secrets", "get", "api_token"], ""),
                        (["secrets", "delete", "api_token"], ""), (["secrets", "list"], "")):
        done = subprocess.run([*rel.janito_command(), *args], env=env, cwd=tmp_path, input=stdin,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert str(store) in done.stderr and "Traceback" not in done.stderr, done.stderr
        rel.count("commands run")
    after = os.stat(store)
    assert store.read_bytes() == content
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    rel.count("secrets: stores with a stray byte refused and kept")


SECRET_WRITER = """
import sys
from janito_core.secrets import set_secret
n = 0
while True:
    n += 1
    set_secret("big", str(n) + ":" + "v" * 2_000_000)
"""


def test_secrets_set_killed_at_random_moments(isolated: Path) -> None:
    """A writer killed with SIGKILL in the middle of set_secret leaves a whole store."""
    from janito_core.secrets import get_secret, set_secret

    set_secret("keep", "kept")
    rng = random.Random(1602)
    env = rel.base_env(isolated)
    left = 0
    for cycle in range(SECRET_CYCLES):
        writer = subprocess.Popen([sys.executable, "-c", SECRET_WRITER], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.15, 0.6))
        writer.kill()
        writer.wait()
        stored = stored_secrets(isolated)  # raises if the store was left half written
        assert stored["keep"] == "kept", cycle
        assert "big" not in stored or stored["big"].endswith("v" * 100), cycle
        leftovers = list(isolated.glob(".secrets.*.tmp"))
        left += len(leftovers)
        for leftover in leftovers:
            leftover.unlink()
        rel.count("kill cycles: secrets set")
        rel.count("kill cycles")
    assert get_secret("keep") == "kept"
    rel.count("kill cycles: secrets, hidden temporary files left and removed", left)
