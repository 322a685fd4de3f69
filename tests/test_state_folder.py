"""janito's own state folder is out of the workspace's reach, however a path names it.

The configuration folder (settings, the file secrets store, server and trust lists) may
lie inside the workspace: the workspace is the home folder with the default
``~/.config/janito``, or ``JANITO_CONFIG_DIR`` points into a project. Every operation of
the ``Workspace`` then refuses it, by its names and by its identity, and walks and
listings leave it out. A workspace that lies inside the state folder, or is it, refuses
every path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from janito_core import Workspace, WorkspaceError

SECRET = "state-secret-value-5c1f"


def _tree_digest(folder: Path) -> list[tuple[str, str]]:
    found = []
    for path in sorted(folder.rglob("*")):
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        found.append((str(path.relative_to(folder)), hashlib.sha256(data).hexdigest()))
    return found


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace that is a home folder holding janito's state at .config/janito."""
    root = tmp_path / "home"
    state = root / ".config" / "janito"
    state.mkdir(parents=True)
    (state / "secrets.json").write_text(f'{{"token": "{SECRET}"}}')
    (state / "config.json").write_text('{"sandbox": "workspace-write"}')
    (root / ".config" / "other.conf").write_text("not janito's")
    (root / "notes.txt").write_text("hello")
    (root / "to-state").symlink_to(".config/janito")
    (root / "to-secrets").symlink_to(state / "secrets.json")
    (root / "to-config").symlink_to(root / ".config")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("../.config")
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    return root


SPELLINGS = [
    ".config/janito/secrets.json",
    "./.config/janito/secrets.json",
    ".config/./janito/secrets.json",
    ".config//janito//secrets.json",
    "sub/../.config/janito/secrets.json",
    ".config/janito/../janito/secrets.json",
    "to-state/secrets.json",
    "to-secrets",
    "to-config/janito/secrets.json",
    "sub/up/janito/secrets.json",
    "{root}/.config/janito/secrets.json",
    "{root}/to-state/secrets.json",
    ".config/janito",
    ".config/janito/",
    "to-state",
    "to-state/",
    ".config/janito/new-file",
    ".config/janito/new-folder/x",
    ".config/janito/cache/toolsets/0badcafe.json",  # what a toolset's manifest would be
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_reaches_the_state_folder(home: Path, spelling: str) -> None:
    path = spelling.format(root=home)
    before = _tree_digest(home / ".config" / "janito")
    workspace = Workspace(home)
    attempts = [
        lambda: workspace.read_bytes(path),
        lambda: workspace.open_regular(path),
        lambda: workspace.listdir(path),
        lambda: list(workspace.walk(path)),
        lambda: workspace.stat(path),
        lambda: workspace.write_file(path, b"{}", overwrite=True),
        lambda: workspace.mkdir(path),
        lambda: workspace.within(path),
    ]
    if spelling not in ("to-secrets", "to-state"):
        # A final link is removed or renamed as the link itself, which is the workspace's.
        attempts += [
            lambda: workspace.remove(path),
            lambda: workspace.rmdir(path, recursive=True),
            lambda: workspace.rename(path, "moved"),
            lambda: workspace.rename("notes.txt", path, overwrite=True),
        ]
    for attempt in attempts:
        with pytest.raises((WorkspaceError, OSError)) as caught:
            attempt()
        if isinstance(caught.value, WorkspaceError):
            assert caught.value.error_type == "outside_workspace"
        assert SECRET not in str(caught.value)
    if spelling not in ("to-secrets", "to-state"):
        assert not workspace.exists(path)
    assert _tree_digest(home / ".config" / "janito") == before
    assert (home / "notes.txt").read_text() == "hello"


def test_refusals_name_janito_state(home: Path) -> None:
    with pytest.raises(WorkspaceError) as caught:
        Workspace(home).read_bytes(".config/janito/secrets.json")
    assert caught.value.error_type == "outside_workspace"
    assert "janito's own configuration folder" in caught.value.reason


def test_walks_and_listings_leave_it_out(home: Path) -> None:
    workspace = Workspace(home)
    walked = [entry.relative for entry in workspace.walk(".")]
    assert ".config/other.conf" in walked and "notes.txt" in walked
    assert not [p for p in walked if p.startswith(".config/janito")]
    assert "janito" not in workspace.listdir(".config")
    assert "other.conf" in workspace.listdir(".config")
    assert [e.relative for e in workspace.walk(".config")] == [".config/other.conf"]
    # A link to the state folder is listed as a link and never followed.
    kinds = {entry.relative: entry.kind for entry in workspace.walk(".")}
    assert kinds["to-state"] == "symlink"


def test_folders_that_hold_it_are_neither_removed_nor_moved(home: Path) -> None:
    workspace = Workspace(home)
    for attempt in (lambda: workspace.rmdir(".config", recursive=True),
                    lambda: workspace.rename(".config", "elsewhere"),
                    lambda: workspace.rename("to-config/", "elsewhere")):
        with pytest.raises(WorkspaceError) as caught:
            attempt()
        assert caught.value.error_type == "outside_workspace"
    assert (home / ".config" / "janito" / "secrets.json").is_file()
    # The rest of the folder is the workspace's like any other.
    workspace.remove(".config/other.conf")
    assert not (home / ".config" / "other.conf").exists()
    workspace.rename("to-state", "renamed-link")  # a link to it is only a link
    assert (home / "renamed-link").is_symlink()


def test_a_state_folder_yet_to_be_made_is_refused_by_name(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(root / "state" / "janito"))
    workspace = Workspace(root)
    for attempt in (lambda: workspace.mkdir("state/janito"),
                    lambda: workspace.write_file("state/janito/config.json", b"{}"),
                    lambda: workspace.write_file("./state/../state/janito/mcp.json", b"{}")):
        with pytest.raises(WorkspaceError):
            attempt()
    assert not (root / "state" / "janito").exists()
    workspace.write_file("state/other.txt", b"fine")
    assert (root / "state" / "other.txt").read_bytes() == b"fine"


@pytest.mark.parametrize("placement", ["equal", "above"])
def test_a_workspace_within_the_state_folder_refuses_every_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, placement: str) -> None:
    state = tmp_path / "janito"
    state.mkdir()
    (state / "secrets.json").write_text(SECRET)
    root = state if placement == "equal" else state / "projects" / "p"
    root.mkdir(parents=True, exist_ok=True)
    (root / "file.txt").write_text("x")
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    workspace = Workspace(root)
    for attempt in (lambda: workspace.read_bytes("file.txt"), lambda: workspace.listdir("."),
                    lambda: list(workspace.walk(".")),
                    lambda: workspace.write_file("new.txt", b"x"),
                    lambda: workspace.read_bytes("secrets.json")):
        with pytest.raises(WorkspaceError) as caught:
            attempt()
        assert caught.value.error_type == "outside_workspace"
    notice = workspace.state_notice()
    assert notice is not None and "lies inside janito's own configuration folder" in notice


