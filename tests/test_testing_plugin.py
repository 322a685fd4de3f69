"""The pytest plugin janito-core gives toolset authors: the ``janito`` fixture."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, TypedDict

import pytest

from janito_core import BaseTool, Failure, Workspace, failure, tool
from janito_core.testing import ToolsetTester


def test_the_fixture_isolates_config_and_secrets(janito: ToolsetTester) -> None:
    assert os.environ["JANITO_CONFIG_DIR"].startswith(str(janito.workspace.parent))
    assert os.environ["PYTHON_KEYRING_BACKEND"] == "keyring.backends.fail.Keyring"
    assert janito.workspace.is_dir() and not any(janito.workspace.iterdir())


def test_load_and_call_go_through_dispatch(janito: ToolsetTester, testkit_dir: Path) -> None:
    registry = janito.load("testkit", privileges="r")
    assert registry.workspace.root == str(janito.workspace.resolve())
    janito.path("n.txt").write_text("hello", encoding="utf-8")
    assert janito.call("ReadNote", filepath="n.txt")["text"] == "hello"
    assert janito.call("ReadNote", '{"filepath": "n.txt"}')["text"] == "hello"
    assert janito.call("ReadNote", {"filepath": "n.txt"})["text"] == "hello"
    assert janito.call("WriteNote", filepath="x", text="y")["error_type"] == "permission_denied"
    assert janito.call("Typed", count="x")["error_type"] == "invalid_arguments"
    assert janito.call("ReadNote", filepath="../outside")["error_type"] == "outside_workspace"


def test_call_before_load_is_a_usage_error(janito: ToolsetTester) -> None:
    with pytest.raises(RuntimeError, match=r"janito\.load"):
        janito.call("ReadNote", filepath="x")


def test_arguments_either_as_one_value_or_as_keywords(janito: ToolsetTester,
                                                      testkit_dir: Path) -> None:
    janito.load("testkit")
    with pytest.raises(TypeError):
        janito.call("Typed", {"count": 1}, count=2)


def test_folder_swapper_swaps_and_puts_the_folder_back(tmp_path: Path) -> None:
    from janito_core.testing import FolderSwapper

    folder = tmp_path / "ws" / "out"
    folder.mkdir(parents=True)
    (folder / "inside.txt").write_text("inside")
    target = tmp_path / "outside"
    target.mkdir()
    (target / "outside.txt").write_text("outside")
    seen: dict[str, set[str]] = {state: set() for state in FolderSwapper.STATES}
    with FolderSwapper(folder, target) as swapper:
        for state in swapper.rounds(30):
            try:
                seen[state].update(os.listdir(folder))
            except FileNotFoundError:  # between two renames, where names cannot be exchanged
                pass
    # The held states are certain, whatever the scheduler did with the thread.
    assert seen["folder"] == {"inside.txt"} and seen["link"] == {"outside.txt"}
    assert seen["racing"] <= {"inside.txt", "outside.txt"}
    assert swapper.swaps >= 10 and swapper.errors == []
    assert not folder.is_symlink() and os.listdir(folder) == ["inside.txt"]
    assert sorted(os.listdir(folder.parent)) == ["out"]


def test_folder_swapper_holds_a_state_until_told(tmp_path: Path) -> None:
    from janito_core.testing import FolderSwapper

    folder = tmp_path / "out"
    folder.mkdir()
    target = tmp_path / "outside"
    target.mkdir()
    with FolderSwapper(folder, target) as swapper:
        swapper.hold("link")
        assert all(folder.is_symlink() for _ in range(1000))
        swapper.hold("folder")
        assert not any(folder.is_symlink() for _ in range(1000))
        with pytest.raises(ValueError):
            swapper.hold("elsewhere")
    assert swapper.errors == [] and not folder.is_symlink()


def test_add_registers_function_and_class_tools_defined_in_the_test(janito: ToolsetTester) -> None:
    @tool(permissions="r")
    def root_name(workspace: Workspace) -> dict[str, Any]:
        """The workspace folder's name."""
        return {"success": True, "name": os.path.basename(workspace.root)}

    @tool()
    class Ping(BaseTool):
        """Answer."""

        def run(self) -> dict[str, Any]:
            return {"success": True}

    janito.add(root_name, Ping, privileges="r")
    assert janito.call("RootName") == {"success": True, "name": "workspace"}
    assert janito.call("Ping") == {"success": True}
    with pytest.raises(TypeError, match="load"):
        janito.add(Ping, privileges="rw")


class Counted(TypedDict):
    """What Count answers.

    Attributes:
        words: How many words.
    """

    success: Literal[True]
    words: int


@tool()
def count(text: str, say: str = "int") -> Counted | Failure:
    """Count words, or answer what the result type does not describe.

    Args:
        text: The text.
        say: How to give the count: int (as declared), str (not as declared) or fail.
    """
    if say == "fail":
        return failure("asked to fail", "invalid_arguments", text=text)
    words: Any = len(text.split()) if say == "int" else str(len(text.split()))
    return {"success": True, "words": words}


