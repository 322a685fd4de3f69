"""docs/authoring-toolsets.md is executed: its files are written, its commands run.

Also: `janito new-toolset` writes a distribution that installs into a clean environment,
passes its own tests (the conformance check included) and shows its tools in
`janito tools -t`. Both environments hold the toolsets janito loads by default
(janito-files, janito-system) from this tree, as a reader's does: a tool of the guide or
the scaffold named like one of theirs would never load, and the conformance check would
fail on it. Under nox this runs on every Python of the matrix (3.10 to 3.13).
Both build real virtual environments with uv, seeded with pip, since the guide's
commands are pip's; without uv they skip, except under CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "authoring-toolsets.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
FILE_MARK = re.compile(r"^(?:#|<!--)\s*file:\s*(\S+?)\s*(?:-->)?\s*$")


def _uv() -> str:
    found = shutil.which(os.environ.get("UV", "uv"))
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("uv is needed to build the clean environments of this test")
        pytest.skip("uv is not installed")
    return found


def _core_source() -> Path:
    if not (ROOT / "pyproject.toml").exists() or not (ROOT / "janito_core").is_dir():
        pytest.skip("needs the janito source tree")
    return ROOT


def _clean_env(tmp_path: Path) -> dict[str, str]:
    """A fresh venv with janito-core and the default toolsets from this tree; returns the
    environment to run in."""
    uv = _uv()
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--seed", "-p", sys.executable, str(venv)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JANITO_", "VIRTUAL_ENV", "UV_PYTHON", "UV_PROJECT_ENVIRONMENT"))}
    # The guide's commands find only what the environment holds: no uv on PATH.
    path = [p for p in env.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "uv").exists()]
    env.update({
        "VIRTUAL_ENV": str(venv),
        "PATH": os.pathsep.join([str(venv / "bin"), *path]),
        "PIP_QUIET": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "JANITO_CONFIG_DIR": str(tmp_path / "config"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_COLOR": "1",
    })
    env.pop("PYTHONPATH", None)
    core = _core_source()
    subprocess.run([uv, "pip", "install", "-q", str(core), str(core / "plugins" / "janito-files"),
                    str(core / "plugins" / "janito-system")], check=True, env=env, cwd=tmp_path)
    return env


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def test_every_block_of_the_guide_is_a_file_or_a_command() -> None:
    found = blocks(GUIDE.read_text(encoding="utf-8"))
    assert found, "the guide has code blocks"
    for language, body in found:
        first = body.splitlines()[0] if body else ""
        if language == "bash":
            continue
        assert FILE_MARK.match(first), f"a {language} block has no '# file:' line: {first!r}"


def test_the_guide_runs_end_to_end(tmp_path: Path) -> None:
    env = _clean_env(tmp_path)
    work = tmp_path / "guide"
    work.mkdir()
    outputs = []
    for language, body in blocks(GUIDE.read_text(encoding="utf-8")):
        if language == "bash":
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{body}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
            # nothing failed to load: no clash with the default toolsets, no broken module
            assert "janito: error" not in done.stderr, done.stderr
            outputs.append(done.stdout)
            continue
        first, _, rest = body.partition("\n")
        match = FILE_MARK.match(first)
        assert match is not None
        target = work / match.group(1)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body if language in ("python", "toml") else rest, encoding="utf-8")
        if language == "toml" and sys.version_info >= (3, 11):
            import tomllib

            tomllib.loads(body)
    joined = "\n".join(outputs)
    assert "TextStats" in joined and "SummariseWords" in joined
    assert "LetterCount" in joined and "LongestLine" in joined  # the function tools
    assert "UniqueWords" in joined and "\"unique_words\":" in joined  # the async tool, run
    assert '"counts": {' in joined and '"length":' in joined
    assert "schema ok" in joined
    assert "paths ok" in joined and "rewrote notes/today.txt" in joined
    assert '"words"' in joined
    assert "5 passed" in joined
    assert (work / "scaffold" / "janito-wordtools" / "pyproject.toml").exists()
    assert (work / "scaffold" / "acme-sqlite-tools" / "acme_sqlite" / "greet.py").exists()
    toolsets_line = next(line for line in joined.splitlines() if line.startswith("wordtools "))
    assert str(work / "janito-wordtools" / "acme_wordtools") in toolsets_line  # the editable copy
    assert list((work / "dist").glob("janito_wordtools-0.1.0-py3-none-any.whl"))


def test_new_toolset_installs_and_passes_its_own_tests(tmp_path: Path) -> None:
    env = _clean_env(tmp_path)
    made = subprocess.run(["janito", "new-toolset", "scaffolded", "--path", str(tmp_path)],
                          env=env, capture_output=True, text=True, check=True)
    folder = Path(made.stdout.strip())
    assert folder == tmp_path / "janito-scaffolded"
    subprocess.run([_uv(), "pip", "install", "-q", f"{folder}[test]"], env=env, check=True,
                   cwd=tmp_path)
    tests = subprocess.run(["python", "-m", "pytest", "-q",
                            "-p", "no:cacheprovider"], cwd=folder, env=env,
                           capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "5 passed" in tests.stdout
    assert (folder / ".gitignore").read_text().count(".hypothesis/") == 1
    listed = subprocess.run(["janito", "tools", "-t", "scaffolded", "--json"], env=env,
                            capture_output=True, text=True, check=True)
    import json

    rows = json.loads(listed.stdout)
    mine = {r["name"]: r for r in rows if r["toolset"] == "scaffolded"}
    assert sorted(mine) == ["CountLines", "Greet"]
    assert all(r["status"] == "loaded" and r["distribution"] == "janito-scaffolded"
               for r in mine.values())
    again = subprocess.run(["janito", "new-toolset", "scaffolded", "--path", str(tmp_path)],
                           env=env, capture_output=True, text=True)
    assert again.returncode == 2 and "exists already" in again.stderr
    bad = subprocess.run(["janito", "new-toolset", "Bad-Name"], env=env, capture_output=True,
                         text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "invalid toolset name" in bad.stderr
