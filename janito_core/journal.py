"""The change journal: every change a call makes through the workspace, kept to be undone.

Each call that changes something gets an entry, named by its id
(``20261203T101500-3f2a9c``, newest sorting last). Its records go to the log of the
process that made it (``logs/<time>-<pid>-<random>.jsonl``, one line each, every line
naming its entry): each change, appended *before* it is made, with the before-image of
what it replaces or removes (``images/<id>.i<n>``, see :mod:`janito_core._images`), the
first also saying what the call was (tool, arguments scrubbed of secrets, caller,
workspace, time); the marks of the changes made since (with what each path looks like
after) or failed ride on the next record, and the call's end closes the entry. A process
killed anywhere leaves an entry whose last change is either made or not, and undo handles
both: the kept image is the state before. One log per process and one folder of images
make a change's cost a hard link and two appends (docs/performance.md): no folder or file
per entry.

The journal lies in janito's state folder, which no tool may reach and sandboxed code does
not see. It is bounded (``max_bytes``, ``max_age``: oldest entries go first) and a file
larger than ``max_file`` is not kept: the call's result says so (``not_undoable``).

Undo restores the paths of an entry to their state before its call, replaying its changes
backwards; it refuses, naming the path, when anything changed such a path since (a later
entry, or something outside janito: its look no longer matches), unless forced. An undo
is itself a call recorded in the journal, so it can be undone too.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _images
from ._audit import ENCODE as _ENCODE
from ._audit import AuditLog
from ._ordering import PathOrder
from .config import config_dir, state_folder
from .errors import JournalError

if TYPE_CHECKING:
    from ._call import ToolCall
    from .scrub import Scrubber
    from .workspace import Location, Workspace

__all__ = ["DEFAULT_MAX_AGE", "DEFAULT_MAX_BYTES", "DEFAULT_MAX_FILE", "Entry", "Journal",
           "JournalError", "Recording", "UndoConflict", "UndoPlan"]

#: Defaults of the bounds: 1 GiB of before-images, 30 days, 128 MiB for one file.
DEFAULT_MAX_BYTES = 1 << 30
DEFAULT_MAX_AGE = 30 * 24 * 3600.0
DEFAULT_MAX_FILE = 128 << 20

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_APPEND_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _CLOEXEC
_LOG_SUFFIX = ".jsonl"
#: Changed paths one audit line lists (a call of code may change thousands; the journal
#: entry keeps them all).
AUDIT_CHANGES = 1000
#: Characters of one argument string that the journal and the audit log keep: a file's
#: whole new content would make each line as large as the file, and a few large writes
#: would rotate the log's history away. The change's SHA-256 after stands for the rest.
ARGUMENT_CHARS = 1000
#: A process's log is closed, and a new one opened, past this size.
LOG_ROTATE_BYTES = 16 << 20
#: Seconds between two trims of one journal by one process.
TRIM_EVERY = 300.0
# An entry without its end (its process may be running still) is let go only this old.
_UNFINISHED_GRACE = 24 * 3600.0


class UndoConflict(JournalError):
    """Undo refused: a path of the entry changed since its call (``--force`` overrides)."""


def default_folder() -> Path:
    """The journal's folder: ``journal`` in janito's state folder (``config_dir()``)."""
    return config_dir() / "journal"


class Journal:
    """A folder of journal entries, and what is done with them: record, list, undo.

    ``Registry(journal=True)`` journals its calls in the default folder; ``janito run`` and
    ``janito mcp serve`` do so unless told ``--no-journal``.
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None, *,
                 max_bytes: int = DEFAULT_MAX_BYTES, max_age: float = DEFAULT_MAX_AGE,
                 max_file: int = DEFAULT_MAX_FILE, scrubber: Scrubber | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()
        self.max_bytes = max_bytes
        self.max_age = max_age
        self.max_file = max_file
        self._scrubber = scrubber
        self._lock = threading.Lock()
        self._trim_due = 0.0
        self._fds: tuple[int, int] | None = None  # (logs, images) folders
        self._writer: _Log | None = None
        self._audit: AuditLog | None = None
        #: what makes the changes of one path go one at a time (docs/undo.md)
        self.order = PathOrder(self.folder / "order.lock")
        self._beyond: set[str] = set()  # workspace roots from which the folder is hidden

    def __repr__(self) -> str:
        return f"Journal({str(self.folder)!r})"

    # -- the folder ---------------------------------------------------------------------

    def _folders(self) -> tuple[int, int]:
        """Descriptors of the ``logs`` and ``images`` folders, made (0700) on first use."""
        fds = self._fds
        if fds is None:
            with self._lock:
                if self._fds is None:
                    opened = []
                    try:
                        for name in ("logs", "images"):
                            folder = self.folder / name
                            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                            opened.append(os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC))
                    except BaseException:
                        for fd in opened:
                            os.close(fd)
                        raise
                    with contextlib.suppress(OSError):
                        os.chmod(self.folder, 0o700)
                    self._fds = (opened[0], opened[1])
                fds = self._fds
        return fds

    @property
    def images_fd(self) -> int:
        """A descriptor of the folder of before-images."""
        return self._folders()[1]

    def _log_for(self, size: int) -> _Log:
        """This process's log, to append ``size`` more bytes to (a new log after a fork,
        or once the log is past LOG_ROTATE_BYTES)."""
        logs = (self._fds or self._folders())[0]
        with self._lock:
            log = self._writer
            if log is None or log.pid != os.getpid() or log.size > LOG_ROTATE_BYTES:
                if log is not None and log.pid == os.getpid():
                    log.close()
                log = self._writer = _Log.open(logs)
            log.size += size
            return log

    def close(self) -> None:
        with self._lock:
            fds, self._fds = self._fds, None
            log, self._writer = self._writer, None
            audit = self._audit
        if log is not None and log.pid == os.getpid():
            log.close()
        for fd in fds or ():
            os.close(fd)
        if audit is not None:
            audit.close()
        self.order.close()

    def __del__(self, _close: Callable[[int], None] = os.close) -> None:
        log = getattr(self, "_writer", None)
        if log is not None and log.pid == os.getpid():
            with contextlib.suppress(OSError):
                _close(log.fd)
        for fd in getattr(self, "_fds", None) or ():
            with contextlib.suppress(OSError):
                _close(fd)

    def append(self, ident: str, record: Mapping[str, Any] | str) -> None:
        """Append a record of entry ``ident`` (an object, or its JSON text) to this
        process's log, as one line in one write."""
        text = record if isinstance(record, str) else _ENCODE(record)
        # an id is digits, letters and "-" (see Recording._open): nothing to escape
        line = f'{{"e": "{ident}", {text[1:]}\n'.encode("utf-8", "replace")
        log = self._log_for(len(line))
        if log.cut:
            line = b"\n" + line
        log.cut = True
        written = os.write(log.fd, line)
        if written < len(line):  # one write in practice: O_APPEND keeps records whole
            data = memoryview(line)[written:]
            while data:
                data = data[os.write(log.fd, data):]
        log.cut = False

    @property
    def scrubber(self) -> Scrubber:
        """What takes secrets out of the arguments kept: the secrets store's values."""
        scrubber = self._scrubber
        if scrubber is None:
            from .scrub import Scrubber

            scrubber = Scrubber(_stored_secrets())
            self._scrubber = scrubber
        return scrubber

    # -- recording ----------------------------------------------------------------------

    def begin(self, workspace: Workspace, tool: str, arguments: Mapping[str, Any], *,
              caller: Mapping[str, Any] | None = None, call_id: str | None = None,
              undoes: Sequence[str] = ()) -> Recording:
        """A recording of one call in ``workspace``: its entry is made at its first change.

        JournalError when the journal's folder lies in ``workspace`` where its tools could
        reach it (not in janito's state folder, which a workspace hides).
        """
        if workspace.root not in self._beyond:
            self._check_beyond(workspace)
        header: dict[str, Any] = {
            "tool": tool, "root": workspace.root, "confined": workspace.confined,
            "started": time.time(), "caller": dict(caller or {"kind": "python"}),
            "call_id": call_id,
        }
        if undoes:
            header["undoes"] = list(undoes)
        return Recording(self, header, arguments)

    def _check_beyond(self, workspace: Workspace) -> None:
        real = os.path.realpath(self.folder)
        root = workspace.root
        if workspace.confined and (real == root or real.startswith(root.rstrip("/") + "/")):
            state = state_folder(root).path
            if not state or not (real == state or real.startswith(state.rstrip("/") + "/")):
                raise JournalError(
                    f"the journal folder {real} lies in the workspace, where tools and "
                    "code could read and change it: nothing was run; give the journal a "
                    "folder outside the workspace, or keep it in janito's state folder",
                    real)
        self._beyond.add(root)

    # -- the audit log --------------------------------------------------------------------

    @property
    def audit_log(self) -> AuditLog:
        """The log of every call (``janito log``), beside the entries."""
        audit = self._audit
        if audit is None:
            audit = self._audit = AuditLog(self.folder)
        return audit

    def ended(self, recording: Recording, call: ToolCall, result: dict[str, Any],
              started: float, duration: float) -> dict[str, Any]:
        """End a call's entry and log the call; its result, saying what was not kept."""
        problems = []
        try:
            recording.finish(result)
        except OSError as exc:
            problems.append(f"its journal entry could not be ended ({exc.strerror or exc})")
        if recording.notices:
            result = {**result, "not_undoable": list(recording.notices)}
        decision = call.decision
        line = _audit_line(
            started, duration, call.id, recording.id, recording.header["caller"], call.name,
            None, result, changed=recording.changed,
            decision=decision.as_json() if decision is not None else None,
            approved=call.approved if decision is not None and decision.action == "ask"
            else None)
        if recording.notices:
            line["not_undoable"] = list(recording.notices)
        problem = self._log(line, recording.arguments())
        if problem:
            problems.append(problem)
        if problems:
            result = {**result, "not_recorded": "; ".join(problems)}
        return result

    def refused(self, tool: Any, arguments: Any, call_id: str | None,
                caller: Mapping[str, Any] | None, result: Mapping[str, Any], started: float,
                duration: float, workspace: Workspace | None = None) -> None:
        """Log a call refused before it ran (bad JSON, unknown tool, no privilege); not
        when the journal's folder lies in ``workspace`` (see :meth:`begin`)."""
        if workspace is not None and workspace.root not in self._beyond:
            try:
                self._check_beyond(workspace)
            except JournalError:
                return
        self._log(_audit_line(
            started, duration, call_id, None, dict(caller or {"kind": "python"}),
            tool if isinstance(tool, str) else repr(tool),
            arguments if isinstance(arguments, (dict, str)) else repr(arguments),
            {"success": False, "error_type": result.get("error_type")}))

    def _log(self, line: dict[str, Any], arguments: str | None = None) -> str | None:
        """Append ``line`` to the audit log; ``arguments``: the call's arguments as its
        entry keeps them (:meth:`Recording.arguments`), in place of the line's own."""
        # the whole line: a secret may be in a path or an error as well as the arguments;
        # scrubbed before it is shortened, so no secret is cut into a part left readable
        if arguments is None:
            line = self.scrubber.value(line)
            line["arguments"] = _shortened(line.get("arguments"))
        else:
            line.pop("arguments", None)
            line = self.scrubber.value(line)
        try:
            self.audit_log.append(line, arguments)
        except OSError as exc:
            return f"the audit log could not be written ({exc.strerror or exc})"
        return None

    def log(self, since: float | None = None) -> list[dict[str, Any]]:
        """The audit log's lines, newest first (those at or after ``since`` only)."""
        return list(reversed(list(self.audit_log.lines(since))))

    # -- reading ------------------------------------------------------------------------

    def _read(self) -> dict[str, tuple[Entry, str]]:
        """Every entry of every log not let go of, by id, with the log that holds it."""
        if self._fds is None and not (self.folder / "logs").is_dir():
            return {}  # nothing recorded yet: reading makes no folder
        logs = self._folders()[0]
        grouped: dict[str, tuple[list[dict[str, Any]], str]] = {}
        gone: set[str] = set()
        for name in sorted(os.listdir(logs)):
            if not name.endswith(_LOG_SUFFIX):
                continue
            try:
                fd = os.open(name, os.O_RDONLY | _CLOEXEC, dir_fd=logs)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as stream:
                data = stream.read()
            for line in data.split(b"\n"):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a killed process: nothing was done after it
                if not isinstance(record, dict) or not isinstance(record.get("e"), str):
                    continue
                ident = record.pop("e")
                if record.get("evicted"):
                    gone.add(ident)
                else:
                    grouped.setdefault(ident, ([], name))[0].append(record)
        found = {}
        for ident, (records, log) in grouped.items():
            if ident in gone:
                continue
            entry = Entry.parse(ident, records)
            if entry is not None:
                found[ident] = (entry, log)
        return found

    def _ids(self) -> list[str]:
        return sorted(self._read())

    def entries(self, root: str | None = None) -> list[Entry]:
        """The entries that changed something, newest first (of workspace ``root`` only,
        when given)."""
        return _changing(self._read(), root)

    def entry(self, ident: str) -> Entry:
        """The entry ``ident`` (or the one entry whose id starts with it)."""
        return _pick(self._read(), ident)

    # -- bounds -------------------------------------------------------------------------

    def trim(self) -> list[str]:
        """Let go of entries past the bounds, oldest first; the ids let go."""
        now = time.time()
        kept: list[tuple[str, int]] = []
        gone: list[str] = []
        read = self._read()
        for ident, (entry, _) in sorted(read.items(), key=lambda item: item[1][0].started):
            age = now - entry.started
            finished = entry.end is not None
            if age > self.max_age or (not finished and age > max(self.max_age,
                                                                  _UNFINISHED_GRACE)):
                gone.append(ident)
            elif finished:
                kept.append((ident, entry.size))
        total = sum(size for _, size in kept)
        for ident, size in kept:
            if total <= self.max_bytes:
                break
            gone.append(ident)
            total -= size
        self._evict(gone, read, now)
        return gone

    def opened_entry(self) -> None:
        """An entry is being made: at the first and then every TRIM_EVERY seconds, let go
        of what is past the bounds (reading every entry is what a trim costs)."""
        now = time.monotonic()
        with self._lock:
            due = now >= self._trim_due
            if due:
                self._trim_due = now + TRIM_EVERY
        if due:
            with contextlib.suppress(OSError):
                self.trim()

    def _evict(self, idents: list[str], read: dict[str, tuple[Entry, str]],
               now: float) -> None:
        """Let go of entries ``idents``: their images are removed, and a record in the log
        holding each says so; a log left holding nothing, and no longer written, goes. An
        image of no entry (its process killed before its first record) goes once a day old."""
        logs, images = self._folders()
        gone = set(idents)
        for name in os.listdir(images):
            ident = name[:name.find(".")]
            if ident in gone or (ident not in read and _age(images, name, now)
                                 > _UNFINISHED_GRACE):
                with contextlib.suppress(FileNotFoundError):
                    _images.remove_image(images, name)
        if not idents:
            return
        line_of = {ident: json.dumps({"e": ident, "evicted": True}).encode() + b"\n"
                   for ident in idents}
        emptied: dict[str, bool] = {}
        for ident in idents:
            log = read[ident][1]
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | _CLOEXEC, dir_fd=logs)
            try:
                os.write(fd, line_of[ident])
            finally:
                os.close(fd)
            emptied.setdefault(log, True)
        for ident, (_, log) in read.items():
            if log in emptied and ident not in line_of:
                emptied[log] = False
        current = self._writer.name if self._writer is not None else None
        for log, empty in emptied.items():
            if empty and log != current and not _written(log):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(log, dir_fd=logs)

    # -- undo ---------------------------------------------------------------------------

    def plan(self, idents: Iterable[str], *, force: bool = False) -> UndoPlan:
        """What undoing entries ``idents`` would do, newest first; conflicts included."""
        read = self._read()
        entries = sorted({entry.id: entry for entry in (_pick(read, ident)
                                                        for ident in idents)}.values(),
                         key=lambda entry: entry.last, reverse=True)
        if not entries:
            raise JournalError("no journal entry was named: nothing to undo")
        roots = {entry.root for entry in entries}
        if len(roots) > 1:
            raise JournalError("these entries are of different workspaces: undo them one "
                               f"workspace at a time ({', '.join(sorted(roots))})")
        plan = UndoPlan(entries)
        chosen = {entry.id for entry in entries}
        others = [entry for entry in _changing(read, next(iter(roots)))
                  if entry.id not in chosen]
        for entry in entries:
            for path, step in entry.steps():
                plan.steps.append((entry.id, path, step))
            for path in entry.paths:
                since = entry.last_change_of(path)
                touched = [other for other in others if other.touches(path, since)]
                if touched:
                    plan.conflicts.append(
                        (path, f"changed since by call {touched[0].id} "
                               f"({touched[0].tool})"))
        plan.not_kept = [(path, reason) for entry in entries
                         for path, reason in entry.not_kept()]
        plan.force = force
        return plan

    def undo(self, idents: Iterable[str], *, force: bool = False, dry_run: bool = False,
             caller: Mapping[str, Any] | None = None,
             workspace: Workspace | None = None) -> UndoPlan:
        """Restore the paths of entries ``idents`` to their state before their calls.

        Raises :class:`UndoConflict` (and changes nothing) when a path changed since,
        unless ``force``; a path whose before-image was not kept is left as it is, and
        said so, only when forced as well. With ``dry_run`` nothing changes: the plan
        says what would be done. The undo is recorded as an entry of its own.
        ``workspace``: what to undo through (a call's, with its policy), of the entries'
        root; by default a workspace of that root, opened and closed here.
        """
        from .workspace import Workspace

        plan = self.plan(idents, force=force)
        root = plan.entries[0].root
        if workspace is not None:
            if workspace.root != root:
                raise JournalError(f"these entries are of workspace {root}, not of "
                                   f"{workspace.root}", root)
            return self._undo(plan, workspace, force, dry_run, caller)
        opened = Workspace(root) if plan.entries[0].confined else Workspace.unconfined(root)
        with opened:
            return self._undo(plan, opened, force, dry_run, caller)

    def _undo(self, plan: UndoPlan, workspace: Workspace, force: bool, dry_run: bool,
              caller: Mapping[str, Any] | None) -> UndoPlan:
        newer: list[str] = []  # paths a newer entry of this undo changed: it goes first
        for entry in plan.entries:
            plan.conflicts.extend(entry.drifted(workspace, skip=newer))
            newer.extend(entry.paths)
        if (plan.conflicts or plan.not_kept) and not force:
            first = (plan.conflicts or plan.not_kept)[0]
            raise UndoConflict(f"{first[0]}: {first[1]}; nothing was undone (force "
                               "undoes it anyway)", first[0])
        if dry_run:
            return plan
        arguments = {"entries": [e.id for e in plan.entries], "force": force}
        recording = self.begin(workspace, "undo", arguments, caller=caller or {"kind": "python"},
                               undoes=[e.id for e in plan.entries])
        view = workspace.journaled(recording)
        started, clock = time.time(), time.perf_counter()
        outcome: dict[str, Any] = {"success": True}
        try:
            for entry in plan.entries:
                entry.revert(view, self, force=force)
        except BaseException as exc:
            outcome = {"success": False, "error_type": type(exc).__name__}
            raise
        finally:
            try:
                recording.finish(outcome)
            except OSError as exc:
                if outcome["success"]:  # else the failure that stopped it is told
                    raise JournalError(f"the undo was made, but its journal entry could "
                                       f"not be ended ({exc.strerror or exc})",
                                       str(self.folder)) from None
            finally:
                self._log(_audit_line(started, time.perf_counter() - clock, None,
                                      recording.id, recording.header["caller"], "undo",
                                      arguments, outcome, changed=recording.changed))
        plan.recorded = recording.id
        return plan


