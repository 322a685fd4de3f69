"""Every change the file tools make is journaled and undone byte for byte.

Each test seeds a tree with what undo must bring back exactly (CRLF line ends, an
executable and a read-only file, a link, an empty folder), runs real calls through
dispatch with the journal on, undoes them, and compares the whole tree, entry by entry:
kind, mode, bytes or link target.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from janito_core import Workspace
from janito_core.journal import Journal, UndoConflict

Tree = dict[str, tuple[str, int, bytes]]


def tree(root: Path) -> Tree:
    """Every entry below ``root``: (kind, mode, content or link target)."""
    found: Tree = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            relative = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(info.st_mode):
                found[relative] = ("dir", stat.S_IMODE(info.st_mode), b"")
            else:
                found[relative] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def without_temporaries(found: Tree) -> Tree:
    """``found`` less janito's temporary files (``.NAME.XXXXXXXX.tmp``), which a killed
    writer may leave behind, as the files toolset documents."""
    return {path: entry for path, entry in found.items()
            if not (Path(path).name.startswith(".") and path.endswith(".tmp"))}


@pytest.fixture
def seeded(files: Any, ws: Path) -> Any:
    (ws / "notes.txt").write_bytes(b"first line\r\nsecond line\r\n")
    (ws / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "frozen.txt").write_bytes(b"do not touch\n")
    (ws / "frozen.txt").chmod(0o444)
    (ws / "docs").mkdir()
    (ws / "docs" / "a.md").write_bytes(b"# A\r\n")
    (ws / "docs" / "empty").mkdir()
    (ws / "docs" / "private").mkdir(mode=0o700)
    (ws / "docs" / "private" / "key.txt").write_bytes(b"k\n")
    (ws / "docs" / "link.md").symlink_to("a.md")
    files.load("files", privileges="rw", journal=True)
    return files


def undo_all(tester: Any, ws: Path) -> Any:
    journal: Journal = tester.journal
    return journal.undo([entry.id for entry in journal.entries(str(ws))])


CALLS = [
    ("CreateFile", {"filepath": "new/deep/file.txt", "content": "fresh\r\n"}),
    ("CreateFile", {"filepath": "notes.txt", "content": "replaced", "overwrite": True}),
    ("CreateFile", {"filepath": "run.sh", "content": "#!/bin/sh\nexit 1\n", "overwrite": True}),
    ("ReplaceTextInFile", {"filepath": "notes.txt", "old_str": "second", "new_str": "2nd"}),
    ("ReplaceTextInFile", {"filepath": "docs/link.md", "old_str": "A", "new_str": "B"}),
    ("DeleteFile", {"filepath": "docs/a.md"}),
    ("DeleteFile", {"filepath": "docs/link.md"}),
    ("DeleteFile", {"filepath": "frozen.txt"}),
    ("CreateDirectory", {"directory": "made/inner"}),
    ("RemoveDirectory", {"directory": "docs/empty"}),
    ("RemoveDirectory", {"directory": "docs", "recursive": True}),
    ("MoveFile", {"source": "notes.txt", "destination": "moved.txt"}),
    ("MoveFile", {"source": "docs", "destination": "elsewhere"}),
    ("MoveFile", {"source": "run.sh", "destination": "notes.txt", "overwrite": True}),
    ("MoveFile", {"source": "docs/link.md", "destination": "top-link.md"}),
]


CALLS.append(  # a hidden .tmp file of the person's: named like janito's own temporaries
    ("MoveFile", {"source": ".session.tmp", "destination": "notes.txt", "overwrite": True}))


@pytest.mark.parametrize(("tool", "arguments"), CALLS,
                         ids=[f"{tool}-{i}" for i, (tool, _) in enumerate(CALLS)])
def test_each_file_tool_is_undone_byte_for_byte(seeded: Any, ws: Path, tool: str,
                                                arguments: dict[str, Any]) -> None:
    if arguments.get("source") == ".session.tmp":
        (ws / ".session.tmp").write_bytes(b"the person's\n")
    before = tree(ws)
    result = seeded.call(tool, arguments)
    assert result["success"], result
    assert tree(ws) != before
    entries = seeded.journal.entries(str(ws))
    assert [entry.tool for entry in entries] == [tool]
    plan = undo_all(seeded, ws)
    assert tree(ws) == before
    assert plan.recorded is not None


def test_an_undo_is_journaled_and_can_be_undone(seeded: Any, ws: Path) -> None:
    seeded.call("ReplaceTextInFile", filepath="notes.txt", old_str="first", new_str="1st")
    seeded.call("RemoveDirectory", directory="docs", recursive=True)
    after = tree(ws)
    plan = undo_all(seeded, ws)
    journal: Journal = seeded.journal
    newest = journal.entries(str(ws))[0]
    assert newest.id == plan.recorded and newest.tool == "undo"
    assert newest.header["undoes"] == plan.as_dict()["entries"]
    journal.undo([newest.id])
    assert tree(ws) == after


def test_undo_across_200_calls(seeded: Any, ws: Path) -> None:
    before = tree(ws)
    chance = random.Random(2026)
    for number in range(200):
        name = f"f{chance.randrange(12)}.txt"
        action = chance.randrange(4)
        if action == 0 or not (ws / name).exists():
            result = seeded.call("CreateFile", filepath=f"many/{name}",
                                 content=f"v{number}\r\n" * chance.randrange(1, 5),
                                 overwrite=True)
        elif action == 1:
            result = seeded.call("ReplaceTextInFile", filepath="notes.txt", old_str="line",
                                 new_str=f"line{number % 3}") if number % 2 else \
                seeded.call("CreateFile", filepath=name, content=str(number), overwrite=True)
        elif action == 2:
            result = seeded.call("DeleteFile", filepath=name)
        else:
            result = seeded.call("MoveFile", source=name, destination=f"m{number}.txt")
        assert isinstance(result, dict)
    journal: Journal = seeded.journal
    entries = journal.entries(str(ws))
    assert len(entries) >= 150
    journal.undo([entry.id for entry in entries])
    assert tree(ws) == before


def test_undo_refuses_a_path_changed_since_and_force_overrides(seeded: Any, ws: Path) -> None:
    seeded.call("CreateFile", filepath="notes.txt", content="by the model", overwrite=True)
    (ws / "notes.txt").write_text("by the person since")  # outside janito
    journal: Journal = seeded.journal
    with pytest.raises(UndoConflict) as refused:
        undo_all(seeded, ws)
    assert refused.value.path == "notes.txt"
    assert "notes.txt" in str(refused.value)
    assert (ws / "notes.txt").read_text() == "by the person since"
    undo_all_forced = journal.undo([e.id for e in journal.entries(str(ws))], force=True)
    assert (ws / "notes.txt").read_bytes() == b"first line\r\nsecond line\r\n"
    # the person's version is in the undo's own entry: undoing the undo brings it back
    journal.undo([undo_all_forced.recorded or ""])
    assert (ws / "notes.txt").read_text() == "by the person since"


def test_undo_refuses_a_path_a_later_call_changed(seeded: Any, ws: Path) -> None:
    seeded.call("CreateFile", filepath="docs/a.md", content="one", overwrite=True)
    seeded.call("CreateFile", filepath="docs/a.md", content="two", overwrite=True)
    journal: Journal = seeded.journal
    older = journal.entries(str(ws))[-1]
    with pytest.raises(UndoConflict) as refused:
        journal.undo([older.id])
    assert refused.value.path == "docs/a.md"
    assert "changed since by call" in str(refused.value)
    assert journal.plan([older.id]).conflicts


def test_dry_run_changes_nothing(seeded: Any, ws: Path) -> None:
    seeded.call("DeleteFile", filepath="docs/a.md")
    after = tree(ws)
    journal: Journal = seeded.journal
    plan = journal.undo([e.id for e in journal.entries(str(ws))], dry_run=True)
    assert tree(ws) == after
    assert [(p, a) for _, p, a in plan.steps] == [("docs/a.md", "the file put back")]
    assert plan.recorded is None


def test_a_file_too_large_to_keep_is_said_before_and_undo_refuses_it(seeded: Any,
                                                                   ws: Path) -> None:
    journal: Journal = seeded.journal
    journal.max_file = 10
    result = seeded.call("CreateFile", filepath="notes.txt", content="x", overwrite=True)
    assert result["success"]
    assert result["not_undoable"] and "notes.txt" in result["not_undoable"][0]
    with pytest.raises(UndoConflict) as refused:
        undo_all(seeded, ws)
    assert refused.value.path == "notes.txt"
    assert (ws / "notes.txt").read_text() == "x"


def test_calls_that_change_nothing_make_no_entry(seeded: Any, ws: Path) -> None:
    seeded.call("ReadFile", filepath="notes.txt")
    seeded.call("ListFiles", directory=".")
    seeded.call("CreateFile", filepath="notes.txt", content="no overwrite")  # refused
    assert seeded.journal.entries(str(ws)) == []


def test_the_journal_is_beyond_every_file_tool(files: Any, ws: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # The worst case: janito's state folder, journal included, inside the workspace.
    state = ws / ".config" / "janito"
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    files.load("files", privileges="rw", journal=True)
    (ws / "a.txt").write_text("a")
    files.call("CreateFile", filepath="a.txt", content="b", overwrite=True)
    logs = list((state / "journal" / "logs").iterdir())
    assert logs and list((state / "journal" / "images").iterdir())
    target = f".config/janito/journal/logs/{logs[0].name}"
    for tool, arguments in [
        ("ReadFile", {"filepath": target}),
        ("CreateFile", {"filepath": target, "content": "{}", "overwrite": True}),
        ("DeleteFile", {"filepath": target}),
        ("RemoveDirectory", {"directory": ".config/janito/journal", "recursive": True}),
        ("MoveFile", {"source": ".config/janito", "destination": "stolen"}),
        ("RemoveDirectory", {"directory": ".config", "recursive": True}),
        ("CreateFile", {"filepath": ".config/janito/journal/logs/x.jsonl", "content": "{}"}),
        ("DeleteFile", {"filepath": f".config/janito/journal/images/{files.journal.entries()[0].id}.i1"}),
    ]:
        result = files.call(tool, arguments)
        assert result["success"] is False, (tool, result)
    listed = json.dumps(files.call("ListFiles", directory=".", recursive=True))
    assert "journal" not in listed and ".jsonl" not in listed
    assert (ws / "a.txt").read_text() == "b"
    files.journal.undo([files.journal.entries(str(ws))[0].id])
    assert (ws / "a.txt").read_text() == "a"


def test_a_journal_given_a_folder_in_the_workspace_records_and_runs_nothing(
        seeded: Any, ws: Path) -> None:
    """Outside janito's state folder, which the workspace hides, a journal folder in the
    workspace would be the model's to read (before-images hold what was overwritten) and
    to change: every call is refused, and nothing is written there."""
    seeded.registry.journal = Journal(ws / "docs" / "journal")
    for tool, arguments in [("CreateFile", {"filepath": "notes.txt", "content": "x",
                                            "overwrite": True}),
                            ("ReadFile", {"filepath": "notes.txt"}),
                            ("ListFiles", {"directory": "docs"})]:
        result = seeded.call(tool, arguments)
        assert result["success"] is False and result["error_type"] == "not_journaled", result
        assert "lies in the workspace" in result["error"]
    assert seeded.call("NoSuchTool", {})["error_type"] == "unknown_tool"  # no audit line
    assert not (ws / "docs" / "journal").exists()
    assert (ws / "notes.txt").read_bytes() == b"first line\r\nsecond line\r\n"


def _as(caller: dict[str, Any], tester: Any, tool: str, **arguments: Any) -> Any:
    """``tester.call`` made by ``caller`` (as an MCP session names itself)."""
    from janito_core._context import current_caller

    token = current_caller.set(caller)
    try:
        return tester.call(tool, arguments)
    finally:
        current_caller.reset(token)


def test_undo_is_offered_to_a_model_only_in_the_undo_toolset_and_only_for_its_calls(
        seeded: Any, ws: Path) -> None:
    """No toolset the person did not add offers undo. Added (``-t undo``), it takes back
    only the calling session's own calls, never past a later change by someone else, and
    the person can undo what it did."""
    registry = seeded.registry
    assert "UndoCalls" not in registry.names()
    assert seeded.call("UndoCalls", {})["error_type"] == "unknown_tool"
    registry.add_toolset("undo")
    model = {"kind": "mcp", "client": "agent", "session": "s1"}
    other = {"kind": "mcp", "client": "agent", "session": "s2"}
    assert _as(model, seeded, "CreateFile", filepath="notes.txt", content="mine",
               overwrite=True)["success"]
    assert _as(model, seeded, "DeleteFile", filepath="run.sh")["success"]
    assert _as(other, seeded, "CreateFile", filepath="docs/a.md", content="theirs",
               overwrite=True)["success"]
    dry = _as(model, seeded, "UndoCalls", dry_run=True)
    assert dry["success"] and dry["undone"] == [{"tool": "DeleteFile", "paths": ["run.sh"]}]
    assert not (ws / "run.sh").exists()
    undone = _as(model, seeded, "UndoCalls", count=5)
    assert undone["success"], undone
    assert [u["tool"] for u in undone["undone"]] == ["DeleteFile", "CreateFile"]
    assert (ws / "run.sh").read_bytes() == b"#!/bin/sh\necho hi\n"
    assert (ws / "notes.txt").read_bytes() == b"first line\r\nsecond line\r\n"
    assert (ws / "docs" / "a.md").read_text() == "theirs"  # the other session's, kept
    assert _as(other, seeded, "UndoCalls", count=1)["undone"] == [
        {"tool": "CreateFile", "paths": ["docs/a.md"]}]
    # a later change by someone else: refused, named, nothing changed
    assert _as(model, seeded, "CreateFile", filepath="notes.txt", content="again",
               overwrite=True)["success"]
    assert _as(other, seeded, "CreateFile", filepath="notes.txt", content="theirs now",
               overwrite=True)["success"]
    refused = _as(model, seeded, "UndoCalls")
    assert refused["success"] is False and refused["error_type"] == "undo_refused", refused
    assert refused["path"] == "notes.txt" and "changed since by call" in refused["error"]
    assert (ws / "notes.txt").read_text() == "theirs now"
    # what the model undid is the person's to put back
    journal: Journal = seeded.journal
    model_undo = next(entry for entry in journal.entries(str(ws))
                      if entry.tool == "undo" and entry.header["caller"] == model)
    assert model_undo.header["undoes"]
    assert _as({"kind": "mcp", "session": "s3"}, seeded, "UndoCalls")["error_type"] == \
        "nothing_to_undo"
    registry.journal = None
    assert seeded.call("UndoCalls", {})["error_type"] == "not_journaled"


def test_the_audit_log_keeps_no_secret(files: Any, ws: Path) -> None:
    from janito_core.scrub import secret_forms
    from janito_core.secrets import set_secret

    secret = "sk-live-0123456789abcdefSECRET"
    set_secret("service_token", secret)
    files.load("files", privileges="rw", journal=True)
    for form in sorted(secret_forms(secret)):
        files.call("CreateFile", filepath="notes/leak.txt", content=f"token={form}",
                   overwrite=True)
    files.call("ReadFile", filepath=f"nowhere-{secret}.txt")
    files.call("CreateFile", {"filepath": secret, "content": secret})
    journal: Journal = files.journal
    lines = journal.log()
    assert len(lines) == len(secret_forms(secret)) + 2
    # the audit log, and what each journal entry says of its call (the changes themselves
    # name real paths, which undo needs as they are, and never leave the journal)
    raw = b"".join(path.read_bytes() for path in journal.folder.glob("audit*.jsonl"))
    change = {"n", "op", "path", "before", "t", "from", "moved"}  # its first change rides along
    raw += b"".join(json.dumps({key: value for key, value in json.loads(line).items()
                                if key not in change}).encode()
                    for path in journal.folder.glob("logs/*.jsonl")
                    for line in path.read_bytes().split(b"\n")
                    if line and "tool" in json.loads(line))  # each call's own record
    for form in secret_forms(secret):
        assert form.encode() not in raw, form
    assert all(line["caller"] == {"kind": "python"} for line in lines)


def test_the_audit_log_line_of_a_call(seeded: Any, ws: Path) -> None:
    import hashlib

    old = (ws / "notes.txt").read_bytes()
    seeded.call("CreateFile", filepath="notes.txt", content="new", overwrite=True)
    seeded.call("DeleteFile", filepath="missing.txt")
    seeded.call("NoSuchTool", {})
    journal: Journal = seeded.journal
    refused, failed, written = journal.log()
    assert written["tool"] == "CreateFile" and written["success"] is True
    assert written["arguments"] == {"filepath": "notes.txt", "content": "new",
                                    "overwrite": True}
    assert written["duration_ms"] > 0 and written["entry"]
    assert written["changed"] == [{
        "path": "notes.txt", "op": "write",
        "before": {"kind": "file", "sha256": hashlib.sha256(old).hexdigest()},
        "after": {"kind": "file", "sha256": hashlib.sha256(b"new").hexdigest()}}]
    assert failed["success"] is False and failed["error_type"] and failed["changed"] == []
    assert refused["tool"] == "NoSuchTool" and refused["error_type"] == "unknown_tool"
    assert time.time() - refused["time"] < 60


def test_a_large_write_keeps_its_audit_line_small(files: Any, ws: Path) -> None:
    import hashlib

    from janito_core.journal import ARGUMENT_CHARS
    from janito_core.secrets import set_secret

    secret = "sk-live-0123456789abcdefSECRET"
    set_secret("service_token", secret)
    files.load("files", privileges="rw", journal=True)
    # the secret straddles the cut: scrubbed first, no part of it may survive the cut
    content = "x" * (ARGUMENT_CHARS - 10) + secret + "y" * 200_000
    result = files.call("CreateFile", filepath="big.txt", content=content)
    assert result["success"] is True, result
    journal: Journal = files.journal
    (line,) = journal.log()
    kept = line["arguments"]["content"]
    assert kept.startswith("x" * (ARGUMENT_CHARS - 10)) and "more characters]" in kept
    assert len(kept) < ARGUMENT_CHARS + 40 and line["arguments"]["filepath"] == "big.txt"
    assert line["changed"][0]["after"]["sha256"] == hashlib.sha256(
        content.encode()).hexdigest()
    raw = b"".join(path.read_bytes() for path in journal.folder.glob("audit*.jsonl"))
    raw += b"".join(path.read_bytes() for path in journal.folder.glob("logs/*.jsonl"))
    assert len(raw) < 20_000 and b"sk-live-012" not in raw
    (entry,) = journal.entries(str(ws))
    assert entry.header["arguments"]["content"] == kept
    journal.undo([entry.id])
    assert not (ws / "big.txt").exists()


def test_a_turn_of_concurrent_calls_journals_in_order(seeded: Any, ws: Path) -> None:
    from janito_core.dispatch import execute_tool_calls

    calls = [{"type": "tool_use", "id": f"c{i}", "name": "CreateFile",
              "input": {"filepath": "shared.txt", "content": f"v{i}", "overwrite": True}}
             for i in range(6)]
    calls += [{"type": "tool_use", "id": f"o{i}", "name": "CreateFile",
               "input": {"filepath": f"own{i}.txt", "content": "x"}} for i in range(4)]
    before = tree(ws)
    results = execute_tool_calls(calls, registry=seeded.registry)
    assert not any(result["is_error"] for result in results), results
    assert (ws / "shared.txt").read_text() == "v5"
    journal: Journal = seeded.journal
    shared = [e for e in reversed(journal.entries(str(ws))) if e.paths == ["shared.txt"]]
    assert [e.header["call_id"] for e in shared] == [f"c{i}" for i in range(6)]
    undo_all(seeded, ws)
    assert tree(ws) == before


def _overwrite_in_threads(tester: Any, name: str, go: int) -> None:
    """Two threads overwriting ``shared.txt`` 10 times each, from when ``go`` is readable."""
    import threading

    def writer(number: int) -> None:
        for turn in range(10):
            result = tester.call("CreateFile", filepath="shared.txt",
                                 content=f"{name}{number}-{turn}", overwrite=True)
            assert result["success"], result

    os.read(go, 1)
    threads = [threading.Thread(target=writer, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_calls_of_one_path_journal_in_the_order_they_change_it(
        seeded: Any, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads here and two in another process (its own Journal of the same folder)
    overwrite one file at once: each entry's before-image is what the entry before it
    left, and undoing all of them brings back the first version."""
    from janito_core import _images

    keep_file = _images.keep_file

    def keep_slowly(*args: Any) -> bool:
        # between the before-image and the change: where another writer would cut in
        kept = keep_file(*args)
        time.sleep(0.002)
        return kept

    monkeypatch.setattr(_images, "keep_file", keep_slowly)
    (ws / "shared.txt").write_text("first")
    journal: Journal = seeded.journal
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other process
        code = 1
        try:
            seeded.registry.journal = Journal(journal.folder)
            _overwrite_in_threads(seeded, "child", go_read)
            code = 0
        finally:
            os._exit(code)
    os.write(go_write, b"gg")  # both processes at once
    _overwrite_in_threads(seeded, "parent", go_read)
    assert os.waitpid(pid, 0)[1] == 0
    entries = sorted(journal.entries(str(ws)), key=lambda entry: entry.last)
    assert len(entries) == 40
    images = journal.folder / "images"
    left = b"first"
    for entry in entries:
        (change,) = entry.changes
        assert (images / change["before"]["image"]).read_bytes() == left, entry.id
        left = entry.header["arguments"]["content"].encode()
    assert (ws / "shared.txt").read_bytes() == left
    journal.undo([entry.id for entry in entries])
    assert (ws / "shared.txt").read_text() == "first"


