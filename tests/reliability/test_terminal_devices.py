"""Opening a terminal device found in the workspace never gives janito a controlling
terminal.

A process that leads its session and has no controlling terminal (``janito mcp serve``
started by a service manager, say) takes the first terminal it opens without
``O_NOCTTY`` as its controlling terminal: the terminal's hang-up and job-control signals
then reach janito. Each file-reading path must refuse the device without that side
effect. The terminal is real: a private devpts instance mounted inside the workspace, in
a mount namespace of the child's own (root only).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Python's termios lacks these; their values are the generic Linux ioctl encoding.
_CHILD = """
import fcntl, os, struct, subprocess, sys
TIOCSPTLCK, TIOCGPTN = 0x40045431, 0x80045430
root, how = sys.argv[1], sys.argv[2]
pts = os.path.join(root, "pts")
os.mkdir(pts)
subprocess.run(["mount", "-t", "devpts", "-o", "newinstance,ptmxmode=0666", "devpts", pts],
               check=True)
master = os.open(os.path.join(pts, "ptmx"), os.O_RDWR | os.O_NOCTTY)
fcntl.ioctl(master, TIOCSPTLCK, struct.pack("i", 0))
number = struct.unpack("i", fcntl.ioctl(master, TIOCGPTN, struct.pack("i", 0)))[0]
os.setsid()  # a session leader with no controlling terminal
name = str(number)
pts_fd = os.open(pts, os.O_RDONLY | os.O_DIRECTORY)
try:
    if how == "bare open":
        os.close(os.open(name, os.O_RDONLY | os.O_NONBLOCK, dir_fd=pts_fd))
    elif how == "Workspace.open_regular":
        from janito_core import Workspace
        Workspace(root).open_regular(f"pts/{name}")
    elif how == "open_regular_at":
        from janito_core.workspace import open_regular_at
        open_regular_at(pts_fd, name)
    elif how == "SearchText, compiled":
        from janito_files import _speedups
        _speedups.read_searchable_at(pts_fd, name, 8192, 1 << 20)
    elif how == "SearchText, Python":
        from janito_files import _steps
        _steps.read_searchable_at_py(pts_fd, name, 8192, 1 << 20)
    print("opened", file=sys.stderr)
except OSError as exc:
    print("refused:", exc, file=sys.stderr)
try:
    os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NONBLOCK))
    print("terminal acquired")
except OSError:
    print("no terminal")
"""

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64")
    or os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root, unshare and the generic Linux ioctl numbers (x86-64, aarch64)")


@pytest.mark.parametrize(("how", "expected"), [
    ("bare open", "terminal acquired"),  # the control: the hazard is real here
    ("Workspace.open_regular", "no terminal"),
    ("open_regular_at", "no terminal"),
    ("SearchText, compiled", "no terminal"),
    ("SearchText, Python", "no terminal"),
])
def test_opening_a_terminal_device_never_makes_it_the_callers_terminal(
    tmp_path: Path, how: str, expected: str
) -> None:
    if how == "SearchText, compiled":
        pytest.importorskip("janito_files._speedups",
                            reason="janito-files was installed without its compiled module")
    pytest.importorskip("janito_files")
    proc = subprocess.run(["unshare", "--mount", sys.executable, "-c", _CHILD, str(tmp_path), how],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected, proc.stderr
    if expected == "no terminal":
        assert "refused: [Errno 22]" in proc.stderr, proc.stderr
