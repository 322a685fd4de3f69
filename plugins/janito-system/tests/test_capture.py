"""What RunBashCode's code changes is journaled, and undone, like a file tool's change.

A journaled registry runs real bash in bubblewrap over an overlay of the workspace; the
changes come back through the workspace into the journal, and ``Journal.undo`` puts the
tree back byte for byte: contents, modes, links, empty folders, CRLF.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from janito_system import _capture, _overlay
from janito_system._overlay import make_layers, remove_layers

from janito_core import Privileges, Registry, Workspace, call_tool
from janito_core.journal import Journal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="overlayfs and bubblewrap are Linux's")

CODE = r"""set -e
umask 022
printf 'new\r\nlines\r\n' > created.txt
echo more >> edited.txt
rm deleted.txt
rm -f read-only.txt
rm -rf tree
rm -rf replaced && mkdir replaced && echo fresh > replaced/fresh.txt
mkdir -p made/empty
ln -sfn edited.txt link
chmod 755 script.sh
chmod 700 private
mv renamed-from.txt renamed-to.txt
head -c 3000 /dev/urandom > made/random.bin
"""


def seed(root: Path) -> None:
    (root / "edited.txt").write_bytes(b"line one\r\n")
    (root / "deleted.txt").write_bytes(b"to be deleted\n")
    (root / "read-only.txt").write_bytes(b"read only\n")
    (root / "read-only.txt").chmod(0o444)
    (root / "tree" / "a" / "b").mkdir(parents=True)
    (root / "tree" / "a" / "b" / "deep.txt").write_bytes(b"deep\n")
    (root / "tree" / "empty").mkdir()
    (root / "replaced").mkdir()
    (root / "replaced" / "old.txt").write_bytes(b"old\n")
    (root / "link").symlink_to("deleted.txt")
    (root / "script.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (root / "script.sh").chmod(0o644)
    (root / "private").mkdir(mode=0o755)
    (root / "private").chmod(0o755)
    (root / "renamed-from.txt").write_bytes(b"renamed\n")


def tree(root: Path) -> dict[str, tuple[str, int, bytes | str | None]]:
    """Every entry below ``root``: kind, permission bits, and bytes or link target."""
    found: dict[str, tuple[str, int, bytes | str | None]] = {}
    for folder, folders, files in os.walk(root):
        for name in [*folders, *files]:
            path = Path(folder, name)
            info = path.lstat()
            key = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                found[key] = ("link", 0, os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[key] = ("dir", stat.S_IMODE(info.st_mode), None)
            else:
                found[key] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


@pytest.fixture
def overlay_works() -> None:
    problem = _overlay.overlay_available()
    if problem is not None:
        pytest.skip(f"this kernel or system cannot mount the overlay: {problem}")


@pytest.fixture
def journaled(tmp_path: Path, janito_isolated: Path, monkeypatch: pytest.MonkeyPatch,
              overlay_works: None) -> tuple[Registry, Journal, Path]:
    """A journaled registry of the system toolset over a seeded workspace, bubblewrap
    pinned (only it can show code an overlay)."""
    from system_helpers import mechanism_problem

    problem = mechanism_problem("bubblewrap")
    if problem is not None:
        pytest.skip(f"bubblewrap is not available here: {problem}")
    monkeypatch.setenv("JANITO_SANDBOX_MECHANISM", "bubblewrap")
    monkeypatch.setenv("JANITO_SANDBOX", "workspace-write")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    seed(workspace)
    journal = Journal(tmp_path / "journal")
    registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(workspace),
                        autoload=(), allowed=None, journal=journal)
    registry.add_toolset("system")
    return registry, journal, workspace


def test_bash_changes_are_journaled_and_undone_byte_for_byte(
        journaled: tuple[Registry, Journal, Path]) -> None:
    registry, journal, workspace = journaled
    before = tree(workspace)
    result = call_tool("RunBashCode", {"code": CODE}, registry=registry)
    assert result["success"] is True, result
    assert "not_applied" not in result and "not_undoable" not in result, result
    after = tree(workspace)
    assert after["created.txt"] == ("file", 0o644, b"new\r\nlines\r\n")
    assert after["edited.txt"] == ("file", 0o644, b"line one\r\nmore\n")
    assert "deleted.txt" not in after and "read-only.txt" not in after
    assert not any(name.startswith("tree") for name in after)
    assert after["replaced/fresh.txt"][2] == b"fresh\n" and "replaced/old.txt" not in after
    assert after["made/empty"] == ("dir", 0o755, None)
    assert after["link"] == ("link", 0, "edited.txt")
    assert after["script.sh"][1] == 0o755
    assert after["private"] == ("dir", 0o700, None)
    assert after["renamed-to.txt"][2] == b"renamed\n" and "renamed-from.txt" not in after
    assert len(after["made/random.bin"][2] or b"") == 3000
    assert set(result["changed"]) >= {"created.txt", "edited.txt", "deleted.txt", "tree",
                                      "replaced", "made/random.bin", "link", "script.sh"}

    [entry] = journal.entries()
    assert entry.tool == "RunBashCode"
    assert set(entry.paths) >= {"created.txt", "tree", "replaced/fresh.txt", "private"}
    [line] = journal.log()
    assert line["entry"] == entry.id and line["success"] is True
    assert {change["path"] for change in line["changed"]} >= {"created.txt", "tree"}

    journal.undo([entry.id])
    assert tree(workspace) == before


def test_the_undo_of_code_can_itself_be_undone(journaled: tuple[Registry, Journal, Path]) -> None:
    registry, journal, workspace = journaled
    result = call_tool("RunBashCode", {"code": CODE}, registry=registry)
    assert result["success"] is True, result
    changed = tree(workspace)
    [entry] = journal.entries()
    undone = journal.undo([entry.id])
    assert undone.recorded is not None
    journal.undo([undone.recorded])
    redone = tree(workspace)
    random_bytes = changed.pop("made/random.bin")
    assert redone.pop("made/random.bin") == random_bytes
    assert redone == changed


def test_code_that_changes_nothing_leaves_no_entry(
        journaled: tuple[Registry, Journal, Path]) -> None:
    registry, journal, workspace = journaled
    before = tree(workspace)
    result = call_tool("RunBashCode", {"code": "cat edited.txt; ls -la > /dev/null"},
                       registry=registry)
    assert result["success"] is True and "changed" not in result, result
    assert journal.entries() == [] and tree(workspace) == before


def test_what_code_wrote_before_a_timeout_is_kept_and_undoable(
        journaled: tuple[Registry, Journal, Path]) -> None:
    registry, journal, workspace = journaled
    result = call_tool("RunBashCode", {"code": "echo partial > partial.txt; sleep 30",
                                       "timeout": 1}, registry=registry)
    assert result["error_type"] == "timeout", result
    assert result["changed"] == ["partial.txt"]
    assert (workspace / "partial.txt").read_bytes() == b"partial\n"
    [entry] = journal.entries()
    journal.undo([entry.id])
    assert not (workspace / "partial.txt").exists()


def test_a_folder_from_the_workspace_cannot_be_renamed_in_place(
        journaled: tuple[Registry, Journal, Path]) -> None:
    """The overlay's visible cost (decision 0015): rename(2) of a workspace folder fails
    with EXDEV, and mv falls back to a copy, which is captured like any other change."""
    registry, journal, workspace = journaled
    before = tree(workspace)
    result = call_tool("RunBashCode", {"code": "python3 -c 'import os; os.rename(\"tree\", "
                                               "\"t2\")' || echo refused; mv tree moved"},
                       registry=registry)
    assert result["success"] is True, result
    assert "refused" in result["stdout"] and "Invalid cross-device link" in result["stderr"]
    assert (workspace / "moved" / "a" / "b" / "deep.txt").read_bytes() == b"deep\n"
    assert not (workspace / "tree").exists()
    [entry] = journal.entries()
    journal.undo([entry.id])
    assert tree(workspace) == before


def test_janitos_state_and_the_journal_stay_out_of_reach_under_capture(
        tmp_path: Path, journaled: tuple[Registry, Journal, Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal inside the workspace: code that reaches for it finds an empty folder,
    and nothing it does there is applied."""
    _, _, workspace = journaled
    state = workspace / "state"
    state.mkdir()
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    journal = Journal(state / "journal")
    registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(workspace),
                        autoload=(), allowed=None, journal=journal)
    registry.add_toolset("system")
    call_tool("RunBashCode", {"code": "echo first > first.txt"}, registry=registry)
    kept = tree(state)
    assert kept
    attack = ("ls -la state/journal; cat state/journal/audit.jsonl; "
              "rm -rf state/journal; echo planted > state/journal-planted; "
              "rm -rf state || true; echo ran > ran.txt")
    result = call_tool("RunBashCode", {"code": attack}, registry=registry)
    assert (workspace / "ran.txt").read_bytes() == b"ran\n", result
    assert "first.txt" not in result["stdout"], result
    now = tree(state)
    for name, value in kept.items():
        if name.endswith(".jsonl"):  # the logs janito appends to: grown, never changed
            assert isinstance(value[2], bytes) and now[name][2].startswith(value[2]), name
        else:
            assert now[name] == value, name
    assert not (state / "journal-planted").exists()