class UndoPlan:
    """What an undo does or would do: entries newest first, their steps, what stops it."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.steps: list[tuple[str, str, str]] = []
        self.conflicts: list[tuple[str, str]] = []
        self.not_kept: list[tuple[str, str]] = []
        self.force = False
        self.recorded: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"entries": [entry.id for entry in self.entries],
                "steps": [{"entry": e, "path": p, "action": a} for e, p, a in self.steps],
                "conflicts": [{"path": p, "reason": r} for p, r in self.conflicts],
                "not_kept": [{"path": p, "reason": r} for p, r in self.not_kept],
                "recorded_as": self.recorded}


class Entry:
    """One recorded call, as read back from the journal."""

    def __init__(self, ident: str, header: dict[str, Any], changes: list[dict[str, Any]],
                 after: dict[int, Any], failed: set[int], end: dict[str, Any] | None) -> None:
        self.id = ident
        self.header = header
        self.end = end
        self.changes = [change for change in changes if change["n"] not in failed
                        and (change["n"] in after or end is None)]
        self.after = after

    @classmethod
    def parse(cls, ident: str, records: Iterable[dict[str, Any]]) -> Entry | None:
        """The entry from its records in the order they were written (None: no header)."""
        header: dict[str, Any] | None = None
        changes: list[dict[str, Any]] = []
        after: dict[int, Any] = {}
        failed: set[int] = set()
        end = None
        for record in records:
            # marks of changes made or failed ride on any record, the header's included
            done, fail = record.get("done"), record.get("failed")
            if isinstance(done, list):
                for number, left in done:
                    after[number] = left
            elif done is not None:  # a record of its own (the journal's older form)
                after[done] = record.get("after")
            if isinstance(fail, list):
                failed.update(fail)
            elif fail is not None:
                failed.add(fail)
            if header is None:
                header = record  # and the first change, when it carries one
            if "op" in record:
                changes.append(record)
            elif "end" in record:
                end = record["end"]
        if header is None:
            return None
        return cls(ident, header, changes, after, failed, end)

    @property
    def tool(self) -> str:
        return str(self.header.get("tool"))

    @property
    def root(self) -> str:
        return str(self.header.get("root"))

    @property
    def confined(self) -> bool:
        return bool(self.header.get("confined", True))

    @property
    def started(self) -> float:
        return float(self.header.get("started") or 0)

    @property
    def size(self) -> int:
        return int((self.end or {}).get("bytes", 0))

    @property
    def paths(self) -> list[str]:
        """The paths the call changed, in the order it first changed them."""
        seen: dict[str, None] = {}
        for change in self.changes:
            for key in ("from", "path"):
                if change.get(key) is not None:
                    seen.setdefault(change[key], None)
        return list(seen)

    @property
    def last(self) -> int:
        """When the call made its last change (nanoseconds since the epoch)."""
        return max((int(change.get("t", 0)) for change in self.changes), default=0)

    def last_change_of(self, path: str) -> int:
        return max((int(change.get("t", 0)) for change in self.changes
                    if path in (change.get("path"), change.get("from"))), default=0)

    def touches(self, path: str, since: int = 0) -> bool:
        """Whether the call changed ``path``, something inside it or a folder holding it
        (after time ``since`` only, when given)."""
        return any(int(change.get("t", 0)) > since and any(
            _overlap(mine, path) for mine in (change.get("path"), change.get("from")) if mine)
            for change in self.changes)

    def as_dict(self) -> dict[str, Any]:
        header = self.header
        return {"id": self.id, "tool": self.tool, "time": self.started,
                "workspace": self.root, "paths": self.paths, "caller": header.get("caller"),
                "arguments": header.get("arguments"), "undoes": header.get("undoes"),
                "outcome": self.end, "not_undoable": [p for p, _ in self.not_kept()]}

    def not_kept(self) -> list[tuple[str, str]]:
        return [(change.get("path", "?"), change["before"].get("reason", "not kept"))
                for change in self.changes if change["before"].get("kept") is False]

    def steps(self) -> Iterator[tuple[str, str]]:
        """(path, what undo does to it), in the order undo does it."""
        for change in reversed(self.changes):
            before, op = change["before"], change["op"]
            kind = before.get("kind")
            if op == "rename" and change.get("from") is not None:
                yield change["path"], f"moved back to {change['from']}"
                if kind == "absent":
                    continue
            if op == "chmod" and kind == "dir":
                yield change["path"], f"its permissions put back ({before['mode']:o})"
                continue
            yield change["path"], {"absent": "removed", "dir": "made an empty folder again",
                                   "tree": "the folder put back", "link": "the link put back",
                                   "file": "the file put back"}.get(kind, "left as it is")

    def drifted(self, workspace: Workspace, skip: Sequence[str] = ()) -> list[tuple[str, str]]:
        """The paths that no longer look as the call left them, with why (but for those
        overlapping a path of ``skip``)."""
        last: dict[str, Any] = {}
        for change in self.changes:
            after = self.after.get(change["n"], _UNKNOWN)
            if after is _UNKNOWN:
                continue  # killed mid-change: it may or may not have been made
            if change.get("from") is not None:
                last[change["from"]] = None
            last[change["path"]] = after.get("path") if isinstance(after, dict) else None
        found = []
        for path, expected in last.items():
            if any(_overlap(path, other) for other in skip):
                continue
            now = _images.fingerprint(_look(workspace, path))
            if now != expected:
                found.append((path, "changed since the call, outside janito's journal" if now
                              is not None or expected is None else "removed since the call"))
        return found

    def revert(self, view: Workspace, journal: Journal, *, force: bool) -> None:
        """Undo this entry's changes, newest first, through ``view`` (itself journaled)."""
        images_fd = journal.images_fd
        for change in reversed(self.changes):
            _revert(view, images_fd, change, force=force)