KILLS = int(os.environ.get("JANITO_UNDO_KILLS", "300"))


def _writer_loop(tester: Any) -> None:
    """What the killed child does: the same changes, round and round, journaled."""
    number = 0
    while True:
        number += 1
        tester.call("CreateFile", filepath="notes.txt", content=f"v{number}\r\n" * 200,
                    overwrite=True)
        tester.call("ReplaceTextInFile", filepath="docs/a.md", old_str="#", new_str="##")
        tester.call("MoveFile", source="docs", destination="moved")
        tester.call("DeleteFile", filepath="moved/link.md")
        tester.call("RemoveDirectory", directory="moved", recursive=True)
        tester.call("CreateDirectory", directory="made/inner")


def test_sigkill_at_any_moment_leaves_what_undo_puts_back(seeded: Any, ws: Path,
                                                          tmp_path: Path) -> None:
    """SIGKILL lands anywhere in a journaled change (a forked child, a seeded random
    moment); the journal still reads, and undo brings back the tree as it was."""
    before = tree(ws)
    chance = random.Random(33)
    moments: list[float] = []
    for cycle in range(KILLS):
        journal = Journal(tmp_path / f"journal-{cycle}")
        seeded.registry.journal = journal
        delay = chance.uniform(0, 0.03)
        pid = os.fork()
        if pid == 0:  # the child: change things until killed
            try:
                _writer_loop(seeded)
            finally:
                os._exit(0)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        moments.append(delay)
        entries = journal.entries(str(ws))
        if entries:
            journal.undo([entry.id for entry in entries])
        assert without_temporaries(tree(ws)) == before, (
            f"cycle {cycle}, killed after {delay:.4f} s; the entries undone: "
            + json.dumps([(e.tool, e.changes, e.after) for e in entries]))
        for leftover in ws.rglob(".*.tmp"):
            leftover.unlink()
    assert len(moments) == KILLS