@tool()
def undeclared(say: str) -> dict[str, Any]:
    """Answer anything: no result type is declared.

    Args:
        say: What to answer.
    """
    return {"success": True, "said": say}


def test_answers_are_held_to_the_declared_result_type(janito: ToolsetTester) -> None:
    janito.add(count, undeclared)
    assert janito.call("Count", text="one two") == {"success": True, "words": 2}
    assert janito.call("Count", text="x", say="fail")["error_type"] == "invalid_arguments"
    assert janito.call("Undeclared", say="anything")["said"] == "anything"
    assert janito.call("Nothing")["error_type"] == "unknown_tool"
    with pytest.raises(AssertionError) as caught:
        janito.call("Count", text="one two", say="str")
    said = str(caught.value)
    assert said.startswith("Count: a successful result does not match the declared result "
                           "type: result['words']: '2' is not of type 'integer'")
    assert "answer: {'success': True, 'words': '2'}" in said
    assert "janito.check_results = False" in said


def test_a_test_may_look_at_an_answer_that_breaks_its_type(janito: ToolsetTester) -> None:
    janito.check_results = False
    janito.add(count)
    assert janito.call("Count", text="one two", say="str") == {"success": True, "words": "2"}


def test_without_jsonschema_the_test_is_told_answers_go_unchecked(janito: ToolsetTester) -> None:
    janito._result_schemas.checking = False  # as where jsonschema is not installed
    janito.add(count)
    with pytest.warns(UserWarning, match="install jsonschema"):
        assert janito.call("Count", text="one", say="str")["words"] == "1"


WRONG_ANSWER_TEST = '''
from typing import Literal, TypedDict

from janito_core import Failure, tool


class Stats(TypedDict):
    success: Literal[True]
    lines: int


@tool()
def line_count(text: str) -> Stats | Failure:
    """Count lines.

    Args:
        text: The text.
    """
    return {"success": True, "lines": text.count("\\n"), "words": 0}


def test_counts_lines(janito):
    janito.add(line_count)
    assert janito.call("LineCount", text="a\\nb\\n")["lines"] == 2


def test_unchecked(janito):
    janito.check_results = False
    janito.add(line_count)
    assert janito.call("LineCount", text="a\\nb\\n")["words"] == 0
'''


def test_a_wrong_answer_fails_the_author_s_test_saying_where(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_lines.py").write_text(WRONG_ANSWER_TEST, encoding="utf-8")
    done = _pytest_in(project, "-q", path=[])
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "1 failed, 1 passed" in out
    assert ("AssertionError: LineCount: a successful result does not match the declared result "
            "type: result: Additional properties are not allowed ('words' was unexpected)") in out
    assert "FAILED test_lines.py::test_counts_lines" in out


def _pytest_in(folder: Path, *args: str, path: list[Path]) -> subprocess.CompletedProcess[str]:
    from helpers.distributions import clean_env

    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=folder, env=clean_env(path=path), capture_output=True, text=True,
                          timeout=300)


def test_the_option_adds_a_conformance_item_per_toolset(tmp_path: Path) -> None:
    from helpers.distributions import sources_of_package, write_distribution

    site = tmp_path / "site"
    write_distribution(site, "janito-goodkit", "1.0.0", toolsets={"goodkit": "janito_goodkit"},
                       files=sources_of_package("janito_goodkit"))
    write_distribution(site, "janito-probes", "0.0.1",
                       toolsets={"probe_prints": "janito_probes.prints",
                                 "probe_gated": "janito_probes.gated"},
                       files=sources_of_package("janito_probes"))
    project = tmp_path / "project"
    project.mkdir()
    done = _pytest_in(project, "--janito-toolset", "goodkit", "--janito-toolset", "probe_prints",
                      "--janito-toolset", "probe_gated", "--janito-examples", "5",
                      "--janito-seed", "7", path=[site])
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "collected 3 items" in out  # counted as collected, not only as run
    assert "2 passed, 1 failed" in out or "1 failed, 2 passed" in out
    assert "CountWords: [stdout] wrote to standard output: 'counting words\\n'" in out
    assert "input: {" in out
    assert "janito conformance" in out
    assert "not exercised: AskService: skipped here: PROBE_SERVICE_URL is not set" in out
    assert "note: ListNotes: module janito_goodkit.notes has no main() harness" in out
    assert "seed 7" in out
    only = _pytest_in(project, "--janito-toolset", "goodkit", "--janito-examples", "3",
                      "-k", "goodkit", "--collect-only", "-q", path=[site])
    assert only.returncode == 0, only.stdout + only.stderr
    assert "janito-conformance::goodkit" in only.stdout