_UNKNOWN = object()


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _look(workspace: Workspace, path: str) -> os.stat_result | None:
    try:
        with workspace.locate(path, follow_symlinks=False) as where:
            return where.lookup()
    except OSError:
        return None


def _revert(view: Workspace, images_fd: int, change: dict[str, Any], *, force: bool) -> None:
    before = change["before"]
    path = change["path"]
    source = change.get("from")
    if change["op"] == "rename" and source is not None:
        # What is at the target now is what was moved there: whatever changed it since
        # was refused before the undo began (``drifted``), or undone just now by a newer
        # entry of this undo, which may have put it back as a new inode.
        if _look(view, path) is not None:
            with view.locate(path, follow_symlinks=False) as here, \
                    view.locate(source, follow_symlinks=False, make_parents=True) as there:
                here.rename_to(there)
    _restore(view, images_fd, path, before, whole=change["op"] != "mkdir", force=force)


def _restore(view: Workspace, images_fd: int, path: str, before: dict[str, Any], *,
             whole: bool, force: bool) -> None:
    """Put ``path`` back as ``before`` describes it. A folder the call made (``whole``
    false) is removed only when empty, unless ``force``: what is in it came after."""
    kind = before.get("kind")
    if before.get("kept") is False:
        return  # said so before the undo, which had to be forced
    with view.locate(path, follow_symlinks=False, make_parents=kind != "absent") as where:
        now = where.lookup()
        if kind == "absent":
            if now is None:
                return
            if not stat.S_ISDIR(now.st_mode):
                where.remove()
                return
            try:
                where.rmdir(recursive=whole or force)
            except OSError as exc:
                if exc.errno != errno.ENOTEMPTY:
                    raise
                raise UndoConflict(f"{path}: the folder the call made holds what came "
                                   "after it; it is left as it is (force removes it)",
                                   path) from None
            return
        if kind == "file":
            if now is not None and stat.S_ISDIR(now.st_mode):
                where.rmdir(recursive=True)
            where.write(_images.file_chunks(images_fd, before["image"]), overwrite=True,
                        mode=before["mode"])
            return
        if kind == "link":
            if now is not None and stat.S_ISDIR(now.st_mode):
                where.rmdir(recursive=True)
            where.symlink(before["target"])
            return
        if kind == "tree" and _images.lookup(images_fd, before["image"]) is None:
            # recorded, then killed before the folder was moved into the journal: it was
            # never removed, and what is there is still it
            if now is not None or not force:
                if now is None:
                    raise JournalError(f"{path}: the folder's image is missing from the "
                                       "journal", path)
                return
            return
        if kind in ("dir", "tree"):
            if now is not None:
                if stat.S_ISDIR(now.st_mode) and kind == "dir":
                    if stat.S_IMODE(now.st_mode) != before["mode"]:
                        where.chmod(before["mode"])
                    return
                if not stat.S_ISDIR(now.st_mode):
                    where.remove()
                else:
                    where.rmdir(recursive=True)
            if kind == "dir":
                where.mkdir(exist_ok=False, mode=before["mode"])
                return
            image = before["image"]
            _put_in_place(where, lambda dir_fd, temp: _images.copy_tree(images_fd, image,
                                                                        dir_fd, temp))


