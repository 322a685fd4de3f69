"""The workspace boundary and norm_path()."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from janito_core import Registry, Workspace, WorkspaceError, norm_path
from janito_core.dispatch import call_tool


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with a sibling folder outside it, and links of every kind."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("keep out", encoding="utf-8")
    (root / "sub" / "inside.txt").write_text("fine", encoding="utf-8")
    (root / "to_outside").symlink_to(outside)
    (root / "to_secret").symlink_to(outside / "secret.txt")
    (root / "to_sub").symlink_to(root / "sub")
    (root / "relative_escape").symlink_to(Path("sub") / ".." / ".." / "outside")
    return root, outside


def test_default_root_is_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Workspace().root == os.path.realpath(tmp_path)
    assert Workspace().confined is True


def test_the_root_itself_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    workspace = Workspace(tmp_path / "alias")
    assert workspace.root == str(real.resolve())
    assert workspace.resolve("a.txt") == str(real.resolve() / "a.txt")


@pytest.mark.parametrize("path", ["a.txt", "sub/inside.txt", "sub/../a.txt", "./sub/./x",
                                  "sub/", ".", "to_sub/inside.txt", "new/dir/file"])
def test_paths_inside_resolve(layout: tuple[Path, Path], path: str) -> None:
    root, _ = layout
    workspace = Workspace(root)
    real = workspace.resolve(path)
    assert real == os.path.realpath(root / path)
    assert workspace.contains(real)


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "sub/../../outside",
                                  "sub/" + "../" * 40 + "etc/passwd"])
def test_dot_dot_out_is_refused(layout: tuple[Path, Path], path: str) -> None:
    root, _ = layout
    with pytest.raises(WorkspaceError) as caught:
        Workspace(root).resolve(path)
    assert caught.value.path == path
    assert "outside the workspace" in caught.value.reason
    assert str(root.resolve()) in str(caught.value)


def test_absolute_paths_inside_and_outside(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    workspace = Workspace(root)
    assert workspace.resolve(str(root / "sub")) == str((root / "sub").resolve())
    for path in (str(outside / "secret.txt"), "/etc/passwd", "/", str(root.parent)):
        with pytest.raises(WorkspaceError):
            workspace.resolve(path)


@pytest.mark.parametrize("path", ["to_outside", "to_outside/secret.txt", "to_secret",
                                  "relative_escape", "relative_escape/secret.txt"])
def test_symlinks_leading_out_are_refused(layout: tuple[Path, Path], path: str) -> None:
    root, _ = layout
    with pytest.raises(WorkspaceError):
        Workspace(root).resolve(path)


def test_a_prefix_sibling_is_not_inside(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "workshop").mkdir()
    workspace = Workspace(tmp_path / "work")
    with pytest.raises(WorkspaceError):
        workspace.resolve(str(tmp_path / "workshop" / "x"))
    with pytest.raises(WorkspaceError):
        workspace.resolve("../workshop/x")
    assert not workspace.contains(str((tmp_path / "workshop").resolve()))


def test_symlink_loops_never_lead_out(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    (root / "via_outside").symlink_to(outside / "back")
    (outside / "back").symlink_to(root / "via_outside")
    workspace = Workspace(root)
    for path in ("loop_a", "loop_a/x", "via_outside", "via_outside/x"):
        try:
            real = workspace.resolve(path)
        except WorkspaceError:
            continue
        assert workspace.contains(real)
        with pytest.raises(OSError):
            Path(real).read_text()


@pytest.mark.parametrize("path", ["x\x00y", "\x00", "sub/\x00/etc"])
def test_nul_characters_are_refused(layout: tuple[Path, Path], path: str) -> None:
    with pytest.raises(WorkspaceError, match="NUL"):
        Workspace(layout[0]).resolve(path)


@pytest.mark.parametrize("value", ["", None, 5, 1.5, ["a"], {"a": 1}, True])
def test_values_that_are_not_paths_are_refused(layout: tuple[Path, Path], value: object) -> None:
    with pytest.raises(WorkspaceError):
        Workspace(layout[0]).resolve(value)


def test_long_paths_give_a_path_or_a_workspace_error(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    workspace = Workspace(root)
    for path in ("n" * 300, "d/" * 3000 + "f", ("d" * 250 + "/") * 40):
        try:
            real = workspace.resolve(path)
        except WorkspaceError:
            continue
        assert workspace.contains(real)
    with pytest.raises(WorkspaceError):
        workspace.resolve("../" * 5000 + "etc")


def test_non_utf8_names_resolve_both_as_bytes_and_as_text(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    raw = os.fsencode(str(root)) + b"/caf\xe9.txt"
    with open(raw, "wb") as handle:
        handle.write(b"latin-1 name")
    workspace = Workspace(root)
    from_bytes = workspace.resolve(b"caf\xe9.txt")
    from_text = workspace.resolve(os.fsdecode(b"caf\xe9.txt"))
    assert from_bytes == from_text
    with open(from_bytes, "rb") as handle:
        assert handle.read() == b"latin-1 name"
    assert workspace.display(from_bytes) == os.fsdecode(b"caf\xe9.txt")
    with pytest.raises(WorkspaceError):
        workspace.resolve(b"../caf\xe9.txt")


def test_path_like_objects_are_accepted(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert Workspace(root).resolve(Path("sub") / "inside.txt") == str(root.resolve() / "sub" /
                                                                      "inside.txt")


def test_unconfined_lifts_the_boundary_explicitly(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    free = Workspace.unconfined(root)
    assert free.confined is False
    assert free.resolve("../outside/secret.txt") == str((outside / "secret.txt").resolve())
    assert free.resolve("to_secret") == str((outside / "secret.txt").resolve())
    assert free.resolve("a.txt") == str(root.resolve() / "a.txt")
    with pytest.raises(WorkspaceError):
        free.resolve("x\x00")
    assert Workspace(root, confined=False) == free
    assert Workspace(root) != free
    assert "confined=False" in repr(free)


def test_display_paths(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    workspace = Workspace(root)
    assert workspace.display(workspace.resolve("sub/inside.txt")) == "sub/inside.txt"
    assert workspace.display(workspace.root) == "."
    assert workspace.display(str(outside.resolve())) == str(outside.resolve())


def test_tools_resolve_through_their_registry_workspace(registry: Registry,
                                                        workspace: Path) -> None:
    (workspace / "n.txt").write_text("note", encoding="utf-8")
    ok = call_tool("ReadNote", {"filepath": str(workspace / "n.txt")}, registry=registry)
    assert ok == {"success": True, "filepath": "n.txt", "text": "note"}
    refused = call_tool("ReadNote", {"filepath": "../../etc/passwd"}, registry=registry)
    assert refused["success"] is False
    assert refused["error_type"] == "outside_workspace"
    assert refused["filepath"] == "../../etc/passwd"
    escaped = call_tool("Escapes", {}, registry=registry)
    assert escaped["error_type"] == "outside_workspace"


# -- norm_path --------------------------------------------------------------------------------


def test_norm_path_relative_below_the_base(tmp_path: Path) -> None:
    assert norm_path(tmp_path / "a" / "b.txt", tmp_path) == "a/b.txt"
    assert norm_path(str(tmp_path / "a"), str(tmp_path)) == "a"
    assert norm_path(tmp_path, tmp_path) == "."


def test_norm_path_absolute_outside_the_base(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    assert norm_path(tmp_path / "other" / "x", tmp_path / "base") == str(tmp_path / "other" / "x")
    assert norm_path("/etc/passwd", tmp_path) == "/etc/passwd"


def test_norm_path_defaults_to_the_current_directory(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert norm_path("x/y") == "x/y"
    assert norm_path(str(tmp_path / "z")) == "z"
    assert norm_path("sub/../z") == "z"
    assert norm_path("") == "."
    assert norm_path("..") == str(tmp_path.parent)


def test_resolve_entry_keeps_the_last_component_unfollowed(tmp_path: Path) -> None:
    import os

    from janito_core import Workspace, WorkspaceError

    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    os.symlink("/etc", root / "link")
    workspace = Workspace(root)
    real_root = workspace.root
    assert workspace.resolve_entry("link") == os.path.join(real_root, "link")
    assert workspace.resolve_entry("sub/new.txt") == os.path.join(real_root, "sub", "new.txt")
    assert workspace.resolve_entry("sub/") == os.path.join(real_root, "sub")
    os.symlink(tmp_path, root / "up")
    outside = {"../x": "outside_workspace", "/etc/passwd": "outside_workspace",
               "up/../x": "outside_workspace", "bad\ud800name": "invalid_path",
               "link/passwd": "outside_workspace", ".": "invalid_path", "sub/..": "invalid_path",
               "": "invalid_path", "a\x00b": "invalid_path"}
    for path, error_type in outside.items():
        try:
            workspace.resolve_entry(path)
        except WorkspaceError as exc:
            assert exc.error_type == error_type, path
        else:
            raise AssertionError(f"{path!r} was accepted")


def test_within_confines_to_a_folder_opened_through_the_walk(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "sub" / "deeper").mkdir()
    (root / "sub" / "deeper" / "note.txt").write_text("deep", encoding="utf-8")
    (root / "sub" / "to_inside").symlink_to("inside.txt")
    (root / "sub" / "up").symlink_to("../to_sub/inside.txt")  # inside the workspace, not sub
    workspace = Workspace(root)
    with workspace.within("to_sub") as sub:  # a link inside: its target is the root
        assert sub.root == os.path.join(workspace.root, "sub")
        assert sub.read_bytes("to_inside") == b"fine"
        assert sub.read_bytes(os.path.join(sub.root, "deeper/note.txt")) == b"deep"
        assert sub.relative("deeper/note.txt") == "deeper/note.txt"
        for way_out in ("up", "../sub/inside.txt", os.path.join(workspace.root, "probe"),
                        "/etc/passwd"):
            with pytest.raises(WorkspaceError) as caught:
                sub.read_bytes(way_out)
            assert caught.value.error_type == "outside_workspace", way_out
        # The folder was opened once: swapping its name for a link changes nothing.
        os.rename(root / "sub", root / "sub-moved")
        (root / "sub").symlink_to(outside)
        assert sub.read_bytes("inside.txt") == b"fine"
    with pytest.raises(WorkspaceError):
        sub.read_bytes("inside.txt")  # closed: never opened again by its path
    with pytest.raises(WorkspaceError) as caught:
        workspace.within("to_outside")
    assert caught.value.error_type == "outside_workspace"
    with pytest.raises(NotADirectoryError):
        workspace.within("sub-moved/inside.txt")
    with pytest.raises(FileNotFoundError):
        workspace.within("missing")


def test_a_view_outlives_the_workspace_it_was_made_of(tmp_path: Path) -> None:
    """A view shares its workspace's root descriptor: the workspace dropped, the view
    keeps it open (it was closed under the view, which then wrote nowhere)."""
    import gc

    view = Workspace(tmp_path).deferred()
    gc.collect()
    # what a closed root's number would be handed to
    others = [os.open(os.devnull, os.O_RDONLY) for _ in range(8)]
    try:
        view.write_file("kept.txt", b"kept")
    finally:
        for fd in others:
            os.close(fd)
    assert (tmp_path / "kept.txt").read_bytes() == b"kept"
