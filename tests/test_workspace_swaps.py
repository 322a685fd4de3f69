"""A folder on the path that turns from a link back into a folder in the middle of a walk.

Both cases once failed closed with an error the model could not act on (``EINVAL`` from
``readlinkat`` on what is no longer a link, and "a part of the path is a file, not a
folder" for a folder); the walk now looks at the component again. The swap is made at the
exact moment by wrapping the call that would see it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from janito_core import Workspace


class Layout:
    """``ws/box`` is a link to a folder outside; ``ws/box.aside`` the real folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"
        self.box = self.root / "box"
        self.aside = self.root / "box.aside"
        self.link = self.root / "box.link"
        outside = tmp_path / "outside"
        outside.mkdir()
        self.box.mkdir(parents=True)
        (self.box / "a.txt").write_text("inside")
        os.rename(self.box, self.aside)
        os.symlink(outside, self.box)
        self.armed = True

    def swap_back(self) -> None:
        """``box`` becomes the real folder again."""
        if self.armed:
            self.armed = False
            os.rename(self.box, self.link)
            os.rename(self.aside, self.box)


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


def test_a_link_turned_folder_before_readlink(layout: Layout,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.readlink

    def readlink(path: Any, *, dir_fd: int | None = None) -> Any:
        if path == "box":
            layout.swap_back()
        return real(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "readlink", readlink)
    assert Workspace(layout.root).read_bytes("box/a.txt") == b"inside"


def test_a_link_turned_folder_before_lstat(layout: Layout,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.stat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if path == "box" and kwargs.get("follow_symlinks") is False:
            layout.swap_back()
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", lstat)
    assert Workspace(layout.root).read_bytes("box/a.txt") == b"inside"