def _put_in_place(where: Location, make: Callable[[int, str], None]) -> None:
    """Make an entry at a temporary name beside ``where``, then rename it over it (the
    rename is what the journal records)."""
    from ._atomic import temp_name
    from .workspace import Location

    temp = temp_name(where.name)
    make(where.dir_fd, temp)
    holder = Location(where.workspace, os.dup(where.dir_fd), temp, [*where.parts[:-1], temp])
    holder.temporary = True
    with holder:
        try:
            holder.rename_to(where, overwrite=True)
        except BaseException:
            with contextlib.suppress(OSError):
                info = os.stat(temp, dir_fd=where.dir_fd, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    _images.remove_image(where.dir_fd, temp)
                else:
                    os.unlink(temp, dir_fd=where.dir_fd)
            raise


class Recording:
    """The journal entry of one call as it runs: each change is written before it is made.

    Made by :meth:`Journal.begin`; the workspace a journaled call gets
    (:meth:`Workspace.journaled`) reports its changes here. The entry's folder is made at
    the first change, so a call that changes nothing costs a few attribute reads.
    """

    def __init__(self, journal: Journal, header: dict[str, Any],
                 arguments: Mapping[str, Any] | None = None) -> None:
        self.journal = journal
        #: what the entry's first record says of the call (its arguments apart: as kept,
        #: they are :meth:`arguments`)
        self.header = header
        self.given = arguments
        self.id: str | None = None
        self.notices: list[str] = []
        self.changed: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._fd = -1  # the journal's folder of images, once the entry is made
        # What goes into the next record, to save a record and a write each: the header
        # (the first change's record carries it, before anything changes) and the marks
        # of changes made (with what they left) or failed. Undo of a killed call treats a
        # change without its mark as perhaps made.
        self._header = ""  # JSON text of the header, without its closing brace
        self._done_marks: list[list[Any]] = []
        self._failed_marks: list[int] = []
        self._count = 0
        self._kept = 0
        self._bytes = 0
        # (the scrubber's generation, the arguments' JSON) once made: scrubbing and
        # shortening a file's content is done once a call, for the entry and the audit log
        self._arguments: tuple[int, str] | None = None
        self._confined = bool(header.get("confined", True))

    def arguments(self) -> str:
        """The call's arguments as the journal and the audit log keep them, as JSON text:
        scrubbed of the secrets, then each long string shortened."""
        scrubber = self.journal.scrubber
        kept = self._arguments
        if kept is None or kept[0] != scrubber.generation:
            value = _shortened(scrubber.value(self.given))
            kept = self._arguments = (scrubber.generation, _ENCODE(value))
        return kept[1]

    # -- the entry's folder ---------------------------------------------------------------

    def _open(self) -> None:
        journal = self.journal
        journal.opened_entry()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(self.header["started"]))
        ident = f"{stamp}-{os.urandom(3).hex()}"
        text = _ENCODE(self.header)
        try:
            fd = journal.images_fd
        except OSError as exc:
            raise _unwritable(journal, exc) from None
        self._fd, self.id = fd, ident
        self._header = f'{text[:-1]}, "arguments": {self.arguments()}'

    def _append(self, record: dict[str, Any]) -> None:
        """Write ``record`` now, with the marks made since the last one (and the header,
        before the first). Not synced here: the change's own sync of its folder (every
        workspace change syncs the folder it changed) commits the file system's journal,
        which holds this record and the images too (ext4's ordered mode). OSError when it
        cannot be written (the marks are then lost: undo allows for their absence)."""
        assert self.id is not None
        if self._done_marks:
            record["done"], self._done_marks = self._done_marks, []
        if self._failed_marks:
            record["failed"], self._failed_marks = self._failed_marks, []
        text = _ENCODE(record)
        if self._header:
            text, self._header = f"{self._header}, {text[1:]}", ""
        self.journal.append(self.id, text)

    def _path(self, where: Location) -> str:
        """The path of ``where`` as the entry names it: from the workspace's root."""
        parts = where.parts
        if self._confined:  # a view of the recorded workspace: its parts are from its root
            return "/".join(parts) if parts else "."
        absolute = where.absolute
        root = self.header["root"]
        if absolute == root:
            return "."
        prefix = root.rstrip("/") + "/"
        return absolute[len(prefix):] if absolute.startswith(prefix) else absolute

    def _record(self, op: str, path: str, before: dict[str, Any], **extra: Any) -> int:
        """Write change ``op`` of ``path`` ahead of it; its number."""
        with self._lock:
            if self._fd < 0:
                self._open()
            number = self._count
            self._count += 1
            try:
                self._append({"n": number, "op": op, "path": path, "before": before,
                              "t": time.time_ns(), **extra})
            except OSError as exc:
                raise _unwritable(self.journal, exc) from None
        return number

    def _hold(self, *paths: str) -> tuple[int, ...]:
        """Wait for the absolute ``paths`` to be free of other changes, and hold them."""
        journal = self.journal
        try:
            if self._fd < 0:  # the journal's folders, made before its first lock file
                journal._folders()
            return journal.order.hold(paths)
        except OSError as exc:
            raise _unwritable(journal, exc) from None

    def _image(self) -> str:
        with self._lock:
            if self._fd < 0:
                self._open()
            self._kept += 1
            return f"{self.id}.i{self._kept}"

    def _keep(self, where: Location, info: os.stat_result | None, path: str
              ) -> dict[str, Any]:
        """The before-image of what is at ``where`` (``path``) now (``info``), kept in the
        entry."""
        if info is None:
            return {"kind": "absent"}
        mode = info.st_mode
        if stat.S_ISLNK(mode):
            return {"kind": "link", "target": os.readlink(where.name, dir_fd=where.dir_fd)}
        if stat.S_ISDIR(mode):
            return {"kind": "dir", "mode": stat.S_IMODE(mode)}
        if not stat.S_ISREG(mode):
            return {"kind": "other", "kept": False,
                    "reason": "not a regular file, folder or link: it cannot be kept"}
        if info.st_size > self.journal.max_file:
            reason = (f"{info.st_size} bytes, more than the journal keeps of one file "
                      f"({self.journal.max_file})")
            self.notices.append(f"{path}: not kept for undo: {reason}")
            return {"kind": "file", "kept": False, "reason": reason, "mode": stat.S_IMODE(mode)}
        image = self._image()
        try:
            linked = _images.keep_file(where.dir_fd, where.name, info, self._fd, image)
        except OSError as exc:
            if exc.errno in _FULL:
                raise _unwritable(self.journal, exc) from None
            raise
        self._bytes += info.st_size
        return {"kind": "file", "image": image, "mode": stat.S_IMODE(mode),
                "size": info.st_size, "linked": linked,
                "sha256": _images.digest(self._fd, image, info.st_size)}

    # -- what the workspace reports -------------------------------------------------------

    def change(self, op: str, where: Location) -> Change:
        """A change about to be made at ``where``: ``with`` it around the change, calling
        :meth:`Change.ahead` just before the change is made."""
        return Change(self, op, where)

    def folder_hook(self, workspace: Workspace) -> Callable[[int, str, list[str]],
                                                            Callable[[bool], None]]:
        """What records the folders a path's walk makes on its way (``make_parents``)."""
        from .workspace import Location

        def ahead(dir_fd: int, name: str, parts: list[str]) -> Callable[[bool], None]:
            # the walk's descriptor is borrowed: this Location is never closed
            change = self.change("mkdir", Location(workspace, dir_fd, name, parts))
            change.ahead()
            return lambda made: change.done() if made else change.failed()
        return ahead

    def remove_tree(self, where: Location, info: os.stat_result) -> tuple[int, int]:
        """Remove folder ``where`` and all in it by moving it into the entry (or copying
        it there across file systems): (files and links, folders below it)."""
        held = self._hold(where.absolute)
        try:
            return self._remove_tree(where, info)
        finally:
            self.journal.order.release(held)

    def _remove_tree(self, where: Location, info: os.stat_result) -> tuple[int, int]:
        from ._fswalk import remove_tree

        path = self._path(where)
        counted = _images.tree_size(where.dir_fd, where.name, self.journal.max_file)
        if counted is None:
            self.notices.append(f"{path}: not kept for undo: the folder holds "
                                f"more than the journal keeps of one change "
                                f"({self.journal.max_file} bytes)")
            number = self._record("rmdir", path, {
                "kind": "tree", "kept": False, "reason": "the folder was too large to keep"})
            try:
                counts = remove_tree(where.dir_fd, where.name, where.shown)
            except BaseException:
                self._done(number, None)
                raise
            self._done(number, None)
            return counts
        size, files, folders = counted
        image = self._image()
        number = self._record("rmdir", path, {"kind": "tree", "image": image,
                                               "mode": stat.S_IMODE(info.st_mode)})
        try:
            moved = _images.keep_tree(where.dir_fd, where.name, self._fd, image)
        except OSError as exc:
            with self._lock:  # not moved: the folder is where it was
                self._failed_marks.append(number)
            if exc.errno in _FULL:
                raise _unwritable(self.journal, exc) from None
            raise
        if not moved:
            remove_tree(where.dir_fd, where.name, where.shown)
        self._bytes += size
        self._done(number, None)
        self.changed.append({"path": path, "op": "rmdir",
                             "before": {"kind": "tree", "files": files, "folders": folders},
                             "after": {"kind": "absent"}})
        return files, folders

    def _done(self, number: int, after: dict[str, Any] | None) -> None:
        with self._lock:
            self._done_marks.append([number, after])

    def finish(self, result: Mapping[str, Any]) -> None:
        """The call is over: its outcome ends the entry (when it changed anything).
        OSError when the journal cannot be written."""
        with self._lock:
            if self._fd < 0:
                return
            self._append({"end": {"success": bool(result.get("success")),
                                  "error_type": result.get("error_type"),
                                  "ended": time.time(), "bytes": self._bytes}})
            self._fd = -1


