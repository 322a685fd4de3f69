"""An ignore file that is there and cannot be read (out of descriptors, an I/O error, no
permission) never lets the walk go on as if its rules said nothing: that would show the
model what a ``.janitoignore`` hides. The folder holding it is not walked and is named
under ``unreadable``; a search below it is refused alike.

The failure is made by the operating system where it can be (a file without read
permission, for a user other than root), and injected into the one function that opens
ignore files where it cannot: root reads any file, and no limit on descriptors makes
that open fail while the walk's own succeed.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from files_helpers import ok

HIDDEN = "*.key\n"


def _tree(ws: Path) -> None:
    (ws / "open").mkdir()
    (ws / "open" / "c.txt").write_text("needle c\n")
    secret = ws / "secret"
    (secret / "deeper").mkdir(parents=True)
    (secret / ".janitoignore").write_text(HIDDEN)
    (secret / "a.key").write_text("needle a\n")
    (secret / "b.txt").write_text("needle b\n")
    (secret / "deeper" / "d.key").write_text("needle d\n")


@pytest.fixture
def unreadable_ignore_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ignore file fails to open with EIO; every other file opens as usual."""
    import janito_core.workspace as workspace

    real = workspace.open_regular_at

    def opening(dir_fd: int, name: str, *args: Any, **kwargs: Any) -> Any:
        if name in (".janitoignore", ".gitignore"):
            raise OSError(errno.EIO, os.strerror(errno.EIO), name)
        return real(dir_fd, name, *args, **kwargs)

    monkeypatch.setattr(workspace, "open_regular_at", opening)


def _check(files: Any, reason: str) -> None:
    for tool, arguments in [("SearchText", {"paths": ".", "query": "needle"}),
                            ("SearchRegex", {"paths": ".", "pattern": r"needle \w"}),
                            ("FindFiles", {"paths": ".", "pattern": "*"}),
                            ("ListFiles", {"directory": ".", "max_depth": 3})]:
        result = ok(files.call(tool, **arguments))
        shown = repr(result)
        assert ".key" not in shown and "b.txt" not in shown, (tool, result)
        assert "c.txt" in shown, (tool, result)
        assert any(line == f"secret/.janitoignore: {reason}" for line in result["unreadable"]), \
            (tool, result)
    # a search below the folder does not know what its rules hide either
    result = ok(files.call("SearchText", paths="secret/deeper", query="needle"))
    assert result["count"] == 0 and "d.key" not in repr(result), result
    assert any(reason in line for line in result["unreadable"]), result


def test_an_ignore_file_that_fails_to_open_hides_its_folder(
        files: Any, ws: Path, unreadable_ignore_files: None) -> None:
    _tree(ws)
    _check(files, os.strerror(errno.EIO))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
def test_an_ignore_file_without_read_permission_hides_its_folder(files: Any, ws: Path) -> None:
    _tree(ws)
    (ws / "secret" / ".janitoignore").chmod(0)
    _check(files, os.strerror(errno.EACCES))


def test_a_readable_ignore_file_still_hides_only_what_it_names(files: Any, ws: Path) -> None:
    _tree(ws)
    result = ok(files.call("SearchText", paths=".", query="needle"))
    assert sorted(m["path"] for m in result["matches"]) == ["open/c.txt", "secret/b.txt"]
    assert "unreadable" not in result
