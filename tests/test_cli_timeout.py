"""``janito run --call-timeout``: a call that outlives its time ends, whatever the tool does.

Three real tools in a real distribution: one that listens to its cancellation token, one
that ignores it (and leaves a child process behind), one that even swallows the interrupt
that follows. Each is run by the real command; what is checked is the answer, the exit
status, and that no process the tool started is still running afterwards.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from test_cli import Janito, make_janito

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to find processes")

SLOW = {
    "acme_slow/__init__.py": '"""Tools that take their time."""\n',
    "acme_slow/listens.py": '''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class Listens(BaseTool):
            """Wait, and stop when told to."""

            def run(self, seconds: float = 600) -> dict[str, Any]:
                """Wait.

                Args:
                    seconds: How long.
                """
                token = self.cancel_token
                if token is not None and token.wait(seconds):
                    token.check()
                return {"success": True}
    ''',
    "acme_slow/ignores.py": '''
        import subprocess
        import time
        from pathlib import Path
        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class Ignores(BaseTool):
            """Start a child that sleeps, then sleep too, deaf to the token."""

            def run(self, mark: str, stubborn: bool = False) -> dict[str, Any]:
                """Sleep.

                Args:
                    mark: The file to write the child's process id in.
                    stubborn: Swallow interrupts too.
                """
                child = subprocess.Popen(["sleep", "600"])
                Path(mark).write_text(str(child.pid))
                while True:
                    try:
                        time.sleep(600)
                    except BaseException:
                        if not stubborn:
                            raise
    ''',
}


@pytest.fixture(scope="module")
def slow_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers.distributions import write_distribution

    root = tmp_path_factory.mktemp("slow-site")
    write_distribution(root, "acme-slow", toolsets={"slow": "acme_slow"}, files=SLOW)
    return root


@pytest.fixture
def janito(testkit_dir: Path, workspace: Path, tmp_path: Path, slow_site: Path) -> Janito:
    ran = make_janito(testkit_dir, workspace, tmp_path)
    ran.path.append(slow_site)
    return ran


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return False
    return text[text.rfind(b")") + 2:].split()[0] != b"Z"


def test_a_call_that_overruns_its_time_ends_with_its_processes(janito: Janito,
                                                               workspace: Path) -> None:
    marks = {key: workspace / f"{key}.pid" for key in ("ignores", "stubborn")}
    started = time.monotonic()
    ran = janito.many({
        "listens": ["run", "-t", "slow", "Listens", "--call-timeout", "0.5"],
        "ignores": ["run", "-t", "slow", "Ignores", "--mark", str(marks["ignores"]),
                    "--call-timeout", "0.5"],
        "stubborn": ["run", "-t", "slow", "Ignores", "--mark", str(marks["stubborn"]),
                     "--stubborn", "--call-timeout", "0.5"],
    })
    assert time.monotonic() - started < 50  # each would take 600 s otherwise
    hint = "(janito run --call-timeout SECONDS gives a call longer)"

    # Told through its token at the timeout, it stops at once and answers timeout.
    listens = ran["listens"]
    assert listens.code == 1, listens
    assert listens.json() == {"success": False, "error_type": "timeout", "tool": "Listens",
                              "error": "Listens did not finish within 0.5 s and was stopped"}, listens
    assert listens.err.splitlines()[-1] == f"janito: {listens.json()['error']} {hint}"

    # Deaf to the token: interrupted after the grace, and its child is killed.
    ignores = ran["ignores"]
    assert ignores.code == 1, ignores
    said = "Ignores did not finish within 0.5 s and did not stop when told to: it was interrupted"
    assert ignores.json() == {"success": False, "error": said, "error_type": "timeout",
                              "tool": "Ignores", "processes_ended": 1}, ignores
    assert f"janito: {said} {hint}" in ignores.err

    # Deaf to the interrupt too: janito answers and exits without it, killing the child.
    stubborn = ran["stubborn"]
    assert stubborn.code == 1, stubborn
    assert stubborn.json() == {
        "success": False, "error_type": "timeout", "tool": "Ignores",
        "error": "Ignores did not finish within 0.5 s and could not be stopped: janito exits "
                 "without waiting for it"}, stubborn
    for key in ("ignores", "stubborn"):
        child = int(marks[key].read_text())
        deadline = time.monotonic() + 10
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.05)  # SIGKILL was sent; the kernel may take a moment to finish it
        assert not _running(child), f"{key}: the tool's child {child} is still running"


def test_the_call_timeout_option(janito: Janito) -> None:
    ran = janito.many({
        "zero": ["run", "-t", "slow", "Listens", "--call-timeout", "0"],
        "word": ["run", "-t", "slow", "Listens", "--call-timeout", "soon"],
        "inf": ["run", "-t", "slow", "Listens", "--seconds", "0.1", "--call-timeout", "inf"],
        "in time": ["run", "-t", "slow", "Listens", "--seconds", "0.1", "--call-timeout", "30"],
        "help": ["run", "--help"],
    })
    for key in ("zero", "word"):
        assert ran[key].code == 2 and ran[key].out == "", ran[key]
        assert "--call-timeout" in ran[key].err
    for key in ("inf", "in time"):
        assert ran[key].code == 0 and ran[key].json() == {"success": True}, ran[key]
    assert "--call-timeout SECONDS" in ran["help"].out and "default 300" in ran["help"].out