class Change:
    """One change of a journaled call (see :meth:`Recording.change`).

    Used as a context manager around the change: :meth:`ahead` is called inside, right
    before the change is made; leaving the block says :meth:`done`, or :meth:`failed`
    when it raised.
    """

    __slots__ = ("_hash", "_held", "_size", "before", "number", "op", "path", "recording",
                 "target", "where")

    def __init__(self, recording: Recording, op: str, where: Location) -> None:
        self.recording = recording
        self.op = op
        self.where = where
        self.target: Location | None = None
        self.number = -1
        self.path = ""  # of the target, as the entry names it
        self.before: dict[str, Any] | None = None
        self._hash: Any = None
        self._size = 0
        self._held: tuple[int, ...] = ()  # the path locks, from ahead to done or failed

    def written(self, chunk: bytes) -> None:
        """A chunk of the new content, hashed as it is written (not read back after)."""
        if self._hash is None:
            import hashlib

            self._hash = hashlib.sha256()
        self._size += len(chunk)
        if self._size <= _images.DIGEST_LIMIT:
            self._hash.update(chunk)

    def ahead(self, target: Location | None = None) -> None:
        """Record the change with the before-image of its path (and, for a rename, of the
        target it may replace), before it is made."""
        recording = self.recording
        where = self.where
        if target is None:
            self._held = recording._hold(where.absolute)
            path = self.path = recording._path(where)
            self.before = recording._keep(where, where.lookup(), path)
            self.number = recording._record(self.op, path, self.before)
            return
        self.target = target
        if where.temporary:
            # janito's own temporary entry put in place: only the target's state counts
            self._held = recording._hold(target.absolute)
            path = self.path = recording._path(target)
            self.before = recording._keep(target, target.lookup(), path)
            self.number = recording._record(self.op, path, self.before)
            return
        self._held = recording._hold(where.absolute, target.absolute)
        path = self.path = recording._path(target)
        self.before = recording._keep(target, target.lookup(), path)
        self.number = recording._record(
            self.op, path, self.before,
            **{"from": recording._path(where), "moved": _images.fingerprint(where.lookup())})

    def done(self) -> None:
        try:
            self._done()
        finally:
            self._let_go()

    def _let_go(self) -> None:
        held, self._held = self._held, ()
        if held:
            self.recording.journal.order.release(held)

    def _done(self) -> None:
        number, self.number = self.number, -1
        if number < 0:
            return
        where = self.where
        target = self.target
        recording = self.recording
        at = where if target is None else target
        info = at.lookup()
        after = _images.fingerprint(info)
        digest = None
        if info is not None and stat.S_ISREG(info.st_mode):
            if self._hash is not None and info.st_size == self._size:
                digest = (self._hash.hexdigest() if self._size <= _images.DIGEST_LIMIT
                          else None)
            else:
                digest = _images.digest(at.dir_fd, at.name, info.st_size)
        recording._done(number, {"path": after})
        before = self.before or {}
        recording.changed.append({
            "path": self.path, "op": self.op,
            "before": {"kind": before.get("kind"), "sha256": before.get("sha256")},
            "after": {"kind": _KINDS.get(str(after[0])) if after else "absent",
                      "sha256": digest}})

    def failed(self) -> None:
        """The change was not made (it raised): said with the next record, as a done mark
        is; without it, undo puts back the before-image, which is what is there."""
        try:
            number, self.number = self.number, -1
            if number < 0:
                return
            with self.recording._lock:
                self.recording._failed_marks.append(number)
        finally:
            self._let_go()

    def __enter__(self) -> Change:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.done()
        else:
            self.failed()


