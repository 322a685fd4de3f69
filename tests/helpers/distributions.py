"""Real distributions for tests: ``NAME-VERSION.dist-info`` folders next to real packages.

``write_distribution`` lays out what an installer leaves in ``site-packages`` (METADATA,
entry_points.txt, RECORD, INSTALLER and the package files), ``write_editable`` what
``pip install -e`` leaves (the dist-info plus a ``.pth`` file naming the source folder).
``probe`` runs janito in a fresh interpreter with those folders on ``sys.path`` and returns
what the registry saw, so nothing in the test process is patched or shared.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROBE_SCRIPT = HERE / "probe.py"
TESTKIT_SOURCE = HERE / "testkit" / "janito_testkit"
MARKER = "@@janito-probe@@"


def dist_info_name(name: str, version: str) -> str:
    """The folder name an installer gives a distribution's metadata (PEP 427 escaping)."""
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}.dist-info"


def _record_line(root: Path, path: Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root).as_posix()},sha256={digest},{len(data)}"


def _entry_points(groups: Mapping[str, Mapping[str, str]]) -> str:
    sections = []
    for group, points in groups.items():
        if points:
            lines = [f"[{group}]"] + [f"{name} = {value}" for name, value in points.items()]
            sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


def sources_of_testkit() -> dict[str, str]:
    """The sources of the testkit package (``janito_testkit``), as ``files=`` takes them."""
    return {
        f"janito_testkit/{p.name}": p.read_text(encoding="utf-8")
        for p in sorted(TESTKIT_SOURCE.glob("*.py"))
    }


PROBES_SOURCE = HERE / "probes"


def sources_of_package(package: str, root: Path = PROBES_SOURCE) -> dict[str, str]:
    """The sources of a helper package under ``root``, as ``files=`` takes them."""
    return {
        f"{package}/{p.name}": p.read_text(encoding="utf-8")
        for p in sorted((root / package).glob("*.py"))
    }


def write_files(root: Path, files: Mapping[str, str]) -> list[Path]:
    """Write ``{relative path: source}`` under ``root`` (sources are dedented)."""
    written = []
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        written.append(target)
    return written


def write_distribution(
    root: Path,
    name: str,
    version: str = "0.1.0",
    *,
    toolsets: Mapping[str, str] | None = None,
    plugins: Mapping[str, str] | None = None,
    files: Mapping[str, str] | None = None,
    requires: Sequence[str] = (),
    extra_metadata_files: Mapping[str, str] | None = None,
) -> Path:
    """Install distribution ``name`` into folder ``root`` as an installer would.

    ``toolsets`` and ``plugins`` are the ``janito.toolsets`` and ``janito.plugins`` entry
    points; ``files`` the package sources, relative to ``root``. Returns the dist-info path.
    """
    root.mkdir(parents=True, exist_ok=True)
    installed = write_files(root, files or {})
    info = root / dist_info_name(name, version)
    info.mkdir()
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: test distribution {name}",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    (info / "METADATA").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        _entry_points({"janito.toolsets": toolsets or {}, "janito.plugins": plugins or {}}),
        encoding="utf-8",
    )
    (info / "INSTALLER").write_text("janito-tests\n", encoding="utf-8")
    (info / "WHEEL").write_text(
        "Wheel-Version: 1.0\nGenerator: janito-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        encoding="utf-8",
    )
    for filename, text in (extra_metadata_files or {}).items():
        (info / filename).write_text(text, encoding="utf-8")
    listed = installed + sorted(p for p in info.iterdir() if p.is_file())
    lines = [_record_line(root, p) for p in listed]
    lines.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return info


