"""Check-then-use races: a folder of the workspace keeps turning into a link to outside.

A separate process (so it runs truly in parallel, not between the GIL switches of the test)
turns ``ws/dir`` as fast as it can from a real folder into a link to the sentinel tree
outside and back (the folder is renamed aside, a link renamed into its place, then the
folder back). Meanwhile every file tool is called on paths through ``dir`` for
:data:`ROUNDS` rounds. A tool that resolved a path and then used it would, now and then,
read or change the outside tree (the check saw a folder, the use met the link); a tool that
walks by descriptor never does. Each round the outside tree is checked (every entry's kind, size, mtime, mode
and content hash) and every result searched for the sentinel text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

from janito_core.dispatch import call_tool

ROUNDS = int(os.environ.get("JANITO_RELIABILITY_RACE_ROUNDS", "500"))

SWAPPER = textwrap.dedent("""
    import os, sys
    ws, outside = sys.argv[1:3]
    folder, aside = os.path.join(ws, "dir"), os.path.join(ws, ".dir.aside")
    link = os.path.join(ws, ".dir.link")
    stop = os.path.join(ws, ".stop")
    swaps = 0
    while not os.path.exists(stop):
        os.rename(folder, aside)
        os.symlink(outside, link)
        os.rename(link, folder)
        swaps += 1
        os.unlink(folder)
        os.rename(aside, folder)
    print(swaps)
""")


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
            stdout=subprocess.PIPE, text=True)
        time.sleep(0.2)

    def stop(self) -> int:
        (self.ws / ".stop").touch()
        assert self.process is not None
        out, _ = self.process.communicate(timeout=60)
        (self.ws / ".stop").unlink()
        os.close(self.real)
        return int(out.strip() or 0)

    def outside_changes(self) -> list[str]:
        return rel.diff(self.before, rel.snapshot(self.outside))


CALLS: dict[str, dict[str, Any]] = {
    "ReadFile": {"filepath": "dir/a.txt"},
    "ReadMultipleFiles": {"filepaths": ["dir/a.txt", "dir/sub/deep.txt"]},
    "WordCount": {"filepath": "dir/a.txt"},
    "SearchText": {"paths": ["dir"], "query": "SENTINEL", "max_depth": 0},
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
    inside = refused = 0
    for round_number in range(ROUNDS):
        result = rel.swept(call_tool(tool, arguments, registry=registry), f"race {tool}")
        text = json.dumps(result)
        if rel.SENTINEL_TEXT in text or "sentinel-" in text:
            hits.append(f"round {round_number}: the result shows the outside tree: {text[:300]}")
        if result.get("error_type") == "tool_exception":
            hits.append(f"round {round_number}: the tool raised: {result['error'][:300]}")
        changes = race.outside_changes()
        if changes:
            hits.append(f"round {round_number}: outside changed: {changes[:3]}")
            break
        if result["success"]:
            inside += 1
        else:
            refused += 1
        race.seed()
    rel.count(f"races: {tool} calls while the folder was swapped", ROUNDS)
    rel.count("races: calls that reached outside", len(hits))
    assert not hits, f"{tool} reached outside the workspace or raised:\n" + "\n".join(hits[:5])
    assert inside > 0, f"{tool} never worked inside during the race: the test proves nothing"
    sys.stderr.write(f"{tool}: {inside} calls inside, {refused} refused, 0 outside\n")
