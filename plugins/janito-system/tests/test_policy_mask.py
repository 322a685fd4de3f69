"""A policy's deny rules on paths bind the code the run tools start, not only the file tools.

Written as code a hostile model runs would try it: under bubblewrap, a path the policy
hides from reading is covered by an empty read-only file or folder, so ``cat``, Python's
``open``, ``find``, ``grep -r`` and ``tar`` of the workspace, links to it and copies of it
never show its content, and it cannot be moved to a name the rules allow. ``.janito/``
(the project's policy) stays byte for byte what it was whatever the code does to it, and
``.git/`` can be written only by a call a person approved. The supervisor, which can only
grant access, refuses a call whose mask it cannot apply, and so does the policy ``off``
when the policy hides an existing path.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from system_helpers import mechanism_problem

from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool
from janito_core.policy import Policy

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the sandbox mechanisms are Linux ones")

SECRETS = {  # each denied file, with a value no other file holds
    ".env": "DENIED-ENV-5c1f",
    "d/.env": "DENIED-NESTED-ENV-8a2e",
    "secrets/key.txt": "DENIED-FOLDER-3b7d",
    "secrets/inner/deep.txt": "DENIED-DEEP-9e4a",
    "conf/prod/key.pem": "DENIED-ANCHORED-1d6c",
}
PRIVATE = "ASKED-PRIVATE-77f0"
PROJECT_POLICY = """\
[[rules]]
action = "deny"
paths = [".env", "secrets/", "conf/prod/key.pem"]
reason = "credentials stay with the person"

[[rules]]
action = "ask"
paths = ["private.txt"]
"""

READS = r"""
cat .env alias d/.env d/alias-up secrets/key.txt secrets/inner/deep.txt conf/prod/key.pem
cat secrets-link/key.txt "$PWD/.env" ./d/../.env
python3 -c 'import sys
for p in sys.argv[1:]:
    try: print(open(p).read())
    except OSError as e: print("refused", p, e.strerror)' .env secrets/key.txt conf/prod/key.pem
find . -type f -exec cat {} +
grep -ra DENIED . ; grep -ra DENIED "$PWD"
tar cf - . | cat -v
tar cf "$TMPDIR/all.tar" . && tar xOf "$TMPDIR/all.tar"
cp -r . "$TMPDIR/copy" && cat "$TMPDIR/copy/.env" "$TMPDIR/copy/secrets/key.txt"
cat private.txt
cat notes.txt
"""

SCRIPT = """\
import os
for folder, folders, files in os.walk("."):
    for name in files:
        path = os.path.join(folder, name)
        try:
            with open(path, errors="replace") as handle:
                print(path, handle.read())
        except OSError as exc:
            print(path, "refused:", exc.strerror)
