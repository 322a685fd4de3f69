"""The pytest plugin janito-core gives toolset authors: the ``janito`` fixture."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    import time

    from janito_core.testing import FolderSwapper

    folder = tmp_path / "ws" / "out"
    folder.mkdir(parents=True)
    (folder / "inside.txt").write_text("inside")
    target = tmp_path / "outside"
    target.mkdir()
    (target / "outside.txt").write_text("outside")
    seen: set[str] = set()
    with FolderSwapper(folder, target) as swapper:
        deadline = time.monotonic() + 10
        while len(seen) < 2 and time.monotonic() < deadline:
            try:
                seen.update(os.listdir(folder))
            except FileNotFoundError:
                pass
    assert seen == {"inside.txt", "outside.txt"}
    assert swapper.swaps > 0 and swapper.errors == []
    assert not folder.is_symlink() and os.listdir(folder) == ["inside.txt"]
    assert sorted(os.listdir(folder.parent)) == ["out"]
