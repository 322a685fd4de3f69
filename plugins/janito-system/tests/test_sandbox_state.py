"""janito's own state folder is absent for sandboxed code, wherever it lies.

The state folder (``janito_core.config.config_dir()``: settings, the file secrets store,
server and trust lists) is placed elsewhere, inside the workspace (a ``JANITO_CONFIG_DIR``
in a project, or the default ``~/.config/janito`` with the home folder as the workspace),
equal to the workspace, and above it. Under each mechanism, code that reads it with cat,
Python's open, find, ls and tar, and writes ``{"sandbox": "off"}`` into its
``config.json``, reads and writes nothing, and the next call is still confined. Where the
mechanism cannot hide the folder (the workspace inside it; under the supervisor, the folder
inside a folder the code may write), no code runs and the call says why.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from janito_core import Privileges, Registry, Workspace, call_tool
from janito_core.sandbox import sandbox_policy

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the sandbox mechanisms are Linux ones")

SECRET = "STATE-SECRET-7f3c1e9a"
SETTINGS = b'{"sandbox": "workspace-write"}\n'
PLACEMENTS = ("elsewhere", "inside", "home", "equal", "above")

ATTACK = r"""S={state}
cat "$S/secrets.json" "$S/config.json"
python3 -c 'import sys; print(open(sys.argv[1]).read())' "$S/secrets.json"
find "$S"
ls -la "$S"
tar cf - "$S" | cat -v
tar cf "$TMPDIR/state.tar" "$S" && tar xOf "$TMPDIR/state.tar"
echo '{{"sandbox": "off"}}' > "$S/config.json"
python3 -c 'import sys; open(sys.argv[1], "w").write("{{\"sandbox\": \"off\"}}")' "$S/config.json"
mkdir -p "$S/planted" ; echo planted > "$S/planted.json" ; rm -f "$S/secrets.json"
cat -v "$S"/journal/logs/* "$S"/journal/images/*
echo '{{}}' >> "$S"/journal/logs/* ; rm -rf "$S/journal"
touch {workspace}/attack-ran
"""


def place(tmp_path: Path, placement: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(workspace, state folder) laid out as ``placement`` says, with a secret stored."""
    from janito_core.secrets import set_secret

    if placement == "elsewhere":
        workspace, state = tmp_path / "ws", tmp_path / "state"
    elif placement == "inside":
        workspace = tmp_path / "ws"
        state = workspace / "project-state" / "janito"
    elif placement == "home":
        workspace = tmp_path / "home"
        state = workspace / ".config" / "janito"
    elif placement == "equal":
        workspace = state = tmp_path / "ws"
    else:
        state = tmp_path / "state"
        workspace = state / "project"
    workspace.mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    if placement == "home":  # the default place, found from the home folder
        monkeypatch.setenv("HOME", str(workspace))
        monkeypatch.delenv("JANITO_CONFIG_DIR", raising=False)
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    set_secret("state_probe", SECRET)
    (state / "config.json").write_bytes(SETTINGS)
    _journal_an_entry(state, tmp_path / "journaled")
    assert (state / "secrets.json").exists()
    return workspace, state


def _journal_an_entry(state: Path, folder: Path) -> None:
    """A real journal entry in the state folder, whose kept image holds SECRET: the
    journal is part of what code must neither read nor change."""
    from janito_core.journal import Journal

    folder.mkdir()
    (folder / "notes.txt").write_text(f"before {SECRET}\n")
    journal = Journal(state / "journal")
    with Workspace(folder) as workspace:
        recording = journal.begin(workspace, "CreateFile", {"filepath": "notes.txt"})
        workspace.journaled(recording).write_file("notes.txt", b"after\n", overwrite=True)
        recording.finish({"success": True})
    assert list((state / "journal" / "images").iterdir())


def contents(folder: Path) -> dict[str, bytes | None]:
    """Every entry below ``folder``, with the bytes of each file."""
    found: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            found[str(path.relative_to(folder))] = path.read_bytes()
        else:
            found[str(path.relative_to(folder))] = None
    return found


def refused(placement: str, mechanism: str) -> bool:
    """Whether no code may run with the state folder placed so under ``mechanism``."""
    if placement in ("equal", "above"):
        return True
    return mechanism == "supervisor" and placement in ("inside", "home")


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_sandboxed_code_never_reads_or_writes_janito_state(
        placement: str, mechanism: str, tmp_path: Path, janito_isolated: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    workspace, state = place(tmp_path, placement, monkeypatch)
    outside = tmp_path / "outside"
    outside.mkdir()
    registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(workspace),
                        autoload=(), allowed=None)
    registry.add_toolset("system")
    before = contents(state)
    policy_before = sandbox_policy()
    real_state = os.path.realpath(state)
    attack = call_tool("RunBashCode", {"code": ATTACK.format(state=real_state,
                                                               workspace=workspace)},
                       registry=registry)
    text = json.dumps(attack)
    assert SECRET not in text, attack
    if refused(placement, mechanism):
        assert attack["error_type"] == "sandbox_unavailable", attack
        assert real_state in attack["error"] and "JANITO_CONFIG_DIR" in attack["error"]
        assert not (workspace / "attack-ran").exists()
    else:
        assert (workspace / "attack-ran").exists(), attack
        for name in ("secrets.json", "config.json", "state_probe"):
            assert name not in attack["stdout"], attack
    after = {name: data for name, data in contents(state).items()
             if not name.startswith("project")}  # the workspace itself, when it lies in there
    assert after == {name: data for name, data in before.items()
                     if not name.startswith("project")}
    assert sandbox_policy() == policy_before
    escape = call_tool("RunBashCode", {"code": f"echo escaped > {outside}/after"},
                       registry=registry)
    assert escape["success"] is False, escape
    assert not (outside / "after").exists()