_KINDS = {"f": "file", "l": "link", "d": "folder", "o": "other"}
# What keeping an image meets when the journal's file system is full or read-only: the
# journal's failure, which refuses the change, not the workspace's.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def _unwritable(journal: Journal, exc: OSError) -> JournalError:
    return JournalError(f"the journal folder {journal.folder} cannot be written "
                        f"({exc.strerror or exc}), so the change was not made: without a "
                        "journal, no undo (janito run --no-journal, Registry(journal=None))",
                        str(journal.folder))


def _audit_line(started: float, duration: float, call_id: str | None, entry: str | None,
                caller: Any, tool: str, arguments: Any, outcome: Mapping[str, Any], *,
                changed: list[dict[str, Any]] | None = None, decision: Any = None,
                approved: bool | None = None) -> dict[str, Any]:
    """One line of the audit log: a call, what decided it, how it ended, what it changed
    (the first AUDIT_CHANGES paths, and how many there were when more)."""
    changed = changed or []
    line = {"time": started, "call_id": call_id, "entry": entry, "caller": caller,
            "tool": tool, "arguments": arguments, "decision": decision, "approved": approved,
            "success": bool(outcome.get("success")), "error_type": outcome.get("error_type"),
            "duration_ms": round(duration * 1000, 3), "changed": changed[:AUDIT_CHANGES]}
    if len(changed) > AUDIT_CHANGES:
        line["changed_count"] = len(changed)
    return line


