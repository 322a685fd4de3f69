"""The README's two commands, verbatim, on a machine shaped like a fresh Debian one.

A new user's machine has the distribution's own ``/usr/bin/python3`` and nothing else: no
pyenv on PATH, pip refusing to install into the system (PEP 668), an empty home folder.
Here each command runs in a copy of the checkout under
``env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=<new folder>``:

- the first installs janito into ``.venv`` and must print the README's tool table;
- the second is ``bash .ci/run``; its set-up steps (Debian packages, the tools' virtual
  environment, nox finding its interpreters) run in full, and nox then only lists the
  sessions (``bash .ci/run -l``): running every suite again inside the suite is what CI
  itself does.

Both install from PyPI, as the user's machine would. The tests need a Debian-shaped
system Python (one that refuses ``pip install``) and root for ``apt-get``; elsewhere they
skip and say why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from _dists import REPO

SYSTEM_PYTHON = Path("/usr/bin/python3")
STOCK_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def _markers() -> list[Path]:
    return sorted(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED"))


pytestmark = [
    pytest.mark.skipif(not SYSTEM_PYTHON.exists() or not _markers(),
                       reason="no externally managed /usr/bin/python3 (not a Debian-shaped system)"),
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("apt-get"),
                       reason="the README's commands are for root on Debian or Ubuntu"),
]


def _readme_commands() -> tuple[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```bash\n(.*?)^```", text, re.S | re.M)
    assert block, "README.md has no bash block"
    commands = [line for line in block.group(1).splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2, commands
    return commands[0], commands[1]


def _checkout_copy(where: Path) -> Path:
    copy = where / "janito"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", ".nox", "__pycache__", "*.egg-info", ".*_cache", "build",
        "dist", "*.so"))
    return copy


def _stock(command: str, cwd: Path, *, timeout: float) -> subprocess.CompletedProcess[str]:
    home = tempfile.mkdtemp(prefix="janito-fresh-home-")
    try:
        return subprocess.run(["env", "-i", f"PATH={STOCK_PATH}", f"HOME={home}", "CI=true",
                               "bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_the_machine_is_shaped_like_a_fresh_debian(tmp_path: Path) -> None:
    done = _stock("command -v pyenv; command -v python3; python3 -m pip install --user six",
                  tmp_path, timeout=120)
    assert done.stdout.splitlines()[0] == str(SYSTEM_PYTHON), done.stdout
    # Debian's python3 refuses (PEP 668) where python3-pip is installed, and has no pip
    # at all where it is not (a minimal install): either way nothing reaches the system
    refused = ("externally-managed-environment" in done.stderr
               or "No module named pip" in done.stderr)
    assert done.returncode != 0 and refused, done.stderr


def test_the_first_command_installs_janito_and_lists_the_tools(tmp_path: Path) -> None:
    first, _ = _readme_commands()
    copy = _checkout_copy(tmp_path)
    done = _stock(first, copy, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    text = (REPO / "README.md").read_text(encoding="utf-8")
    shown = text.split("$ janito tools\n", 1)[1].split("\n...", 1)[0].splitlines()
    # stdin is not a terminal here, so AskUser is listed as skipped, not in the table.
    missing = [row for row in shown if row.strip() and row not in printed
               and not row.startswith("AskUser ")]
    assert not missing, f"rows the README shows but the command did not print: {missing}"
    assert (copy / ".venv" / "bin" / "janito").exists()


def test_the_second_command_sets_everything_up_and_lists_the_sessions(tmp_path: Path) -> None:
    _, second = _readme_commands()
    assert second == "bash .ci/run"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    test_command = re.search(r"^TEST_COMMAND='(.*)'$", ci, re.M)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert test_command and f"`{test_command.group(1)}`" in readme.replace("\n", " ")
    copy = _checkout_copy(tmp_path)
    done = _stock(f"{second} -l", copy, timeout=1200)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    version = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; print('%d.%d' % "
                              "sys.version_info[:2])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    listed = done.stdout + done.stderr
    assert f"* tests-core-{version}" in listed and "* installed-" in listed, listed[-3000:]
    assert (copy / ".ci" / "venv" / "bin" / "nox").exists()
    # The tools' environment was made from the system's Python, not from anything else.
    config = (copy / ".ci" / "venv" / "pyvenv.cfg").read_text()
    assert "home = /usr/bin" in config, config