def _janito(ws: Path, *args: str) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "janito_core.cli", *args], cwd=ws,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "JANITO_TOOLSETS": "files"})


def test_janito_run_is_journaled_and_the_commands_undo_it(files: Any, ws: Path) -> None:
    (ws / "notes.txt").write_bytes(b"kept\r\n")
    ran = _janito(ws, "run", "-w", "CreateFile", "--filepath", "notes.txt", "--content",
                  "by the model", "--overwrite")
    assert ran.returncode == 0, ran.stderr
    skipped = _janito(ws, "run", "-w", "--no-journal", "CreateFile", "--filepath", "b.txt",
                      "--content", "unrecorded")
    assert skipped.returncode == 0, skipped.stderr
    history = json.loads(_janito(ws, "history", "--json").stdout)
    assert [(h["tool"], h["paths"], h["caller"]["kind"]) for h in history] == \
        [("CreateFile", ["notes.txt"], "cli")]
    dry = _janito(ws, "undo", "--last", "1", "--dry-run")
    assert dry.returncode == 0 and "(dry run)" in dry.stdout
    assert (ws / "notes.txt").read_text() == "by the model"
    undone = json.loads(_janito(ws, "undo", history[0]["id"], "--json").stdout)
    assert undone["success"] and undone["recorded_as"]
    assert (ws / "notes.txt").read_bytes() == b"kept\r\n"
    again = _janito(ws, "undo", history[0]["id"])
    assert again.returncode == 1 and "notes.txt" in again.stderr
    redone = _janito(ws, "undo", undone["recorded_as"])
    assert redone.returncode == 0, redone.stderr
    assert (ws / "notes.txt").read_text() == "by the model"
    log = [json.loads(line) for line in _janito(ws, "log", "--json", "--since", "1h")
           .stdout.splitlines()]
    assert [line["tool"] for line in log] == ["undo", "undo", "CreateFile"]
    assert _janito(ws, "log", "--since", "yesterday-ish").returncode == 2
    assert _janito(ws, "undo").returncode == 2
    assert "no journal entry" in _janito(ws, "undo", "nosuchid").stderr


