"""Check-then-use races: a folder of the workspace keeps turning into a link to outside.

A separate process (so it runs truly in parallel, not between the GIL switches of the test)
turns ``ws/dir`` as fast as it can from a real folder into a link to the sentinel tree
outside and back (the folder is renamed aside, a link renamed into its place, then the
folder back). Meanwhile every file tool is called on paths through ``dir`` for
:data:`ROUNDS` racing rounds. A tool that resolved a path and then used it would, now and
then, read or change the outside tree (the check saw a folder, the use met the link); a
tool that walks by descriptor never does. Each round the outside tree is checked (every
entry's kind, size, mtime, mode and content hash) and every result searched for the
sentinel text.

The swapping process is driven in lock-step with the calls: before every few racing
rounds it holds the folder in place for one call and the link for the next, so that each
test meets both states whatever the scheduler does (a tool that walks a whole folder, as
SearchText does, can otherwise take so long that the swaps never leave it a whole call in
the folder state): held in place the folder always works, the link never does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

from janito_core.dispatch import call_tool

ROUNDS = int(os.environ.get("JANITO_RELIABILITY_RACE_ROUNDS", "500"))

#: Racing rounds between two held ones (the folder held, then the link held).
RACING_BETWEEN_HELD = 8

SWAPPER = textwrap.dedent("""
    import errno, os, queue, sys, threading
    ws, outside = sys.argv[1:3]
    folder, aside = os.path.join(ws, "dir"), os.path.join(ws, ".dir.aside")
    link = os.path.join(ws, ".dir.link")
    commands = queue.SimpleQueue()
    made = 0

    def listen():  # one state a line: folder, link or race; the end of stdin stops
        for line in sys.stdin:
            commands.put(line.strip())
        commands.put("stop")

    def put(name):
        # Renamed into the place of dir, which a call may have made again (CreateFile and
        # CreateDirectory make missing parents) while it was gone: moved aside, that is.
        global made
        while True:
            try:
                return os.rename(name, folder)
            except OSError as exc:
                if exc.errno not in (errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY,
                                     errno.EEXIST):
                    raise
            made += 1
            os.rename(folder, os.path.join(ws, ".dir.made-%d" % made))

    def put_link():
        os.rename(folder, aside)
        os.symlink(outside, link)
        put(link)

    def put_folder():
        os.unlink(folder)
        put(aside)

    threading.Thread(target=listen, daemon=True).start()
    swaps = 0
    state = "race"
    while True:
        if state == "link":
            put_link()
            swaps += 1
        print(state, flush=True)  # the state is in place (or the swapping begins)
        while state == "race" and commands.empty():
            put_link()
            swaps += 1
            put_folder()
        told = commands.get()
        if state == "link":
            put_folder()
        if told == "stop":
            break
        state = told
    print("swaps", swaps, flush=True)
