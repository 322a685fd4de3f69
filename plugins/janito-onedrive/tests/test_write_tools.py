"""The write tools: download into the workspace, upload (one PUT or a resumable session),
create folders, delete."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fake_graph import FRAGMENT_UNIT, FakeGraph

# -- download ---------------------------------------------------------------------------


def test_download_saves_into_the_workspace(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(300_000)
    graph.add_file("Documents/data.bin", data)
    result = onedrive.call("DownloadOneDriveFile", path="Documents/data.bin")
    assert result["success"], result
    assert result["local_path"] == "data.bin" and result["size"] == len(data)
    assert onedrive.path("data.bin").read_bytes() == data
    nested = onedrive.call("DownloadOneDriveFile", path="Documents/data.bin",
                           output_path="in/here/copy.bin")
    assert nested["local_path"] == "in/here/copy.bin"
    assert onedrive.path("in/here/copy.bin").read_bytes() == data
    into_folder = onedrive.call("DownloadOneDriveFile", path="Documents/data.bin",
                                output_path="in")
    assert into_folder["local_path"] == "in/data.bin"
    # The content was fetched from the pre-authenticated URL without the bearer token.
    downloads = graph.requests("GET", "/download/")
    assert len(downloads) == 3 and all("authorization" not in r["headers"] for r in downloads)
    assert not [p for p in onedrive.workspace.rglob("*.part")]


def test_download_never_leaves_the_workspace_or_clobbers(onedrive: Any, tmp_path: Path) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "new")
    outside = onedrive.call("DownloadOneDriveFile", path="a.txt", output_path="../escape.txt")
    assert outside["success"] is False and outside["error_type"] == "outside_workspace"
    absolute = onedrive.call("DownloadOneDriveFile", path="a.txt",
                             output_path=str(tmp_path / "elsewhere.txt"))
    assert absolute["error_type"] == "outside_workspace"
    assert not (tmp_path / "elsewhere.txt").exists() and not (tmp_path / "escape.txt").exists()
    assert not graph.requests("GET", "/download/")
    onedrive.path("a.txt").write_text("old")
    kept = onedrive.call("DownloadOneDriveFile", path="a.txt")
    assert kept["error_type"] == "file_exists" and onedrive.path("a.txt").read_text() == "old"
    replaced = onedrive.call("DownloadOneDriveFile", path="a.txt", overwrite=True)
    assert replaced["success"] and onedrive.path("a.txt").read_text() == "new"


def test_download_missing_file_and_folder(onedrive: Any) -> None:
    onedrive.graph.add_folder("Docs")
    assert onedrive.call("DownloadOneDriveFile", path="nope.txt")["error_type"] == "not_found"
    folder = onedrive.call("DownloadOneDriveFile", path="Docs", output_path="docs-copy")
    assert folder["error_type"] == "is_directory"
    assert not onedrive.path("docs-copy").exists()


# -- upload -----------------------------------------------------------------------------


def test_small_upload_is_one_put_and_respects_overwrite(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_folder("Documents")
    result = onedrive.call("UploadOneDriveFile", path="Documents/hello.txt", content="héllo")
    assert result["success"], result
    assert result["method"] == "simple" and result["size"] == len("héllo".encode())
    assert graph.nodes["Documents/hello.txt"].content == "héllo".encode()
    put = graph.requests("PUT", "hello.txt:/content")[-1]
    assert "%40microsoft.graph.conflictBehavior=fail" in put["path"] or \
        "@microsoft.graph.conflictBehavior=fail" in put["path"]
    conflict = onedrive.call("UploadOneDriveFile", path="Documents/hello.txt", content="again")
    assert conflict["success"] is False and conflict["error_type"] == "conflict"
    assert "overwrite" in conflict["error"]
    assert graph.nodes["Documents/hello.txt"].content == "héllo".encode()
    replaced = onedrive.call("UploadOneDriveFile", path="Documents/hello.txt", content="again",
                             overwrite=True)
    assert replaced["success"] and graph.nodes["Documents/hello.txt"].content == b"again"


def test_upload_from_the_workspace_only(onedrive: Any, tmp_path: Path) -> None:
    graph: FakeGraph = onedrive.graph
    onedrive.path("report.csv").write_text("a,b\n1,2\n")
    result = onedrive.call("UploadOneDriveFile", path="/", local_path="report.csv")
    assert result["success"], result
    assert result["path"] == "report.csv" and graph.nodes["report.csv"].content == b"a,b\n1,2\n"
    secret = tmp_path / "outside.txt"
    secret.write_text("private")
    outside = onedrive.call("UploadOneDriveFile", path="x.txt", local_path=str(secret))
    assert outside["error_type"] == "outside_workspace" and "x.txt" not in graph.nodes
    missing = onedrive.call("UploadOneDriveFile", path="x.txt", local_path="nope.txt")
    assert missing["error_type"] == "not_found"
    both = onedrive.call("UploadOneDriveFile", path="x.txt", content="a", local_path="report.csv")
    assert both["error_type"] == "invalid_arguments"
    neither = onedrive.call("UploadOneDriveFile", path="x.txt")
    assert neither["error_type"] == "invalid_arguments"
    folder_only = onedrive.call("UploadOneDriveFile", path="Documents/", content="a")
    assert folder_only["error_type"] == "invalid_arguments"
    graph.add_folder("Documents")
    onto_folder = onedrive.call("UploadOneDriveFile", path="Documents", content="a", overwrite=True)
    assert onto_folder["success"] is False and onto_folder["error_type"] == "conflict"
    assert "folder" in onto_folder["error"]
    assert graph.nodes["Documents"].folder
    no_parent = onedrive.call("UploadOneDriveFile", path="No/Such/Folder/x.txt", content="a")
    assert no_parent["error_type"] == "not_found" and "No/Such/Folder" in no_parent["error"]


@pytest.fixture
def chunked(monkeypatch: pytest.MonkeyPatch) -> int:
    """Uploads above 100 kB go through a session in 320 KiB fragments."""
    monkeypatch.setenv("JANITO_ONEDRIVE_SIMPLE_UPLOAD_LIMIT", "100000")
    monkeypatch.setenv("JANITO_ONEDRIVE_CHUNK_SIZE", str(FRAGMENT_UNIT))
    return FRAGMENT_UNIT


def _fragments(graph: FakeGraph) -> list[dict[str, Any]]:
    return [r for r in graph.requests("PUT", "/upload/")]


def test_large_upload_goes_through_a_session_in_fragments(onedrive: Any, chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(3 * chunked + 12345)
    onedrive.path("big.bin").write_bytes(data)
    result = onedrive.call("UploadOneDriveFile", path="big.bin", local_path="big.bin")
    assert result["success"], result
    assert result["method"] == "session" and result["fragments"] == 4 and result["resumed"] == 0
    assert graph.nodes["big.bin"].content == data
    puts = _fragments(graph)
    assert [p["headers"]["content-range"] for p in puts] == [
        f"bytes 0-{chunked - 1}/{len(data)}",
        f"bytes {chunked}-{2 * chunked - 1}/{len(data)}",
        f"bytes {2 * chunked}-{3 * chunked - 1}/{len(data)}",
        f"bytes {3 * chunked}-{len(data) - 1}/{len(data)}",
    ]
    # The upload URL carries its own authorisation: the bearer token is never sent there.
    assert all("authorization" not in p["headers"] for p in puts)
    session = graph.requests("POST", "createUploadSession")
    assert len(session) == 1 and "authorization" in session[0]["headers"]


def test_a_fragment_dropped_before_it_was_stored_is_sent_again(onedrive: Any,
                                                                 chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(3 * chunked + 10)
    graph.add_fault("drop_fragment", lambda method, index: index == "1", store=False)
    result = onedrive.call("UploadOneDriveFile", path="big.bin", content=None,
                           local_path=_write(onedrive, "big.bin", data))
    assert result["success"], result
    assert graph.nodes["big.bin"].content == data
    assert result["resumed"] == 1
    status = graph.requests("GET", "/upload/")
    assert len(status) == 1  # asked the session what it still expects
    ranges = [p["headers"]["content-range"] for p in _fragments(graph)]
    assert ranges[1] == ranges[2] == f"bytes {chunked}-{2 * chunked - 1}/{len(data)}"


def test_a_fragment_stored_but_unanswered_is_not_sent_twice(onedrive: Any,
                                                              chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(3 * chunked + 10)
    graph.add_fault("drop_fragment", lambda method, index: index == "1", store=True)
    result = onedrive.call("UploadOneDriveFile", path="big.bin",
                           local_path=_write(onedrive, "big.bin", data))
    assert result["success"], result
    assert graph.nodes["big.bin"].content == data
    ranges = [p["headers"]["content-range"] for p in _fragments(graph)]
    # nextExpectedRanges from the status said the service already held fragment 1.
    assert ranges == [f"bytes {n * chunked}-{min((n + 1) * chunked, len(data)) - 1}/{len(data)}"
                      for n in range(4)]
    assert len(graph.requests("GET", "/upload/")) == 1


def test_the_last_fragment_stored_but_unanswered_completes(onedrive: Any, chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(chunked + 10)
    graph.add_fault("drop_fragment", lambda method, index: index == "1", store=True)
    result = onedrive.call("UploadOneDriveFile", path="big.bin",
                           local_path=_write(onedrive, "big.bin", data))
    assert result["success"], result
    assert graph.nodes["big.bin"].content == data and result["file"]["size"] == len(data)


def test_a_503_fragment_is_retried_after_retry_after(onedrive: Any, chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(2 * chunked + 10)
    graph.add_fault("fail_fragment", lambda method, index: index == "0", status=503,
                    retry_after="0")
    result = onedrive.call("UploadOneDriveFile", path="big.bin",
                           local_path=_write(onedrive, "big.bin", data))
    assert result["success"], result
    assert graph.nodes["big.bin"].content == data
    assert len(_fragments(graph)) == 4


def test_an_expired_session_is_started_again(onedrive: Any, chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    data = os.urandom(2 * chunked + 10)
    graph.add_fault("fail_fragment", lambda method, index: index == "1", status=404)
    result = onedrive.call("UploadOneDriveFile", path="big.bin",
                           local_path=_write(onedrive, "big.bin", data))
    assert result["success"], result
    assert graph.nodes["big.bin"].content == data
    assert len(graph.requests("POST", "createUploadSession")) == 2


def test_session_upload_conflict_and_persistent_failure(onedrive: Any, chunked: int) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("big.bin", b"old")
    data = os.urandom(chunked + 10)
    path = _write(onedrive, "big.bin", data)
    conflict = onedrive.call("UploadOneDriveFile", path="big.bin", local_path=path)
    assert conflict["error_type"] == "conflict" and graph.nodes["big.bin"].content == b"old"
    graph.add_fault("drop_fragment", lambda method, index: True, store=False, times=100)
    broken = onedrive.call("UploadOneDriveFile", path="big.bin", local_path=path, overwrite=True)
    assert broken["success"] is False and broken["error_type"] == "connection_failed"
    assert graph.nodes["big.bin"].content == b"old"
    assert not graph.sessions  # the abandoned session was cancelled
    assert "tempauth" not in str(broken)


def _write(onedrive: Any, name: str, data: bytes) -> str:
    onedrive.path(name).write_bytes(data)
    return name


# -- folders and deletion ---------------------------------------------------------------


def test_create_folder_with_each_conflict_behavior(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_folder("Documents")
    made = onedrive.call("CreateOneDriveFolder", path="Documents/Projects")
    assert made["success"] and made["created"] is True
    assert made["folder"]["path"] == "Documents/Projects" and graph.nodes["Documents/Projects"].folder
    conflict = onedrive.call("CreateOneDriveFolder", path="Documents/Projects")
    assert conflict["error_type"] == "conflict" and "rename" in conflict["error"]
    renamed = onedrive.call("CreateOneDriveFolder", path="Documents/Projects",
                            conflict_behavior="rename")
    assert renamed["folder"]["name"] == "Projects 1"
    kept = onedrive.call("CreateOneDriveFolder", path="Documents/Projects",
                         conflict_behavior="replace")
    assert kept["success"] and kept["created"] is False
    body = graph.requests("POST", "/Documents:/children")
    assert len(body) == 4
    orphan = onedrive.call("CreateOneDriveFolder", path="Missing/Child")
    assert orphan["error_type"] == "not_found" and "Missing" in orphan["error"]
    assert onedrive.call("CreateOneDriveFolder", path="x",
                         conflict_behavior="merge")["error_type"] == "invalid_arguments"
    root = onedrive.call("CreateOneDriveFolder", path="Top")
    assert root["success"] and "Top" in graph.nodes


def test_delete_with_dry_run(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("Old/a.txt", "a")
    graph.add_file("Old/b.txt", "b")
    dry = onedrive.call("DeleteOneDriveFile", path="Old", dry_run=True)
    assert dry["success"] and dry["deleted"] is False and dry["item"]["type"] == "folder"
    assert "Old/a.txt" in graph.nodes and not graph.requests("DELETE")
    gone = onedrive.call("DeleteOneDriveFile", path="Old")
    assert gone["success"] and gone["deleted"] is True
    assert "Old" not in graph.nodes and "Old/a.txt" not in graph.nodes
    again = onedrive.call("DeleteOneDriveFile", path="Old")
    assert again["error_type"] == "not_found"
    root = onedrive.call("DeleteOneDriveFile", path="/")
    assert root["error_type"] == "invalid_arguments"
    assert len(graph.requests("DELETE")) == 1