def test_a_path_changed_while_the_code_ran_is_left_alone(tmp_path: Path,
                                                          overlay_works: None) -> None:
    """The conflict check, staged: the upper layer holds the code's file, and the workspace's
    file changed after the call began; that one change is not applied and is named."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "shared.txt").write_bytes(b"before\n")
    journal = Journal(tmp_path / "journal")
    layers = make_layers(str(workspace))
    try:
        Path(layers.upper, "shared.txt").write_bytes(b"the code's\n")
        Path(layers.upper, "other.txt").write_bytes(b"other\n")
        since = time.time_ns()
        time.sleep(0.02)  # past the file system's clock tick
        (workspace / "shared.txt").write_bytes(b"someone else's\n")
        with Workspace(workspace) as plain:
            recording = journal.begin(plain, "RunBashCode", {})
            said = _capture.apply(plain.journaled(recording), layers, since)
            recording.finish({"success": True})
    finally:
        remove_layers(layers)
    assert said["changed"] == ["other.txt"]
    [left] = said["not_applied"]
    assert left["path"] == "shared.txt" and "while the code ran" in left["reason"]
    assert (workspace / "shared.txt").read_bytes() == b"someone else's\n"


def test_without_an_overlay_the_result_says_changes_are_not_kept(
        tmp_path: Path, janito_isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from system_helpers import mechanism_problem

    if mechanism_problem("supervisor") is not None:
        pytest.skip("the supervisor is not available here")
    monkeypatch.setenv("JANITO_SANDBOX_MECHANISM", "supervisor")
    monkeypatch.setenv("JANITO_SANDBOX", "workspace-write")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(workspace),
                        autoload=(), allowed=None, journal=Journal(tmp_path / "journal"))
    registry.add_toolset("system")
    result = call_tool("RunBashCode", {"code": "echo x > x.txt"}, registry=registry)
    assert result["success"] is True, result
    [notice] = result["not_undoable"]
    assert "not kept for undo" in notice and "supervisor" in notice
    assert (workspace / "x.txt").exists()


def _policy_registry(root: Path, journal: Journal, mode: str = "full-auto",
                     approver: Any = None) -> Registry:
    from janito_core.policy import Policy

    policy = Policy.load(str(root))
    if mode != "full-auto":
        policy = policy.merged(Policy.from_data({"mode": mode}))
    made = Registry(workspace=Workspace(str(root)), autoload=(), allowed=None, reports="off",
                    policy=policy, approver=approver, journal=journal)
    made.add_toolset("system")
    return made


@pytest.fixture
def masked(tmp_path: Path, journaled: tuple[Registry, Journal, Path]) -> tuple[Path, Journal]:
    """A workspace with a project policy (denied files, .janito/, .git/), journaled."""
    from test_policy_mask import lay_out

    _, journal, _ = journaled
    root = tmp_path / "masked"
    root.mkdir()
    lay_out(root)
    return root, journal


def test_under_capture_the_policys_paths_stay_covered_and_unchanged(
        masked: tuple[Path, Journal]) -> None:
    """The attacks of test_policy_mask, captured: reads of denied paths, moves of covered
    ones, and edits of .janito/ and .git/ change nothing, through the overlay or after it."""
    from test_policy_mask import ATTACK_POLICY, GIT_WRITE, READS, SECRETS, leaked
    from test_policy_mask import tree as mask_tree

    root, journal = masked
    before = mask_tree(root)
    tools = _policy_registry(root, journal)
    read = call_tool("RunBashCode", {"code": READS}, registry=tools)
    assert leaked(read, SECRETS.values()) == [], read
    moves = ("mv conf open; mv conf/prod/key.pem loose.pem; mv secrets open-folder; "
             "mv .env env.txt; ln .env hard; rm -rf conf d; cp -a conf open-copy; true")
    call_tool("RunBashCode", {"code": moves}, registry=tools)
    attack = call_tool("RunBashCode", {"code": ATTACK_POLICY}, registry=tools)
    assert attack["stdout"] == "done\n", attack
    git = call_tool("RunBashCode", {"code": GIT_WRITE}, registry=tools)
    assert "wrote" not in git["stdout"], git
    after = mask_tree(root)
    for relative in [*SECRETS, ".janito/policy.toml", ".git/config"]:
        assert after[relative] == before[relative], relative
    assert not any(path.startswith(("janito-old", "x")) for path in after)
    made = {path: entry for path, entry in after.items() if path not in before}
    assert all(entry[1] in (None, b"") for entry in made.values()), made
    again = call_tool("RunBashCode", {"code": "cat open-copy/prod/key.pem loose.pem env.txt "
                                              "2>&1; true"}, registry=tools)
    assert leaked(again, SECRETS.values()) == [], again


def test_an_approved_write_of_git_is_captured_and_undone(masked: tuple[Path, Journal]) -> None:
    from test_policy_mask import GIT_WRITE

    root, journal = masked
    config = (root / ".git" / "config").read_bytes()
    approved = call_tool("RunBashCode", {"code": GIT_WRITE},
                         registry=_policy_registry(root, journal, "ask", lambda request: True))
    assert approved["stdout"] == "wrote\n" and "not_applied" not in approved, approved
    assert (root / ".git" / "config").read_bytes().endswith(b"planted = yes\n")
    [entry] = journal.entries(str(root))
    journal.undo([entry.id])
    assert (root / ".git" / "config").read_bytes() == config
    assert not (root / ".git" / "hooks-planted").exists()