""")


def schedule(racing: int) -> Iterator[str]:
    """The state of each round until ``racing`` racing rounds: the folder held, the link
    held, then :data:`RACING_BETWEEN_HELD` racing rounds, over and over."""
    done = 0
    while done < racing:
        yield "folder"
        yield "link"
        for _ in range(min(RACING_BETWEEN_HELD, racing - done)):
            done += 1
            yield "race"


class Race:
    """The workspace, the sentinel tree outside, and the swapping process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        (self.ws / "dir").mkdir(parents=True)
        # The folder keeps moving between two names; the test reaches it by descriptor.
        self.real = os.open(self.ws / "dir", os.O_RDONLY | os.O_DIRECTORY)
        self.outside = rel.make_sentinel_tree(root / "outside")
        for name in ("a.txt", "victim.txt"):
            (self.outside / name).write_text(f"{rel.SENTINEL_TEXT} {name}\n", encoding="utf-8")
        (self.outside / "sub").mkdir()
        (self.outside / "sub" / "deep.txt").write_text(f"{rel.SENTINEL_TEXT} deep\n",
                                                       encoding="utf-8")
        self.seed()
        self.before = rel.snapshot(self.outside)
        self.process: subprocess.Popen[str] | None = None

    def seed(self) -> None:
        """What the tools act on, put back through the folder's descriptor (never through
        the name ``dir``, which may be the link)."""
        try:
            os.rmdir("sub/made", dir_fd=self.real)  # what CreateDirectory made
        except FileNotFoundError:
            pass
        for name in ("a.txt", "victim.txt", "sub/deep.txt"):
            if name.startswith("sub/"):
                try:
                    os.mkdir("sub", dir_fd=self.real)
                except FileExistsError:
                    pass
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644,
                         dir_fd=self.real)
            os.write(fd, f"inside {name}\n".encode())
            os.close(fd)
        (self.ws / "moved.txt").unlink(missing_ok=True)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, str(self.ws), str(self.outside)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._said("race")  # the process runs and swaps

    def hold(self, state: str) -> None:
        """Put ``"folder"`` or ``"link"`` in place until the next hold, or ``"race"``:
        swap freely until then. Returns once the process says it did."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(state + "\n")
        self.process.stdin.flush()
        self._said(state)

    def _said(self, state: str) -> None:
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        assert line == state, f"the swapping process said {line!r}, not {state!r}"

    def stop(self) -> int:
        """End the process (the end of its stdin), the folder back in place; its swaps."""
        assert self.process is not None
        out, _ = self.process.communicate(timeout=60)
        os.close(self.real)
        assert self.process.returncode == 0, "the swapping process failed (its stderr says why)"
        words = out.split()
        return int(words[-1]) if words[-2:-1] == ["swaps"] else 0

    def outside_changes(self) -> list[str]:
        return rel.diff(self.before, rel.snapshot(self.outside))


CALLS: dict[str, dict[str, Any]] = {
    "ReadFile": {"filepath": "dir/a.txt"},
    "ReadMultipleFiles": {"filepaths": ["dir/a.txt", "dir/sub/deep.txt"]},
    "WordCount": {"filepath": "dir/a.txt"},
    "SearchText": {"paths": ["dir"], "query": "SENTINEL", "max_depth": 5},
    "SearchRegex": {"paths": ["dir"], "pattern": "SENT[I]NEL", "exclude": "nothing-*"},
    "ListFiles": {"directory": "dir", "recursive": True},
    "FindFiles": {"paths": ["dir"], "pattern": "*.txt"},
    "CreateFile": {"filepath": "dir/victim.txt", "content": "PWNED", "overwrite": True},
    "ReplaceTextInFile": {"filepath": "dir/victim.txt", "old_str": "victim",
                          "new_str": "PWNED"},
    "MoveFile": {"source": "dir/a.txt", "destination": "moved.txt"},
    "DeleteFile": {"filepath": "dir/victim.txt"},
    "RemoveDirectory": {"directory": "dir/sub", "recursive": True},
    "CreateDirectory": {"directory": "dir/sub/made"},
}


@pytest.fixture
def race(tmp_path: Path) -> Iterator[Race]:
    made = Race(tmp_path)
    made.start()
    try:
        yield made
    finally:
        swaps = made.stop()
        rel.count("races: swaps of a folder for a link to outside", swaps)


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_a_folder_swapped_for_a_link_never_leads_out(tool: str, race: Race) -> None:
    registry = rel.make_registry(race.ws, "rw", toolsets=["files"])
    arguments = CALLS[tool]
    hits: list[str] = []
    outcomes: dict[str, list[bool]] = {"folder": [], "link": [], "race": []}
    for round_number, state in enumerate(schedule(ROUNDS)):
        race.hold(state)
        result = rel.swept(call_tool(tool, arguments, registry=registry), f"race {tool}")
        text = json.dumps(result)
        if rel.SENTINEL_TEXT in text or "sentinel-" in text:
            hits.append(f"round {round_number} ({state}): the result shows the outside "
                        f"tree: {text[:300]}")
        if result.get("error_type") == "tool_exception":
            hits.append(f"round {round_number} ({state}): the tool raised: "
                        f"{result['error'][:300]}")
        changes = race.outside_changes()
        if changes:
            hits.append(f"round {round_number} ({state}): outside changed: {changes[:3]}")
            break
        outcomes[state].append(bool(result["success"]))
        if state != "race" and result["success"] != (state == "folder"):
            hits.append(f"round {round_number}: with the {state} held in place {tool} "
                        f"answered {text[:300]}")
        race.seed()
    racing = outcomes["race"]
    rel.count(f"races: {tool} calls while the folder was swapped", len(racing))
    rel.count("races: calls that reached outside", len(hits))
    assert not hits, f"{tool} reached outside the workspace, raised, or did not work " \
        "inside and refuse through the link:\n" + "\n".join(hits[:5])
    # Both states were met: each held state had its rounds (and gave what it should).
    assert outcomes["folder"] and outcomes["link"] and len(racing) == ROUNDS, outcomes
    sys.stderr.write(f"{tool}: {sum(racing)} racing calls inside, "
                     f"{len(racing) - sum(racing)} refused, 0 outside; held: "
                     f"{len(outcomes['folder'])} inside, {len(outcomes['link'])} refused\n")