def write_editable(
    site: Path,
    source: Path,
    name: str,
    version: str = "0.1.0",
    *,
    toolsets: Mapping[str, str] | None = None,
    plugins: Mapping[str, str] | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """What ``pip install -e SOURCE`` leaves in ``site``: a dist-info and a ``.pth`` file.

    The package sources go to ``source``; ``site`` only points at them, so ``site`` must be
    processed as a site directory (``site.addsitedir``) for the ``.pth`` file to count.
    """
    write_files(source, files or {})
    site.mkdir(parents=True, exist_ok=True)
    pth = site / f"_editable_impl_{re.sub(r'[-_.]+', '_', name).lower()}.pth"
    pth.write_text(f"{source}\n", encoding="utf-8")
    direct_url = json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}})
    info = write_distribution(
        site, name, version, toolsets=toolsets, plugins=plugins,
        extra_metadata_files={"direct_url.json": direct_url},
    )
    record = info / "RECORD"
    record.write_text(_record_line(site, pth) + "\n" + record.read_text(), encoding="utf-8")
    return info


def clean_env(extra: Mapping[str, str] | None = None, *,
              path: Sequence[os.PathLike[str] | str] = ()) -> dict[str, str]:
    """The environment of a janito subprocess: isolated config, no keyring, given PYTHONPATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JANITO_", "PYTEST_", "COV_")) and k not in ("PYTHONPATH", "NO_COLOR")}
    if "JANITO_CONFIG_DIR" in os.environ:  # the test's own state folder (conftest.py)
        env["JANITO_CONFIG_DIR"] = os.environ["JANITO_CONFIG_DIR"]
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    if path:
        env["PYTHONPATH"] = os.pathsep.join(os.fspath(p) for p in path)
    env.update(extra or {})
    return env


def run_python(
    code: str,
    *,
    path: Sequence[os.PathLike[str] | str] = (),
    env: Mapping[str, str] | None = None,
    cwd: os.PathLike[str] | str | None = None,
    timeout: float = 60,
    args: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (this one's executable) with ``path`` on sys.path."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=clean_env(env, path=path), cwd=cwd, capture_output=True, text=True,
        encoding="utf-8", errors="replace", timeout=timeout, check=False,
    )


class ProbeResult(dict[str, Any]):
    """What ``probe`` saw; the child's stderr is kept for assertions on reports."""

    stderr: str
    stdout: str

    def errors_of(self, distribution: str) -> list[dict[str, Any]]:
        return [e for e in self["errors"] if distribution in (e["distribution"] or "")]

    def record(self, name: str) -> dict[str, Any]:
        found = [r for r in self["records"] if r["name"] == name]
        assert found, f"no record for {name}: {self['records']}"
        return found[0]

    def loaded(self) -> list[str]:
        return [r["name"] for r in self["records"] if r["status"] == "loaded"]


def probe(
    path: Sequence[os.PathLike[str] | str] = (),
    *,
    autoload: Sequence[str] | None = (),
    add: Sequence[str] = (),
    calls: Sequence[tuple[str, Any]] = (),
    privileges: str | None = None,
    sitedirs: Sequence[os.PathLike[str] | str] = (),
    workspace: os.PathLike[str] | str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: os.PathLike[str] | str | None = None,
) -> ProbeResult:
    """Build a Registry in a fresh interpreter and report what it found and did.

    ``autoload=None`` keeps the registry's default (``AUTOLOAD_TOOLSETS``). The child must
    exit 0: whatever a toolset or plugin does, the host has to keep working.
    """
    request = {
        "autoload": None if autoload is None else list(autoload),
        "add": list(add),
        "calls": [[name, arguments] for name, arguments in calls],
        "privileges": privileges,
        "sitedirs": [os.fspath(d) for d in sitedirs],
        "workspace": None if workspace is None else os.fspath(workspace),
    }
    completed = subprocess.run(
        [sys.executable, str(PROBE_SCRIPT), json.dumps(request)],
        env=clean_env(env, path=path), cwd=cwd, capture_output=True, text=True,
        encoding="utf-8", errors="replace", timeout=60, check=False,
    )
    assert completed.returncode == 0, (
        f"the host stopped (exit {completed.returncode})\nstdout:\n{completed.stdout}\n"
        f"stderr:\n{completed.stderr}"
    )
    payload = completed.stdout.rpartition(MARKER)[2]
    result = ProbeResult(json.loads(payload))
    result.stderr = completed.stderr
    result.stdout = completed.stdout.rpartition(MARKER)[0]
    return result
