"""Capturing code's changes with an overlay: real mounts, real shells, the layer read back.

Each test mounts the kernel's overlayfs the way a captured call would (``unshare`` and
``mount`` in a new mount namespace, from a user namespace unless said otherwise), runs bash
in it, and checks both halves: ``changes()`` lists exactly what the code did, and the real
workspace under the overlay is untouched. Where this kernel refuses the mount, the tests
skip with its reason.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from janito_system import _overlay
from janito_system._overlay import (
    DELETED,
    FILE,
    FOLDER,
    MODE,
    OPAQUE,
    SPECIAL,
    SYMLINK,
    Change,
    Layers,
    OverlayError,
    changes,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="overlayfs and namespaces are Linux's")

BASH = shutil.which("bash") or "/bin/bash"

# Everything a model's code typically does to a tree, in one run.
CODE = """umask 022
echo new > created.txt
echo more >> edited.txt
mv renamed-from.txt renamed-to.txt
rm deleted.txt
rm -rf gone
rm -rf replaced && mkdir replaced && echo fresh > replaced/fresh.txt
mv moved moved-to
mkdir -p made/deeper
ln -s edited.txt link
chmod 600 private.txt
echo deeper >> kept/inner/deep.txt
cat kept/untouched.txt > /dev/null
"""

EXPECTED = [
    Change(FILE, "created.txt", 0o644),
    Change(DELETED, "deleted.txt"),
    Change(FILE, "edited.txt", 0o644),
    Change(DELETED, "gone"),
    Change(FILE, "kept/inner/deep.txt", 0o644),
    Change(SYMLINK, "link", 0, "edited.txt"),
    Change(FOLDER, "made", 0o755),
    Change(FOLDER, "made/deeper", 0o755),
    Change(DELETED, "moved"),  # a workspace folder cannot be renamed: mv copies it (EXDEV)
    Change(FOLDER, "moved-to", 0o755),
    Change(FILE, "moved-to/a.txt", 0o644),
    Change(MODE, "private.txt", 0o600),
    Change(DELETED, "renamed-from.txt"),
    Change(FILE, "renamed-to.txt", 0o644),
    Change(OPAQUE, "replaced", 0o755),
    Change(FILE, "replaced/fresh.txt", 0o644),
]


def make_workspace(root: Path) -> Path:
    """A small tree with something for each line of ``CODE`` to act on."""
    old = os.umask(0o022)
    try:
        root.mkdir(parents=True, exist_ok=True)
        for name in ("edited.txt", "renamed-from.txt", "deleted.txt", "private.txt"):
            (root / name).write_text(f"{name}\n")
        for folder in ("gone/sub", "replaced/old", "moved", "kept/inner"):
            (root / folder).mkdir(parents=True)
        (root / "gone" / "sub" / "g.txt").write_text("g\n")
        (root / "replaced" / "old" / "r.txt").write_text("r\n")
        (root / "replaced" / "r.txt").write_text("r\n")
        (root / "moved" / "a.txt").write_text("a\n")
        (root / "kept" / "inner" / "deep.txt").write_text("deep\n")
        (root / "kept" / "untouched.txt").write_text("same\n")
    finally:
        os.umask(old)
    return root


def tree(root: Path) -> dict[str, tuple[int, bytes | str | None]]:
    """Every path below ``root``: its mode, and its content or link target."""
    seen: dict[str, tuple[int, bytes | str | None]] = {}
    for folder, folders, files in os.walk(root):
        for name in [*folders, *files]:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                content: bytes | str | None = os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                content = Path(path).read_bytes()
            else:
                content = None
            seen[os.path.relpath(path, root)] = (info.st_mode, content)
    return seen


@pytest.fixture(scope="module")
def available() -> None:
    problem = _overlay.overlay_available()
    if problem is not None:
        pytest.skip(f"this kernel or system cannot mount the overlay: {problem}")


Layered = Callable[[Path], Layers]


@pytest.fixture
def layered() -> Iterator[Layered]:
    """Makes the layers of a workspace; removes them after the test."""
    made: list[Layers] = []

    def make(workspace: Path) -> Layers:
        made.append(_overlay.make_layers(str(workspace), "janito-test-overlay-"))
        return made[-1]

    yield make
    for layers in made:
        _overlay.remove_layers(layers)
        assert not os.path.exists(layers.folder)  # work/work (mode 0) included


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stderr
    return done


def namespaces() -> list[object]:
    as_root = pytest.param(False, id="as-root", marks=pytest.mark.skipif(
        os.geteuid() != 0, reason="only root mounts without a user namespace"))
    return [pytest.param(True, id="user-namespace"), as_root]


@pytest.mark.parametrize("user_namespace", namespaces())
def test_changes_lists_exactly_what_bash_did(available: None, layered: Layered,
                                             tmp_path: Path, user_namespace: bool) -> None:
    workspace = make_workspace(tmp_path / "work space, with: odd chars")
    layers = layered(workspace)
    before = tree(workspace)
    argv = [*_overlay.launch_prefix(str(workspace), layers, user_namespace=user_namespace),
            BASH, "--noprofile", "--norc", "-c", f"{CODE}pwd"]
    done = run(argv)
    assert done.stdout == f"{workspace}\n"  # the code saw the workspace at its own path
    assert tree(workspace) == before  # and none of it reached the real one
    assert changes(layers.upper, str(workspace)) == EXPECTED


def test_without_the_workspace_copied_up_entries_count_as_changes(
        available: None, layered: Layered, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    layers = layered(workspace)
    run([*_overlay.launch_prefix(str(workspace), layers), BASH, "-c", CODE])
    found = changes(layers.upper)
    # the chmod copied the whole file up: the layer alone cannot tell it from an edit
    assert Change(FILE, "private.txt", 0o600) in found
    assert [c for c in found if c.kind != FILE or c.path != "private.txt"] == \
        [c for c in EXPECTED if c.path != "private.txt"]


def test_a_workspace_folder_cannot_be_renamed_in_place(available: None, layered: Layered,
                                                       tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    layers = layered(workspace)
    code = ("import errno, os\n"
            "try:\n    os.rename('moved', 'elsewhere')\n"
            "except OSError as exc:\n    print(errno.errorcode[exc.errno])\n"
            "os.rename('edited.txt', 'edited-too.txt')\n")
    done = run([*_overlay.launch_prefix(str(workspace), layers), sys.executable, "-c", code])
    assert done.stdout == "EXDEV\n"
    assert changes(layers.upper, str(workspace)) == [
        Change(FILE, "edited-too.txt", 0o644), Change(DELETED, "edited.txt")]


def test_in_bubblewrap_the_code_keeps_its_paths_and_ids(available: None, layered: Layered,
                                                        tmp_path: Path) -> None:
    from janito_system import _sandbox

    from janito_core.sandbox import SandboxPolicy

    bwrap = _sandbox.trusted_bwrap().path
    if bwrap is None:
        pytest.skip(_sandbox.trusted_bwrap().why)
    problem = _sandbox.bwrap_problem(bwrap, probe=True)
    if problem is not None:
        pytest.skip(f"bubblewrap cannot create namespaces here: {problem}")
    workspace = make_workspace(tmp_path / "w")
    layers = layered(workspace)
    tmpdir = tmp_path / "call-tmp"
    tmpdir.mkdir()
    before = tree(workspace)
    policy = SandboxPolicy("workspace-write", "test")
    inner = [*_sandbox.bwrap_argv(bwrap, policy, workspace=str(workspace), tmpdir=str(tmpdir),
                                  cwd=str(workspace / "kept")),
             BASH, "--noprofile", "--norc", "-c",
             f'cd .. && {{ {CODE}}} && pwd && id -u && id -g && echo t > "$TMPDIR/t"']
    # the user namespace even as root: the shape every other user gets
    done = run(_overlay.wrap_bwrap(inner, str(workspace), layers, user_namespace=True),
               env={**os.environ, "TMPDIR": str(tmpdir)})
    assert done.stdout == f"{workspace}\n{os.getuid()}\n{os.getgid()}\n"
    assert tree(workspace) == before
    assert (tmpdir / "t").read_text() == "t\n"  # $TMPDIR is bound as before, not overlaid
    assert changes(layers.upper, str(workspace)) == EXPECTED


def test_code_cannot_forge_the_marks(available: None, layered: Layered, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    layers = layered(workspace)
    # through the overlay the kernel stores such names escaped (user.overlay.overlay.*,
    # from Linux 6.7) or refuses them: either way no folder reads as replaced, no file
    # as removed
    code = ("import os\n"
            "for path, name in (('kept', 'user.overlay.opaque'),\n"
            "                   ('edited.txt', 'user.overlay.whiteout')):\n"
            "    try:\n        os.setxattr(path, name, b'y')\n"
            "    except OSError:\n        pass\n")
    run([*_overlay.launch_prefix(str(workspace), layers), sys.executable, "-c", code])
    assert changes(layers.upper, str(workspace)) == []
    assert [c.kind for c in changes(layers.upper)] in ([], [FILE])  # the copied-up file


def _python_for(uid: int) -> str | None:
    """A Python 3.10+ that the user ``uid`` can run, or None."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        done = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", candidate, "-c",
             "import sys; assert sys.version_info >= (3, 10)"],
            capture_output=True, check=False)
        if done.returncode == 0:
            return candidate
    return None