"""


def lay_out(root: Path) -> None:
    for relative, value in SECRETS.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    (root / "private.txt").write_text(PRIVATE + "\n")
    (root / "notes.txt").write_text("nothing secret here\n")
    (root / "walk.py").write_text(SCRIPT)
    (root / "alias").symlink_to(".env")
    (root / "d" / "alias-up").symlink_to("../.env")
    (root / "secrets-link").symlink_to("secrets")
    (root / ".janito").mkdir()
    (root / ".janito" / "policy.toml").write_text(PROJECT_POLICY)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")


def remove_hidden(root: Path) -> None:
    """Take away every path the project's policy hides, so only .janito/ and .git/ are left
    for the mask."""
    for relative in SECRETS:
        (root / relative).unlink()
    shutil.rmtree(root / "secrets")
    (root / "secrets-link").unlink()
    (root / "private.txt").unlink()


def tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry below ``root`` (links not followed): its mode and a file's bytes."""
    found: dict[str, tuple[int, bytes | None]] = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder, name)
            info = path.lstat()
            data = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
            found[str(path.relative_to(root))] = (info.st_mode, data)
    return found


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with denied files, a project policy and a repository; janito's state
    folder beside it (the person's own policy there: none)."""
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("JANITO_SANDBOX", raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lay_out(workspace)
    return workspace


def registry(root: Path, mode: str = "full-auto", approver: Any = None,
             policy: bool = True) -> Registry:
    found = Policy.load(str(root)) if policy else None
    if found is not None and mode != "full-auto":
        found = found.merged(Policy.from_data({"mode": mode}))
    made = Registry(workspace=Workspace(str(root)), autoload=(), allowed=None, reports="off",
                    policy=found, approver=approver)
    made.add_toolset("system")
    return made


ALL_SECRETS = (*SECRETS.values(), PRIVATE)


def leaked(result: dict[str, Any], values: Any = ALL_SECRETS) -> list[str]:
    text = json.dumps(result)
    return [value for value in values if value in text]


@pytest.fixture
def bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    why = mechanism_problem("bubblewrap")
    if why is not None:
        pytest.skip(f"needs bubblewrap: {why}")
    monkeypatch.setenv("JANITO_SANDBOX_MECHANISM", "bubblewrap")


@pytest.fixture
def supervisor(monkeypatch: pytest.MonkeyPatch) -> None:
    why = mechanism_problem("supervisor")
    if why is not None:
        pytest.skip(f"needs the supervisor: {why}")
    monkeypatch.setenv("JANITO_SANDBOX_MECHANISM", "supervisor")


@pytest.mark.usefixtures("bubblewrap")
def test_no_run_tool_shows_a_denied_path(root: Path) -> None:
    before = tree(root)
    tools = registry(root)
    calls = [("RunBashCode", {"code": READS}),
             ("RunPythonCode", {"code": SCRIPT}),
             ("RunPythonFile", {"file_path": "walk.py"})]
    for name, args in calls:
        result = call_tool(name, args, registry=tools)
        assert leaked(result) == [], (name, result)
        # the code ran, read what it may, and found the denied paths empty
        assert "nothing secret here" in result["stdout"], (name, result)
        if name != "RunBashCode":
            assert "./.env \n" in result["stdout"], result
            assert "./secrets/key.txt" not in result["stdout"], result  # an empty folder
    assert tree(root) == before


@pytest.mark.usefixtures("bubblewrap")
def test_an_approved_call_sees_what_an_ask_rule_covers(root: Path) -> None:
    asked: list[str] = []

    def approve(request: Any) -> bool:
        asked.append(request.tool)
        return True

    # the mode asks about x tools: approved, the ask rule's path is the call's to read
    approved = call_tool("RunBashCode", {"code": READS},
                         registry=registry(root, "ask", approve))
    assert asked == ["RunBashCode"]
    assert leaked(approved) == [PRIVATE], approved
    # in full-auto nobody approved the call: the asked path is covered as a denied one
    silent = call_tool("RunBashCode", {"code": "cat private.txt; echo done"},
                       registry=registry(root))
    assert silent["stdout"] == "done\n" and leaked(silent) == [], silent


@pytest.mark.usefixtures("bubblewrap")
def test_a_covered_path_cannot_be_moved_to_a_name_the_rules_allow(root: Path) -> None:
    before = tree(root)
    tools = registry(root)
    moves = ("mv conf open; mv conf/prod conf/open; mv conf/prod/key.pem loose.pem; "
             "mv secrets open-folder; mv d e; mv .env env.txt; ln .env hard; rm -rf conf d; "
             "cp -a conf open-copy; ls open open-folder e env.txt hard 2>&1; true")
    result = call_tool("RunBashCode", {"code": moves}, registry=tools)
    assert "Device or resource busy" in result["stderr"], result
    assert "The policy's path rules bind the code too" in result.get("sandbox", ""), result
    after = tree(root)
    for relative in SECRETS:  # where the rules name it, as it was
        assert after[relative] == before[relative], relative
    # what the moves made instead (mv copies when a rename is refused) holds the covers
    made = {path: entry for path, entry in after.items() if path not in before}
    assert made and all(entry[1] in (None, b"") for entry in made.values()), made
    # and the file tools, which the next turn would use, find nothing under another name
    read = call_tool("RunBashCode", {"code": "cat open-copy/prod/key.pem loose.pem 2>&1; true"},
                     registry=tools)
    assert leaked(read) == [], read


ATTACK_POLICY = r"""
P=.janito/policy.toml
echo 'mode = "full-auto"' > $P
python3 -c 'open(".janito/policy.toml", "w").write("")'
chmod 666 $P; chmod 777 .janito; touch .janito/planted.toml
mv $P .janito/old.toml; rm -f $P; rm -rf .janito; mv .janito janito-old
ln -sf /dev/null $P; truncate -s 0 $P; : > $P
python3 -c 'import os; os.rename(".janito", "x")'
echo done
"""


@pytest.mark.parametrize("with_policy", [True, False], ids=["policy", "no-policy"])
@pytest.mark.usefixtures("bubblewrap")
def test_the_projects_policy_is_unchanged_after_code_tried_to_change_it(
        root: Path, with_policy: bool) -> None:
    before = {path: entry for path, entry in tree(root).items() if path.startswith(".janito")}
    rules = Policy.load(str(root)).as_json()["rules"]
    result = call_tool("RunBashCode", {"code": ATTACK_POLICY},
                       registry=registry(root, policy=with_policy))
    assert result["stdout"] == "done\n", result
    after = {path: entry for path, entry in tree(root).items() if path.startswith(".janito")}
    assert after == before
    assert not (root / "janito-old").exists() and not (root / "x").exists()
    assert Policy.load(str(root)).as_json()["rules"] == rules


GIT_WRITE = "echo '[janito] planted = yes' >> .git/config && touch .git/hooks-planted && echo wrote"


@pytest.mark.usefixtures("bubblewrap")
def test_git_is_written_only_by_an_approved_call(root: Path) -> None:
    config = (root / ".git" / "config").read_bytes()
    refused = call_tool("RunBashCode", {"code": GIT_WRITE}, registry=registry(root))
    assert "wrote" not in refused["stdout"], refused
    assert "Read-only file system" in refused["stderr"], refused
    assert ".git/ is read-only for code unless a person approves" in refused["sandbox"]
    assert (root / ".git" / "config").read_bytes() == config
    assert not (root / ".git" / "hooks-planted").exists()
    declined = call_tool("RunBashCode", {"code": GIT_WRITE},
                         registry=registry(root, "ask", lambda request: False))
    assert declined["error_type"] == "approval_declined", declined
    assert (root / ".git" / "config").read_bytes() == config
    approved = call_tool("RunBashCode", {"code": GIT_WRITE},
                         registry=registry(root, "ask", lambda request: True))
    assert approved["stdout"] == "wrote\n", approved
    assert (root / ".git" / "config").read_bytes().endswith(b"planted = yes\n")
    # approved or not, .janito/ stays read-only and the denied paths covered
    assert leaked(call_tool("RunBashCode", {"code": "cat .env secrets/key.txt"},
                            registry=registry(root, "ask", lambda request: True))) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.usefixtures("bubblewrap")
def test_git_commit_needs_approval(root: Path) -> None:
    shutil.rmtree(root / ".git")
    import subprocess

    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    commit = ("git -c user.name=t -c user.email=t@example.invalid add notes.txt && "
              "git -c user.name=t -c user.email=t@example.invalid commit -qm notes && echo ok")
    refused = call_tool("RunBashCode", {"code": commit}, registry=registry(root))
    assert refused["success"] is False and "ok" not in refused["stdout"], refused
    approved = call_tool("RunBashCode", {"code": commit},
                         registry=registry(root, "auto-edit", lambda request: True))
    assert approved["stdout"] == "ok\n", approved


MARKER = "touch ran-marker; echo ran"


@pytest.mark.usefixtures("supervisor")
def test_the_supervisor_refuses_a_mask_it_cannot_apply(root: Path) -> None:
    # hidden paths exist: nothing runs, and the answer says why and what to do
    result = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root))
    assert result["error_type"] == "sandbox_unavailable", result
    assert "cannot hide the paths the policy denies reading" in result["error"], result
    assert "install bubblewrap" in result["error"]
    assert not (root / "ran-marker").exists()
    # without them, .janito/ in a workspace the code may write still cannot be kept
    remove_hidden(root)
    result = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root))
    assert result["error_type"] == "sandbox_unavailable", result
    assert "keep .git/, .janito/ unchanged" in result["error"], result
    # with only .git/ left, approving the call lets it run (it may write .git/ then)
    shutil.rmtree(root / ".janito")
    unapproved = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root))
    assert "have the call approved" in unapproved["error"], unapproved
    approved = call_tool("RunBashCode", {"code": MARKER},
                         registry=registry(root, "ask", lambda request: True))
    assert approved["stdout"] == "ran\n", approved
    # without a policy the supervisor runs code as before policies existed
    (root / "ran-marker").unlink()
    plain = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root, policy=False))
    assert plain["stdout"] == "ran\n", plain


