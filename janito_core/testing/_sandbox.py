"""Where the conformance kit's calls run, and how it sees what they did.

A temporary folder holds the workspace, a sentinel file beside it, a folder of sentinels
outside it and a link from the workspace to that folder::

    base/janito-sentinel.txt          content: a random token
    base/outside/sentinel.txt         content: another random token
    base/outside/hidden-<token>.txt   a name no input ever mentions
    base/workspace/                   the workspace, re-seeded before each tool
    base/workspace/link-out -> ../outside

The paths the calls are made with name what the workspace holds, those sentinels, and
names outside that do not exist yet (``../janito-new-<token>``, through the link,
absolute), so a tool that creates a file where it was told to is caught as surely as one
that reads. A tool whose result holds a token read a sentinel (or listed the outside
folder); a change anywhere under ``base`` but inside the workspace is a write outside it.

What the workspace holds when :meth:`Sandbox.seal` is called (the seed files, and what the
author's ``setup`` wrote) is kept aside and put back whenever a call changed it.
"""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any, NamedTuple

SEED_FILES = {
    "notes.txt": "alpha beta\ngamma delta\nepsilon\n",
    "data/numbers.csv": "n,square\n1,1\n2,4\n3,9\n",
    "data/nested/deep.txt": "deep inside\n",
}


class Entry(NamedTuple):
    kind: str
    size: int
    mtime_ns: int
    mode: int
    digest: str


Snapshot = dict[str, Entry]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    return "special file"


def _digest(path: str, mode: int) -> str:
    if stat.S_ISLNK(mode):
        return os.readlink(path)
    if not stat.S_ISREG(mode):
        return ""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                sha.update(block)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    return sha.hexdigest()


def snapshot(root: str, *, skip: str | None = None) -> Snapshot:
    """Every entry under ``root`` (links not followed), ``skip`` left out, by relative path."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        if skip is not None and folder == skip:
            dirs[:] = []
            continue
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            if path == skip:
                continue
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = Entry(
                _kind(info.st_mode), info.st_size if not stat.S_ISDIR(info.st_mode) else 0,
                info.st_mtime_ns, stat.S_IMODE(info.st_mode), _digest(path, info.st_mode),
            )
    return found


def differences(before: Snapshot, after: Snapshot, limit: int = 3) -> list[str]:
    """What changed between two snapshots, creations and deletions first, in words."""
    created = sorted(set(after) - set(before))
    deleted = sorted(set(before) - set(after))
    changed = []
    for path in sorted(set(before) & set(after)):
        old, new = before[path], after[path]
        if old == new:
            continue
        what = [field for field in Entry._fields if getattr(old, field) != getattr(new, field)]
        if new.kind == "folder" and what == ["mtime_ns"]:
            continue  # a folder's time moves with its entries, reported on their own
        changed.append(f"changed {path} ({', '.join(w.replace('_ns', '') for w in what)})")
    words = ([f"created {p} ({after[p].kind})" for p in created]
             + [f"deleted {p} ({before[p].kind})" for p in deleted] + changed)
    if len(words) > limit:
        words = [*words[:limit], f"and {len(words) - limit} more"]
    return words


#: How many of the workspace's own paths (seed files, setup's files) calls are made with.
MAX_SEEDED_PATHS = 20


class Sandbox:
    """The temporary folders of one conformance check."""

    def __init__(self) -> None:
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="janito-conformance-"))
        # outside base: a tool reaching out of the workspace must not find the seed there
        self._seed = os.path.realpath(tempfile.mkdtemp(prefix="janito-conformance-seed-"))
        self.workspace = os.path.join(self.base, "workspace")
        self.outside = os.path.join(self.base, "outside")
        self.tokens = {
            "janito-sentinel.txt": f"janito-sentinel-{secrets.token_hex(8)}",
            "outside/sentinel.txt": f"janito-sentinel-{secrets.token_hex(8)}",
        }
        self.hidden_name = f"hidden-{secrets.token_hex(8)}.txt"
        os.mkdir(self.outside)
        for relative, token in self.tokens.items():
            with open(os.path.join(self.base, relative), "w", encoding="utf-8") as handle:
                handle.write(f"{token}\nthis file is outside the workspace\n")
        with open(os.path.join(self.outside, self.hidden_name), "w", encoding="utf-8") as handle:
            handle.write("outside\n")
        os.mkdir(self.workspace)
        for relative, text in SEED_FILES.items():
            target = os.path.join(self.workspace, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
        os.symlink(os.path.join("..", "outside"), os.path.join(self.workspace, "link-out"))
        new = f"janito-new-{secrets.token_hex(4)}"
        self.outside_paths = [
            "janito-sentinel.txt", "outside/sentinel.txt",
            "../janito-sentinel.txt", "../outside/sentinel.txt", "../outside",
            "link-out", "link-out/sentinel.txt", "data/../../outside/sentinel.txt",
            os.path.join(self.base, "janito-sentinel.txt"),
            os.path.join(self.outside, "sentinel.txt"),
            # names that do not exist: a tool that creates what it is told to create
            f"../{new}-beside.db", f"link-out/{new}-through-link.txt",
            f"data/../../outside/{new}-climbing", os.path.join(self.base, f"{new}-absolute.txt"),
        ]
        self.paths: list[str] = []
        self.seal()

    def seal(self) -> None:
        """Keep what the workspace holds now as the state :meth:`reset` puts back, and
        offer its paths (the first ``MAX_SEEDED_PATHS``) to the calls."""
        _clear(self._seed)
        shutil.copytree(self.workspace, self._seed, symlinks=True, dirs_exist_ok=True)
        own = sorted(relative for relative, entry in snapshot(self.workspace).items()
                     if entry.kind in ("file", "folder"))
        own.sort(key=lambda relative: relative.count(os.sep))  # the shallow ones first
        self.paths = [*own[:MAX_SEEDED_PATHS], ".", "", *self.outside_paths]

    def reset(self) -> None:
        """The workspace as it was sealed, nothing else."""
        # The folder itself stays: the registry's Workspace holds a descriptor of it.
        _clear(self.workspace)
        shutil.copytree(self._seed, self.workspace, symlinks=True, dirs_exist_ok=True)

    def outside_state(self) -> Snapshot:
        return snapshot(self.base, skip=self.workspace)

    def workspace_state(self) -> Snapshot:
        return snapshot(self.workspace)

    def leaks(self, text: str) -> list[str]:
        """Which sentinels ``text`` reveals, in words."""
        found = [f"the content of {os.path.join('..', name)}" for name, token in self.tokens.items()
                 if token in text]
        if self.hidden_name in text:
            found.append("the names in ../outside (a folder outside the workspace)")
        return found

    def close(self) -> None:
        for folder in (self.base, self._seed):
            _make_removable(folder)
            shutil.rmtree(folder, ignore_errors=True)


def _clear(folder: str) -> None:
    """Empty ``folder``, whatever a tool did to the permissions of what it holds."""
    _make_removable(folder)
    os.chmod(folder, 0o700)
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)


def _make_removable(root: str) -> None:
    """Give back the permissions a tool may have taken away, so the sandbox can go."""
    for folder, dirs, _ in os.walk(root, followlinks=False):
        for name in dirs:
            path = os.path.join(folder, name)
            try:
                if not os.path.islink(path):
                    os.chmod(path, 0o700)
            except OSError:
                pass


def content(state: Snapshot) -> set[tuple[str, str, int, int, str]]:
    """A snapshot without times: equal for two workspaces holding the same things."""
    return {(path, e.kind, e.size, e.mode, e.digest) for path, e in state.items()
            if e.kind != "folder" or path}


class Watchdog:
    """One thread that cancels the running call's token when its budget runs out."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._deadline: float | None = None
        self._action: Any = None
        self._closed = False
        self._thread = threading.Thread(target=self._watch, name="janito-conformance-watchdog",
                                        daemon=True)
        self._thread.start()

    def arm(self, seconds: float, action: Any) -> None:
        import time

        with self._lock:
            self._deadline = time.monotonic() + seconds
            self._action = action
            self._lock.notify()

    def disarm(self) -> None:
        with self._lock:
            self._deadline = None
            self._action = None

    def _watch(self) -> None:
        import time

        with self._lock:
            while not self._closed:
                if self._deadline is None:
                    self._lock.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                action, self._deadline, self._action = self._action, None, None
                if action is not None:
                    action()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify()