UNPRIVILEGED = """
import json, os, subprocess, sys
from janito_system import _overlay
workspace, code = sys.argv[1], sys.argv[2]
problem = _overlay.overlay_available()
if problem is not None:
    print(json.dumps({"problem": problem}))
    raise SystemExit
layers = _overlay.make_layers(workspace, "janito-test-overlay-")
try:
    argv = [*_overlay.launch_prefix(workspace, layers), "/bin/sh", "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True)
    print(json.dumps({"uid": os.getuid(), "rc": done.returncode, "stderr": done.stderr,
                      "changes": _overlay.changes(layers.upper, workspace)}))
finally:
    _overlay.remove_layers(layers)
print(json.dumps({"removed": not os.path.exists(layers.folder)}))
"""


def test_an_unprivileged_user_can_capture(available: None) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to become another user")
    nobody = 65534
    python = _python_for(nobody)
    if python is None:
        pytest.skip(f"no Python 3.10+ that uid {nobody} may run")
    package = Path(_overlay.__file__).resolve().parents[1]
    core = Path(__import__("janito_core").__file__).resolve().parents[1]
    # Not under the run's own temporary folder: CI makes it 0700, so another user could
    # not even reach the workspace. /tmp is world-searchable (sticky) on Linux.
    if not os.stat("/tmp").st_mode & stat.S_IXOTH:
        pytest.skip("/tmp is not searchable by other users")
    folder = Path(tempfile.mkdtemp(prefix="janito-test-overlay-nobody-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        workspace = make_workspace(folder / "w")
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, nobody, nobody)
        before = tree(workspace)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "TMPDIR": str(folder),
               "PYTHONPATH": f"{package}:{core}"}
        reach = subprocess.run(["setpriv", f"--reuid={nobody}", f"--regid={nobody}",
                                "--clear-groups", python, "-c",
                                "import janito_core, janito_system._overlay"],
                               capture_output=True, text=True, env=env, timeout=60,
                               check=False)
        if reach.returncode != 0:  # installed in a folder private to root (CI's wheels)
            pytest.skip(f"uid {nobody} cannot import the packages from {package}: "
                        f"{reach.stderr.strip().splitlines()[-1:]}")
        done = subprocess.run(["setpriv", f"--reuid={nobody}", f"--regid={nobody}",
                               "--clear-groups", python, "-c", UNPRIVILEGED, str(workspace),
                               CODE], capture_output=True, text=True, env=env, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        first, last = (json.loads(line) for line in done.stdout.splitlines())
        if "problem" in first:
            pytest.skip(f"the kernel refuses the overlay to an unprivileged user: "
                        f"{first['problem']}")
        assert first["uid"] == nobody and first["rc"] == 0, first["stderr"]
        assert [Change(*change) for change in first["changes"]] == EXPECTED
        assert last == {"removed": True}
        assert tree(workspace) == before
    finally:
        subprocess.run(["chown", "-R", f"{os.getuid()}:{os.getgid()}", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


# -- layers written by hand: the marks janito's own mounts never make ---------------------


def _mark(path: Path, name: str, value: bytes) -> None:
    try:
        os.setxattr(path, name, value, follow_symlinks=False)
    except OSError as exc:
        pytest.skip(f"cannot set {name} here: {exc.strerror}")


def _whiteout(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(0, 0))
    except PermissionError as exc:
        pytest.skip(f"cannot make a whiteout (character device 0:0) here: {exc.strerror}")


def test_both_whiteout_forms_and_user_opaque_marks(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    upper.mkdir()
    _whiteout(upper / "char-whiteout")
    (upper / "opaque").mkdir(mode=0o755)
    _mark(upper / "opaque", "user.overlay.opaque", b"y")
    (upper / "opaque" / "inside.txt").write_text("new\n")
    # since Linux 6.8: "x" marks a folder holding xattr whiteouts, which is not opaque
    (upper / "holds").mkdir(mode=0o755)
    _mark(upper / "holds", "user.overlay.opaque", b"x")
    (upper / "holds" / "xattr-whiteout").touch()
    _mark(upper / "holds" / "xattr-whiteout", "user.overlay.whiteout", b"")
    # Linux 6.7 marked such a folder with overlay.whiteouts instead
    (upper / "older").mkdir(mode=0o755)
    _mark(upper / "older", "user.overlay.whiteouts", b"")
    (upper / "older" / "gone").touch()
    _mark(upper / "older" / "gone", "user.overlay.whiteout", b"")
    # in an unmarked folder the kernel shows such a file as the empty file it is
    (upper / "plain").mkdir(mode=0o755)
    (upper / "plain" / "empty").touch(mode=0o644)
    _mark(upper / "plain" / "empty", "user.overlay.whiteout", b"")
    os.mkfifo(upper / "fifo", 0o600)
    assert changes(str(upper)) == [
        Change(DELETED, "char-whiteout"),
        Change(SPECIAL, "fifo", 0o600),
        Change(FOLDER, "holds", 0o755),
        Change(DELETED, "holds/xattr-whiteout"),
        Change(FOLDER, "older", 0o755),
        Change(DELETED, "older/gone"),
        Change(OPAQUE, "opaque", 0o755),
        Change(FILE, "opaque/inside.txt", 0o644),
        Change(FOLDER, "plain", 0o755),
        Change(FILE, "plain/empty", 0o644),
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="trusted.* attributes are root's")
def test_trusted_marks_root_overlays_write(tmp_path: Path) -> None:
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    for layer in (lower, upper):
        (layer / "kept").mkdir(parents=True, mode=0o755)
    (lower / "kept" / "meta.txt").write_text("data stays below\n")
    (upper / "kept" / "meta.txt").touch(mode=0o600)  # a metacopy holds no data
    _mark(upper / "kept" / "meta.txt", "trusted.overlay.metacopy", b"")
    _mark(upper / "kept" / "meta.txt", "trusted.overlay.origin", b"")
    _mark(upper / "kept", "trusted.overlay.origin", b"")
    (upper / "replaced").mkdir(mode=0o700)
    _mark(upper / "replaced", "trusted.overlay.opaque", b"y")
    _whiteout(upper / "kept" / "removed")
    expected = [Change(MODE, "kept/meta.txt", 0o600), Change(DELETED, "kept/removed"),
                Change(OPAQUE, "replaced", 0o700)]
    assert changes(str(upper), str(lower)) == expected
    assert changes(str(upper)) == expected  # origin alone says "kept" came from below


def test_a_redirect_is_refused(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    (upper / "moved").mkdir(parents=True)
    _mark(upper / "moved", "user.overlay.redirect", b"from")
    with pytest.raises(OverlayError, match="redirect"):
        changes(str(upper))


def test_the_probe_is_asked_once(available: None) -> None:
    import time

    started = time.perf_counter()
    assert _overlay.overlay_available() is None
    assert time.perf_counter() - started < 0.01  # answered from the cache: no mount


def test_a_mount_inside_the_workspace_is_named(tmp_path: Path) -> None:
    assert _overlay.workspace_problem(str(tmp_path)) is None
    problem = _overlay.workspace_problem("/")  # /proc, at least, lies beneath
    assert problem is not None and "mounted inside the workspace" in problem


def test_the_probes_answer_is_kept_for_later_processes(available: None, tmp_path: Path) -> None:
    """Probing costs a mount (about 200 ms); later processes read the answer janito kept
    in its state folder, as long as the kernel, user, temporary folder and mounting
    programs are the same ones."""
    env = {**os.environ, "JANITO_CONFIG_DIR": str(tmp_path)}
    ask = [sys.executable, "-c", "from janito_system._overlay import overlay_available as a; "
                                 "print(repr(a()))"]
    first = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert first.stdout.strip() == "None", first.stderr
    record = tmp_path / _overlay.PROBE_RECORD
    kept = json.loads(record.read_text())
    assert kept["problem"] is None and os.uname().release in kept["key"]
    record.write_text(json.dumps({**kept, "problem": "the answer on record"}))
    again = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert again.stdout.strip() == "'the answer on record'"  # read, not probed
    record.write_text(json.dumps({"key": "another kernel", "problem": "stale"}))
    fresh = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert fresh.stdout.strip() == "None"  # probed again, and kept
    assert json.loads(record.read_text())["key"] == kept["key"]
