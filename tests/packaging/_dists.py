"""The repository's distributions, read from their pyproject.toml files, and build helpers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(os.environ.get("JANITO_REPO_ROOT") or Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class Dist:
    """One distribution: janito-core at the root or a folder under plugins/."""

    path: Path
    project: dict[str, Any]
    tool: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.project["name"])

    @property
    def version(self) -> str:
        return str(self.project.get("version", ""))

    @property
    def is_core(self) -> bool:
        return self.path == REPO

    @property
    def packages(self) -> tuple[str, ...]:
        wheel = self.tool.get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
        declared = tuple(Path(p).name for p in wheel.get("packages", []))
        return declared or (self.name.replace("-", "_"),)

    @property
    def entry_points(self) -> dict[str, dict[str, str]]:
        """Every entry point the pyproject declares, console scripts included."""
        groups: dict[str, dict[str, str]] = {
            group: dict(items) for group, items in self.project.get("entry-points", {}).items()
        }
        if self.project.get("scripts"):
            groups["console_scripts"] = dict(self.project["scripts"])
        if self.project.get("gui-scripts"):
            groups["gui_scripts"] = dict(self.project["gui-scripts"])
        return groups

    @property
    def toolsets(self) -> dict[str, str]:
        return self.entry_points.get("janito.toolsets", {})

    def __str__(self) -> str:
        return self.name


def _load(pyproject: Path) -> Dist:
    with pyproject.open("rb") as handle:
        data = tomllib.load(handle)
    return Dist(pyproject.parent, data.get("project", {}), data.get("tool", {}))


def distributions() -> list[Dist]:
    """janito-core first, then every plugins/*/pyproject.toml in name order."""
    return [_load(REPO / "pyproject.toml"),
            *(_load(p) for p in sorted(REPO.glob("plugins/*/pyproject.toml")))]


@dataclass
class Built:
    """What building one distribution produced."""

    wheel: Path | None = None
    sdist: Path | None = None
    error: str = ""
    extra: list[Path] = field(default_factory=list)


def uv() -> str | None:
    return shutil.which(os.environ.get("UV", "uv"))


def build(dist: Dist, out: Path, env: dict[str, str] | None = None) -> Built:
    """Build the sdist, then the wheel from that sdist, as a packager would (``env``: the
    build's environment, this process's by default)."""
    out.mkdir(parents=True, exist_ok=True)
    tool = uv()
    if tool:
        cmd = [tool, "build", "--out-dir", str(out), str(dist.path)]
    else:
        cmd = [sys.executable, "-m", "build", "--outdir", str(out), str(dist.path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False,
                          env=env)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr)[-4000:]
        return Built(error=f"{' '.join(cmd)} exited {proc.returncode}:\n{output}")
    wheels = sorted(out.glob("*.whl"))
    sdists = sorted(out.glob("*.tar.gz"))
    return Built(
        wheel=wheels[0] if len(wheels) == 1 else None,
        sdist=sdists[0] if len(sdists) == 1 else None,
        error="" if len(wheels) == len(sdists) == 1 else f"built {wheels + sdists}",
    )


class CleanEnv:
    """A new virtual environment, with uv when available and venv + pip otherwise."""

    def __init__(self, path: Path, interpreter: str | None = None) -> None:
        """``interpreter``: the Python it is made from, this process's by default."""
        self.path = path
        self.bin = path / "bin"
        self.python = str(self.bin / "python")
        self.uv = uv()
        base = interpreter or getattr(sys, "_base_executable", sys.executable)
        if self.uv:
            self._run([self.uv, "venv", "--quiet", "--python", base, str(path)])
        elif interpreter:
            self._run([interpreter, "-m", "venv", str(path)])
        else:
            venv.create(path, with_pip=True)

    def _run(self, cmd: list[str]) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        if proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def install(self, *reqs: str) -> None:
        if self.uv:
            self._run([self.uv, "pip", "install", "--quiet", "--python", self.python, *reqs])
        else:
            self._run([self.python, "-m", "pip", "install", "--quiet", *reqs])

    def check(self) -> str:
        if self.uv:
            return self._run([self.uv, "pip", "check", "--python", self.python]).stdout
        return self._run([self.python, "-m", "pip", "check"]).stdout

    def janito(self, *args: str, cwd: Path, config: Path) -> subprocess.CompletedProcess[str]:
        """Run the installed ``janito`` with no credentials and a private config folder."""
        return subprocess.run([str(self.bin / "janito"), *args], cwd=cwd, env=self._env(config),
                              capture_output=True, text=True, timeout=300, check=False)

    def python_code(self, code: str, *args: str, cwd: Path,
                    config: Path) -> subprocess.CompletedProcess[str]:
        """Run ``code`` with the environment's Python, as :meth:`janito` runs the command."""
        return subprocess.run([self.python, "-c", code, *args], cwd=cwd, env=self._env(config),
                              capture_output=True, text=True, timeout=300, check=False)

    def _env(self, config: Path) -> dict[str, str]:
        """This process's environment without what would reach into the repository or the
        user's configuration."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("JANITO_", "PYTHON", "VIRTUAL_ENV"))}
        env["JANITO_CONFIG_DIR"] = str(config)
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return env