def test_a_state_folder_elsewhere_changes_nothing(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    (root / ".config" / "janito").mkdir(parents=True)
    (root / ".config" / "janito" / "own.txt").write_text("the project's own")
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(tmp_path / "state"))
    workspace = Workspace(root)
    assert workspace.read_bytes(".config/janito/own.txt") == b"the project's own"
    assert workspace.state_notice() is None


def test_inner_workspaces_keep_hiding_it(home: Path) -> None:
    inner = Workspace(home).within(".config")
    with pytest.raises(WorkspaceError):
        inner.read_bytes("janito/secrets.json")
    assert inner.listdir(".") == ["other.conf"]


@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare (util-linux)")
def test_a_bind_mount_of_the_state_folder_is_refused_by_identity(home: Path) -> None:
    """Another name for the same folder (a bind mount, or a case-insensitive file system)
    is refused by its device and inode, in a private mount namespace."""
    alias = home / "alias"
    alias.mkdir()
    script = (
        "import subprocess, sys\n"
        f"subprocess.run(['mount', '--bind', {str(home / '.config' / 'janito')!r}, "
        f"{str(alias)!r}], check=True)\n"
        "from janito_core import Workspace, WorkspaceError\n"
        f"w = Workspace({str(home)!r})\n"
        "outcomes = []\n"
        "for attempt in (lambda: w.read_bytes('alias/secrets.json'), lambda: w.listdir('alias'),\n"
        "                lambda: w.write_file('alias/config.json', b'{}', overwrite=True)):\n"
        "    try:\n"
        "        attempt()\n"
        "        outcomes.append('reached')\n"
        "    except WorkspaceError as exc:\n"
        "        outcomes.append(exc.error_type)\n"
        "print(','.join(outcomes))\n"
    )
    done = subprocess.run(["unshare", "-rm", sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ), check=False)
    # No namespace at all ("unshare failed": a chroot, a container's seccomp profile) or
    # no mount in it: nothing to test here, and nothing of janito was run.
    if done.returncode != 0 and not done.stdout and (
            "mount" in done.stderr or "unshare failed" in done.stderr):
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "outside_workspace,outside_workspace,outside_workspace"
    assert SECRET not in done.stdout
