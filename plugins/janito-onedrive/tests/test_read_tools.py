"""The tools that read (list with paging, search, read) and the share link (w)."""

from __future__ import annotations

import json
from typing import Any

from fake_graph import FakeGraph


def names(result: dict[str, Any]) -> list[str]:
    return [item["name"] for item in result["items"]]


def test_list_follows_next_links_until_the_folder_is_exhausted(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.page_size = 3  # the service pages by 3 whatever $top asks
    for n in range(7):
        graph.add_file(f"Documents/file{n}.txt", "x" * n)
    graph.add_folder("Documents/Archive")
    result = onedrive.call("ListOneDriveFiles", path="Documents")
    assert result["success"], result
    assert result["total_count"] == 8 and result["has_more"] is False
    assert names(result) == ["Archive"] + [f"file{n}.txt" for n in range(7)]
    pages = graph.requests("GET", "/children")
    assert len(pages) == 3
    assert "$skiptoken=3" in pages[1]["path"] and "$skiptoken=6" in pages[2]["path"]
    first = result["items"][1]
    assert first["path"] == "Documents/file0.txt" and first["type"] == "file"
    assert first["mime_type"] == "text/plain" and first["size"] == 0
    assert result["items"][0]["type"] == "folder" and result["items"][0]["child_count"] == 0
    assert "@microsoft.graph.downloadUrl" not in json.dumps(result)


def test_list_stops_at_the_limit_and_says_more_remain(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.page_size = 3
    for n in range(7):
        graph.add_file(f"f{n}.txt", "x")
    result = onedrive.call("ListOneDriveFiles", limit=4)
    assert result["success"] and result["total_count"] == 4 and result["has_more"] is True
    assert len(graph.requests("GET", "/children")) == 2


def test_list_orders_and_filters_folders(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("small.txt", "a")
    graph.add_file("big.txt", "a" * 100)
    graph.add_folder("Zeta")
    by_size = onedrive.call("ListOneDriveFiles", order_by="size desc")
    assert names(by_size)[0] == "big.txt"
    folders = onedrive.call("ListOneDriveFiles", folder_only=True)
    assert names(folders) == ["Zeta"]


def test_list_bad_arguments_and_missing_folder(onedrive: Any) -> None:
    bad = onedrive.call("ListOneDriveFiles", order_by="colour")
    assert bad["error_type"] == "invalid_arguments" and "order_by" in bad["error"]
    assert onedrive.call("ListOneDriveFiles", limit=0)["error_type"] == "invalid_arguments"
    assert onedrive.call("ListOneDriveFiles", path="a/../b")["error_type"] == "invalid_arguments"
    missing = onedrive.call("ListOneDriveFiles", path="Nope/Deeper")
    assert missing["success"] is False and missing["error_type"] == "not_found"
    assert "Nope/Deeper" in missing["error"] and missing["path"] == "Nope/Deeper"


def test_search_the_drive_a_folder_and_by_extension(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("Reports/q1 report.pdf", b"%PDF")
    graph.add_file("Reports/q2 report.docx", b"PK")
    graph.add_file("Notes/report ideas.txt", "ideas")
    graph.add_file("Notes/other.txt", "this mentions the report inside")
    everywhere = onedrive.call("SearchOneDriveFiles", query="report")
    assert everywhere["success"], everywhere
    assert sorted(names(everywhere)) == ["Reports", "other.txt", "q1 report.pdf",
                                         "q2 report.docx", "report ideas.txt"]
    in_notes = onedrive.call("SearchOneDriveFiles", query="report", folder_path="Notes")
    assert sorted(names(in_notes)) == ["other.txt", "report ideas.txt"]
    assert any(":/search(q='report')" in r["path"] for r in graph.requests("GET", "/Notes:"))
    pdfs = onedrive.call("SearchOneDriveFiles", query="report", file_type_filter=".PDF")
    assert names(pdfs) == ["q1 report.pdf"] and pdfs["file_type_filter"] == "pdf"
    no_filter = onedrive.call("SearchOneDriveFiles", query="report", file_type_filter="")
    assert no_filter["success"] and len(names(no_filter)) == 5, no_filter
    for wrong in ("a/b", " . ", ".."):
        refused = onedrive.call("SearchOneDriveFiles", query="report", file_type_filter=wrong)
        assert refused["error_type"] == "invalid_arguments", refused
        assert refused["details"][0]["field"] == "file_type_filter"  # dispatch, from the schema


def test_search_escapes_quotes_and_pages(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.page_size = 2
    graph.add_file("O'Brien notes.txt", "x")
    for n in range(5):
        graph.add_file(f"plan {n}.md", "x")
    quoted = onedrive.call("SearchOneDriveFiles", query="O'Brien")
    assert quoted["success"], quoted
    assert names(quoted) == ["O'Brien notes.txt"]
    plans = onedrive.call("SearchOneDriveFiles", query="plan", limit=5)
    assert plans["total_count"] == 5 and plans["has_more"] is False
    assert len(graph.requests("GET", "search(q='plan')")) == 3
    assert onedrive.call("SearchOneDriveFiles", query="  ")["error_type"] == "invalid_arguments"
    missing = onedrive.call("SearchOneDriveFiles", query="x", folder_path="Nowhere")
    assert missing["error_type"] == "not_found"


def test_read_text_with_a_size_cap(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("Documents/notes.md", "# Notes\n" + "é" * 50)
    whole = onedrive.call("ReadOneDriveFile", path="/Documents/notes.md")
    assert whole["success"], whole
    assert whole["content"] == "# Notes\n" + "é" * 50 and whole["truncated"] is False
    assert whole["file"]["mime_type"] == "text/markdown"
    capped = onedrive.call("ReadOneDriveFile", path="Documents/notes.md", max_content_length=13)
    # 13 bytes end inside a two-byte character: the partial character is dropped.
    assert capped["content"] == "# Notes\né" + "é" * 1 and capped["truncated"] is True
    assert capped["bytes_read"] == 13
    downloads = graph.requests("GET", "/download/")
    assert downloads[-1]["headers"]["range"] == "bytes=0-12"
    assert all("authorization" not in r["headers"] for r in downloads)
    meta = onedrive.call("ReadOneDriveFile", path="Documents/notes.md", include_content=False)
    assert "content" not in meta and meta["file"]["name"] == "notes.md"


def test_read_refuses_binary_folders_and_bad_caps(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    graph.add_file("blob.bin", b"\x00\x01\x02binary")
    graph.add_file("empty.txt", b"")
    png = onedrive.call("ReadOneDriveFile", path="photo.png")
    assert png["success"] and "content" not in png and "DownloadOneDriveFile" in png["content_skipped"]
    assert not graph.requests("GET", "/download/")  # known binary: not downloaded at all
    blob = onedrive.call("ReadOneDriveFile", path="blob.bin")
    assert blob["success"] and "content" not in blob and "not UTF-8" in blob["content_skipped"]
    empty = onedrive.call("ReadOneDriveFile", path="empty.txt")
    assert empty["content"] == "" and empty["truncated"] is False
    graph.add_folder("Docs")
    folder = onedrive.call("ReadOneDriveFile", path="Docs")
    assert folder["success"] is False and folder["error_type"] == "is_directory"
    assert onedrive.call("ReadOneDriveFile", path="missing.txt")["error_type"] == "not_found"
    assert onedrive.call("ReadOneDriveFile", path="x.txt",
                         max_content_length=0)["error_type"] == "invalid_arguments"
    assert onedrive.call("ReadOneDriveFile", path="/")["error_type"] == "invalid_arguments"


def test_share_link_created_then_reused(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("Documents/report.pdf", b"%PDF")
    first = onedrive.call("GetOneDriveShareLink", path="Documents/report.pdf")
    assert first["success"], first
    assert first["share_link"].startswith("https://1drv.ms/") and first["created"] is True
    assert first["link_type"] == "view" and first["scope"] == "anonymous"
    assert first["roles"] == ["read"]
    again = onedrive.call("GetOneDriveShareLink", path="Documents/report.pdf")
    assert again["share_link"] == first["share_link"] and again["created"] is False
    edit = onedrive.call("GetOneDriveShareLink", path="Documents/report.pdf",
                         link_type="edit", scope="organization")
    assert edit["roles"] == ["write"] and edit["share_link"] != first["share_link"]
    body = [r for r in graph.requests("POST", "createLink")]
    assert len(body) == 3
    assert onedrive.call("GetOneDriveShareLink", path="x",
                         link_type="own")["error_type"] == "invalid_arguments"
    assert onedrive.call("GetOneDriveShareLink", path="gone.txt")["error_type"] == "not_found"
