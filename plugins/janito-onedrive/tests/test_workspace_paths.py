"""Downloads and uploads reach the workspace only through it: links inside are followed,
links out refused, a download is published whole or not at all, and a folder swapped for a
link while the tools run leads no byte out of the workspace or in from outside it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fake_graph import FakeGraph

from janito_core.testing import FolderSwapper

SECRET = b"sentinel-outside-the-workspace"
ROUNDS = 300


def _temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith((".tmp", ".part"))]


def test_download_follows_links_inside_and_refuses_links_out(onedrive: Any,
                                                            tmp_path: Path) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "new")
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = onedrive.workspace
    (ws / "real").mkdir()
    os.symlink(ws / "real", ws / "inside-link")
    os.symlink(outside, ws / "link-out")
    os.symlink(outside / "planted.txt", ws / "dangling-out.txt")
    os.symlink("loop", ws / "loop")
    into = onedrive.call("DownloadOneDriveFile", path="a.txt", output_path="inside-link")
    assert into["success"], into
    assert into["local_path"] == "real/a.txt" and (ws / "real" / "a.txt").read_text() == "new"
    for output_path, error_type in [
            ("link-out", "outside_workspace"), ("link-out/", "outside_workspace"),
            ("link-out/x.txt", "outside_workspace"), ("link-out/new/x.txt", "outside_workspace"),
            ("dangling-out.txt", "outside_workspace"), ("loop/x.txt", "symlink_loop"),
            ("a\x00b", "invalid_path")]:
        result = onedrive.call("DownloadOneDriveFile", path="a.txt", output_path=output_path,
                               overwrite=True)
        assert (result["success"], result["error_type"]) == (False, error_type), (output_path,
                                                                                  result)
    assert list(outside.iterdir()) == []
    fresh = onedrive.call("DownloadOneDriveFile", path="a.txt", output_path="new-folder/")
    assert fresh["local_path"] == "new-folder/a.txt", fresh
    (ws / "plain.txt").write_text("x")
    through = onedrive.call("DownloadOneDriveFile", path="a.txt", output_path="plain.txt/x")
    assert through["error_type"] == "not_a_directory", through


def test_a_short_download_leaves_nothing_under_the_name(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(700_000)
    graph.add_file("big.bin", data)
    graph.add_fault("short_download", lambda method, path: path == "big.bin", times=2)
    first = onedrive.call("DownloadOneDriveFile", path="big.bin")
    assert (first["success"], first["error_type"]) == (False, "connection_failed"), first
    assert "stopped at 350000 of 700000 bytes" in first["error"]
    assert not onedrive.path("big.bin").exists()
    onedrive.path("big.bin").write_bytes(b"previous")
    replacing = onedrive.call("DownloadOneDriveFile", path="big.bin", overwrite=True)
    assert replacing["error_type"] == "connection_failed"
    assert onedrive.path("big.bin").read_bytes() == b"previous"
    assert _temporaries(onedrive.workspace) == []
    whole = onedrive.call("DownloadOneDriveFile", path="big.bin", overwrite=True)
    assert whole["success"] and onedrive.path("big.bin").read_bytes() == data


def test_a_download_folder_swapped_for_a_link_keeps_every_write_inside(
        onedrive: Any, tmp_path: Path) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "from onedrive")
    outside = tmp_path / "outside"
    outside.mkdir()
    (onedrive.workspace / "box").mkdir()
    outcomes: dict[str, set[str]] = {state: set() for state in FolderSwapper.STATES}
    with FolderSwapper(onedrive.workspace / "box", outside) as swapper:
        for state in swapper.rounds(ROUNDS):
            result = onedrive.call("DownloadOneDriveFile", path="a.txt",
                                   output_path="box/a.txt", overwrite=True)
            outcomes[state].add("saved" if result["success"] else result["error_type"])
    assert swapper.errors == []
    assert list(outside.iterdir()) == [], outcomes
    assert outcomes["folder"] == {"saved"} and outcomes["link"] == {"outside_workspace"}, outcomes
    assert onedrive.path("box/a.txt").read_text() == "from onedrive"


def test_upload_reads_only_workspace_files(onedrive: Any, tmp_path: Path) -> None:
    graph: FakeGraph = onedrive.graph
    secret = tmp_path / "secret.txt"
    secret.write_bytes(SECRET)
    ws = onedrive.workspace
    (ws / "docs").mkdir()
    (ws / "docs" / "real.txt").write_text("inside")
    os.symlink("docs/real.txt", ws / "inside-link.txt")
    os.symlink(secret, ws / "link-out.txt")
    os.symlink(tmp_path, ws / "dir-out")
    os.mkfifo(ws / "pipe")
    linked = onedrive.call("UploadOneDriveFile", path="/", local_path="inside-link.txt")
    assert linked["success"], linked
    assert linked["path"] == "real.txt" and graph.nodes["real.txt"].content == b"inside"
    for local_path, error_type in [("link-out.txt", "outside_workspace"),
                                   ("dir-out/secret.txt", "outside_workspace"),
                                   ("pipe", "not_a_file"), ("docs", "is_directory"),
                                   ("a\x00b", "invalid_path")]:
        result = onedrive.call("UploadOneDriveFile", path="up.txt", local_path=local_path)
        assert (result["success"], result["error_type"]) == (False, error_type), (local_path,
                                                                                  result)
    assert "up.txt" not in graph.nodes


def test_an_upload_folder_swapped_for_a_link_never_sends_an_outside_file(
        onedrive: Any, tmp_path: Path) -> None:
    graph: FakeGraph = onedrive.graph
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.txt").write_bytes(SECRET)
    (onedrive.workspace / "box").mkdir()
    (onedrive.workspace / "box" / "data.txt").write_bytes(b"inside")
    outcomes: dict[str, set[str]] = {state: set() for state in FolderSwapper.STATES}
    with FolderSwapper(onedrive.workspace / "box", outside) as swapper:
        for state in swapper.rounds(ROUNDS):
            result = onedrive.call("UploadOneDriveFile", path="up.txt",
                                   local_path="box/data.txt", overwrite=True)
            outcomes[state].add("sent" if result["success"] else result["error_type"])
            if result["success"]:
                assert graph.nodes["up.txt"].content == b"inside"
    assert swapper.errors == []
    assert outcomes["folder"] == {"sent"} and outcomes["link"] == {"outside_workspace"}, outcomes