def test_a_journal_that_cannot_be_written_refuses_the_change(seeded: Any, ws: Path,
                                                             tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the journal's folder would be")
    seeded.registry.journal = Journal(blocked / "journal")
    result = seeded.call("CreateFile", filepath="notes.txt", content="lost?", overwrite=True)
    assert result["success"] is False
    assert "journal" in result["error"] and "change was not made" in result["error"]
    assert "audit log could not be written" in result["not_recorded"]
    assert (ws / "notes.txt").read_bytes() == b"first line\r\nsecond line\r\n"


FULL_DISK = r'''
import json, os, sys
from pathlib import Path
from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool
from janito_core.journal import Journal

small, ws = Path(sys.argv[1]), Path(sys.argv[2])
journal = Journal(small / "journal")
registry = Registry(autoload=(), workspace=Workspace(ws), journal=journal, reports="off",
                    allowed=None)
registry.add_toolset("files")
seen = {}


def call(label, name, **arguments):
    try:
        seen[label] = call_tool(name, arguments, registry=registry)
    except BaseException as exc:  # what must never happen: it raised out of janito
        seen[label] = {"raised": repr(exc)}


call("before", "CreateFile", filepath="a.txt", content="first", overwrite=True)
filler = os.open(small / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
for size in (1 << 16, 1 << 12, 1):  # every byte of the small file system taken
    while True:
        try:
            if os.write(filler, b"f" * size) < size:
                break
        except OSError:
            break
call("overwrite", "CreateFile", filepath="a.txt", content="second", overwrite=True)
seen["created"] = []
for number in range(100):  # each takes room in the log's last block, until none is left
    call("create", "CreateFile", filepath=f"new{number}.txt", content="n" * 300)
    if not seen["create"].get("success"):
        break
    seen["created"].append(f"new{number}.txt")
call("delete", "DeleteFile", filepath="a.txt")
call("remove", "RemoveDirectory", directory="tree", recursive=True)
call("edit", "ReplaceTextInFile", filepath="a.txt", old_str="first", new_str="edited")
seen["workspace"] = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
seen["a"] = (ws / "a.txt").read_text()
os.close(filler)
os.unlink(small / "filler")
call("freed", "CreateFile", filepath="a.txt", content="third", overwrite=True)
entries = journal.entries(str(ws))
seen["entries"] = [entry.header["arguments"]["filepath"] for entry in entries]
journal.undo([entry.id for entry in entries])
seen["undone"] = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
seen["a undone"] = (ws / "a.txt").read_text()
seen["log"] = [(line["tool"], line["success"]) for line in journal.log()]
print(json.dumps(seen))
'''


def test_a_full_disk_refuses_the_change_not_the_journal_entry(files: Any, ws: Path,
                                                              tmp_path: Path) -> None:
    """The journal on a small file system of its own (a 256 KiB tmpfs, in a mount
    namespace), filled to the last byte: a change whose record finds no room is refused
    (``not_journaled``) and leaves the workspace as it was, one whose record fits is made
    and journaled; nothing raises. Once there is room again, the journal reads whole (the
    record the full disk cut short swallows nothing) and undo puts everything back."""
    import shutil
    import subprocess
    import sys

    unshare = shutil.which("unshare", path=os.environ.get("PATH", "") + ":/usr/bin:/bin")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    (ws / "a.txt").write_text("zero")
    (ws / "tree").mkdir()
    (ws / "tree" / "big.bin").write_bytes(os.urandom(64 << 10))
    small = tmp_path / "small"
    small.mkdir()
    ran = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "sh", "-c",
         'mount -t tmpfs -o size=256k janito-full "$1" || exit 77; shift; exec "$@"',
         "sh", str(small), sys.executable, "-c", FULL_DISK, str(small), str(ws)],
        capture_output=True, text=True, timeout=120)
    if ran.returncode == 77 or "unshare failed" in ran.stderr:
        pytest.skip(f"no tmpfs of its own can be mounted here: {ran.stderr.strip()}")
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["before"]["success"], seen
    for label in ("overwrite", "create", "delete", "remove", "edit"):
        result = seen[label]
        assert result["success"] is False and result["error_type"] == "not_journaled", \
            (label, result)
        assert "No space left" in result["error"] and "change was not made" in result["error"]
    assert seen["a"] == "first"
    assert seen["workspace"] == sorted(["a.txt", "tree", "tree/big.bin", *seen["created"]])
    assert seen["freed"]["success"], seen["freed"]
    assert seen["entries"] == ["a.txt", *reversed(seen["created"]), "a.txt"]
    assert seen["undone"] == ["a.txt", "tree", "tree/big.bin"] and seen["a undone"] == "zero"
    assert [tool for tool, _ in seen["log"][:2]] == ["undo", "CreateFile"]