@pytest.mark.usefixtures("supervisor")
def test_the_supervisor_under_read_only_needs_no_mask_for_git(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SANDBOX", "read-only")
    remove_hidden(root)
    result = call_tool("RunBashCode", {"code": "echo ran; echo x > .git/config"},
                       registry=registry(root))
    assert result["stdout"] == "ran\n", result
    assert (root / ".git" / "config").read_text().startswith("[core]")


def test_with_the_sandbox_off_a_hidden_path_stops_the_code(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SANDBOX", "off")
    result = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root))
    assert result["error_type"] == "sandbox_unavailable", result
    assert "with the sandbox off nothing keeps code from reading them" in result["error"]
    assert not (root / "ran-marker").exists()
    remove_hidden(root)
    # nothing to hide: off runs the code as it is (.janito/ and .git/ included, as the
    # state folder is: off confines nothing)
    result = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root))
    assert result["stdout"] == "ran\n", result


def test_run_python_file_is_decided_on_its_script(root: Path) -> None:
    (root / "secrets" / "run.py").write_text("open('ran-marker', 'w')\n")
    tools = registry(root)
    for spelling in ("secrets/run.py", "./secrets//run.py", "d/../secrets/run.py",
                     "secrets-link/run.py"):
        result = call_tool("RunPythonFile", {"file_path": spelling}, registry=tools)
        assert result["error_type"] == "denied_by_policy", result
        assert result["rule"].startswith("deny paths .env, secrets/"), result
    assert not (root / "ran-marker").exists()
    from janito_system.run_python_file import RunPythonFile

    assert RunPythonFile.reads_paths == ("file_path",)


@pytest.mark.usefixtures("bubblewrap")
def test_a_policy_hiding_too_many_paths_one_by_one_is_refused(root: Path) -> None:
    from janito_system import _mask

    (root / ".janito" / "policy.toml").write_text(
        '[[rules]]\naction = "deny"\npaths = ["*.key"]\n')
    many = root / "many"
    many.mkdir()
    for number in range(_mask.MAX_COVERED + 1):
        (many / f"{number}.key").write_text("k")
    result = call_tool("RunBashCode", {"code": MARKER}, registry=registry(root))
    assert result["error_type"] == "sandbox_unavailable", result
    assert "deny the folders that hold them instead" in result["error"]
    assert not (root / "ran-marker").exists()


def test_a_denied_working_directory_is_refused_as_the_policy_refuses_it(root: Path) -> None:
    result = call_tool("RunBashCode", {"code": MARKER, "working_directory": "secrets"},
                       registry=registry(root))
    assert result["error_type"] == "denied_by_policy", result
    assert not (root / "secrets" / "ran-marker").exists()