def _shortened(value: Any, limit: int = ARGUMENT_CHARS) -> Any:
    """``value`` (JSON-like) with each string longer than ``limit`` characters cut there
    and the count of what was cut appended; keys are kept whole. The input is not changed."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        # "..." rather than an ellipsis: a line of ASCII is copied, not encoded, twice a call
        return f"{value[:limit]}... [{len(value) - limit} more characters]"
    if isinstance(value, dict):
        return {key: _shortened(item, limit) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shortened(item, limit) for item in value]
    return value


def _age(folder_fd: int, name: str, now: float) -> float:
    """Seconds since ``name`` came into the folder: its change time, which a link or a
    rename sets (its modification time may be the linked file's, years old)."""
    try:
        return now - os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_ctime
    except OSError:
        return 0.0


class _Log:
    """This process's log: its descriptor, name and the bytes written to it; ``cut``
    while a write may have left a line without its end (a full disk), which the next
    write ends first."""

    __slots__ = ("cut", "fd", "name", "pid", "size")

    def __init__(self, fd: int, name: str) -> None:
        self.fd, self.name, self.pid, self.size = fd, name, os.getpid(), 0
        self.cut = False

    @classmethod
    def open(cls, logs_fd: int) -> _Log:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        name = f"{stamp}-{os.getpid()}-{os.urandom(3).hex()}{_LOG_SUFFIX}"
        return cls(os.open(name, _APPEND_FLAGS | os.O_EXCL, 0o600, dir_fd=logs_fd), name)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _written(log: str) -> bool:
    """Whether the process named in log ``log`` may still append to it."""
    try:
        pid = int(log.split("-")[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True  # another Journal of this process: its log is still open
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _changing(read: dict[str, tuple[Entry, str]], root: str | None) -> list[Entry]:
    """The entries of ``read`` that changed something, newest first (of ``root`` only)."""
    real = os.path.realpath(root) if root is not None else None
    found = [entry for entry, _ in read.values()
             if entry.changes and (real is None or entry.root == real)]
    found.sort(key=lambda entry: entry.last, reverse=True)
    return found


def _pick(read: dict[str, tuple[Entry, str]], ident: str) -> Entry:
    """The entry of ``read`` named ``ident``, or the one whose id starts with it."""
    matches = [name for name in read if name == ident] or \
        [name for name in read if name.startswith(ident)]
    if len(matches) != 1:
        raise JournalError(f"no journal entry {ident!r}" if not matches else
                           f"{ident!r} names {len(matches)} journal entries: give more "
                           "of the id", ident)
    return read[matches[0]][0]


def _stored_secrets() -> list[str]:
    """The values of the secrets store, to take out of what the journal keeps."""
    try:
        from .secrets import get_secret, list_secrets

        values = [get_secret(name) for name in list_secrets()]
    except Exception:  # a store that cannot be read holds nothing to scrub
        return []
    return [value for value in values if value]