def _overwrite(journal: Journal, root: Path, content: bytes) -> str:
    """One journaled overwrite of ``root/kept.txt``; its entry's id."""
    with Workspace(root) as workspace:
        recording = journal.begin(workspace, "CreateFile", {"filepath": "kept.txt"})
        workspace.journaled(recording).write_file("kept.txt", content, overwrite=True)
        recording.finish({"success": True})
    assert recording.id is not None
    return recording.id


def test_the_journal_lets_go_of_the_oldest_entries_past_its_bounds(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "kept.txt").write_bytes(b"0" * 1000)
    journal = Journal(tmp_path / "journal", max_bytes=2500)
    ids = [_overwrite(journal, root, str(n).encode() * 1000) for n in range(1, 6)]
    assert journal.trim() == ids[:3]  # 1,000 bytes kept by each: the two newest fit
    assert [entry.id for entry in journal.entries()] == ids[:2:-1]
    images = sorted(path.name for path in (tmp_path / "journal" / "images").iterdir())
    assert images == sorted([f"{ids[3]}.i1", f"{ids[4]}.i1"])
    journal.undo([ids[4]])
    assert (root / "kept.txt").read_bytes() == b"4" * 1000
    aged = Journal(tmp_path / "journal", max_age=0.0)
    assert set(aged.trim()) >= {ids[3], ids[4]}
    assert aged.entries() == [] and not list((tmp_path / "journal" / "images").iterdir())


def test_a_log_left_empty_by_a_process_that_ended_is_removed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "kept.txt").write_bytes(b"old")
    logs = tmp_path / "journal" / "logs"
    pid = os.fork()
    if pid == 0:  # a janito of its own, which writes one entry and ends
        try:
            _overwrite(Journal(tmp_path / "journal"), root, b"from the child")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    [child_log] = list(logs.iterdir())
    assert f"-{pid}-" in child_log.name
    journal = Journal(tmp_path / "journal", max_age=0.0)
    ours = _overwrite(journal, root, b"from here")
    assert ours in [entry.id for entry in journal.entries()]
    assert not child_log.exists()
    assert [path.name for path in logs.iterdir()] == [journal._writer.name]  # type: ignore[union-attr]