class StdoutTrap:
    """Whatever a call writes to standard output: ``print``, ``sys.stdout``, file
    descriptor 1 (a C library, a child process). It would corrupt stdio MCP serving."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self.text = ""

    @contextmanager
    def catch(self) -> Iterator[None]:
        self.text = ""
        self._file.seek(0)
        self._file.truncate()
        streams = {id(s): s for s in (sys.stdout, sys.__stdout__) if s is not None}
        for stream in streams.values():
            _flush(stream)
        try:
            saved_fd: int | None = os.dup(1)
        except OSError:  # no descriptor 1 at all (a daemon): only sys.stdout can be watched
            saved_fd = None
        saved_stream = sys.stdout
        buffer = io.StringIO()
        if saved_fd is not None:
            os.dup2(self._file.fileno(), 1)
        sys.stdout = buffer
        try:
            yield
        finally:
            for stream in streams.values():
                _flush(stream)
            if saved_fd is not None:
                os.dup2(saved_fd, 1)
                os.close(saved_fd)
            sys.stdout = saved_stream
            self._file.seek(0)
            written = self._file.read().decode("utf-8", "replace")
            self.text = buffer.getvalue() + written

    def close(self) -> None:
        self._file.close()


def _flush(stream: Any) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):
        pass


class OverBudget(BaseException):
    """Raised in a call that outlives its hard limit; a BaseException, so that a tool's
    ``except Exception`` cannot swallow it."""


@contextmanager
def hard_limit(seconds: float) -> Iterator[None]:
    """Interrupt the call after ``seconds`` with OverBudget, where a timer signal can do it
    (the main thread, and no one else using SIGALRM, such as pytest-timeout)."""
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)
    )
    if not usable:
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise OverBudget()

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def where_raised(tb: TracebackType | None, module: str | None = None) -> str:
    """``file:line`` where an exception left the tool's own module (else the innermost frame
    outside janito_core), for a finding."""
    owner = getattr(sys.modules.get(module or ""), "__file__", None)
    spot = inner = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        here = f"{os.path.basename(filename)}:{tb.tb_lineno}"
        if owner is not None and filename == owner:
            spot = here
        if f"{os.sep}janito_core{os.sep}" not in filename:
            inner = here
        tb = tb.tb_next
    return spot or inner
