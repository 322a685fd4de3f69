"""Every shell block of the documentation is run by a test, or says why it is not.

The documentation is README.md, docs/*.md and each plugin's README.md. A fenced block in
it always names its language. A shell block (``bash``, ``sh``, ``shell``, ``console``)
is one of:

- preceded by ``<!-- run by tests/PATH.py -->``: a test of its own runs it (that file
  reads this document);
- preceded by ``<!-- not run: REASON -->``: it needs what a test cannot have (a Google
  account, the web, an authorization server), runs the test suites themselves, or is a
  transcript; docs/fresh-machine.md records what was run of it on a fresh machine;
- neither: this module runs it, as written, with ``bash -euo pipefail``, in a copy of the
  checkout's text (README.md, LICENSE, docs/) with every distribution installed, a private
  configuration folder and home, and it must exit 0.

Run with every distribution installed (``nox -s tests-integration``, and ``installed``
against the wheels, whose copy of the repository holds the plugins' READMEs).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers.distributions import clean_env

ROOT = Path(__file__).resolve().parents[2]
# A fence may be indented (inside a list item) by up to three spaces, as Markdown allows.
FENCE = re.compile(r"^( {0,3})```([^\n`]*)\n(.*?)^\1```[ \t]*$", re.S | re.M)
SHELL = {"bash", "sh", "shell", "console"}
RUN_BY = re.compile(r"<!-- run by (tests/\S+\.py|plugins/[\w-]+/tests/\S+\.py) -->")
NOT_RUN = re.compile(r"<!-- not run: (\S.*\S) -->")
CHECKOUT_TEXT = ("README.md", "LICENSE", "docs")


class Block(NamedTuple):
    doc: str
    line: int
    language: str
    body: str
    marker: str


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "plugins").glob("*/README.md"))]


def blocks() -> list[Block]:
    found = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            found.append(Block(path.relative_to(ROOT).as_posix(),
                               text.count("\n", 0, match.start()) + 1,
                               match.group(2).strip(), match.group(3), before))
    return found


def shell_blocks() -> list[Block]:
    return [b for b in blocks() if b.language in SHELL]


def to_run() -> list[Block]:
    return [b for b in shell_blocks() if not RUN_BY.fullmatch(b.marker)
            and not NOT_RUN.fullmatch(b.marker)]


def test_the_documents_are_all_here() -> None:
    """In the wheels' copy of the repository too: the plugins' READMEs come along."""
    names = {p.relative_to(ROOT).as_posix() for p in documents()}
    assert {"README.md", "docs/authoring-toolsets.md", "plugins/janito-files/README.md",
            "plugins/janito-mcp/README.md"} <= names, sorted(names)


def test_every_block_names_its_language() -> None:
    unnamed = [f"{b.doc}:{b.line}" for b in blocks() if not b.language]
    assert not unnamed, f"blocks with no language (```text for what is not code): {unnamed}"


def test_every_shell_block_is_run_or_says_why_not() -> None:
    problems = []
    for block in shell_blocks():
        where = f"{block.doc}:{block.line}"
        if block.marker.startswith("<!--") and not (RUN_BY.fullmatch(block.marker)
                                                      or NOT_RUN.fullmatch(block.marker)):
            problems.append(f"{where}: a comment that is neither 'run by' nor 'not run': "
                            f"{block.marker}")
        match = RUN_BY.fullmatch(block.marker)
        if match and (ROOT / "plugins" / "janito-files" / "pyproject.toml").is_file():
            test = ROOT / match.group(1)
            if not test.is_file():
                problems.append(f"{where}: {match.group(1)} does not exist")
            elif Path(block.doc).name not in test.read_text(encoding="utf-8"):
                problems.append(f"{where}: {match.group(1)} never names {block.doc}")
    assert not problems, "\n".join(problems)


def test_some_blocks_are_run_here() -> None:
    """The blocks this module runs exist (a marker added everywhere would empty it)."""
    docs = {b.doc for b in to_run()}
    assert {"plugins/janito-files/README.md", "plugins/janito-system/README.md",
            "plugins/janito-skills/README.md"} <= docs, sorted(docs)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The checkout's text, where the commands are written to run."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    for name in CHECKOUT_TEXT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name)
        else:
            shutil.copy2(source, copy / name)
    return copy


@pytest.mark.parametrize("block", to_run(), ids=lambda b: f"{b.doc}:{b.line}")
def test_the_block_runs_as_written(block: Block, checkout: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env({"HOME": str(home), "JANITO_CONFIG_DIR": str(home / ".config" / "janito"),
                     "NO_COLOR": "1", "TMPDIR": str(tmp_path)})
    # `python` and `janito` are the environment's, as in the activated one the docs use.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.body], cwd=checkout,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (f"{block.doc}:{block.line} exited {done.returncode}\n"
                                  f"{block.body}--- stdout\n{done.stdout[-3000:]}\n"
                                  f"--- stderr\n{done.stderr[-3000:]}")
