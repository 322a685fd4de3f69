"""OneDrive as people use it: move, rename, copy, conflict behaviours, OneDrive for Business,
sharing with expiry and password, Office documents as text, other drives."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from fake_graph import FakeGraph

# -- move, rename, copy ------------------------------------------------------------------


def test_move_rename_and_both(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("Inbox/report.txt", "r")
    graph.add_file("Inbox/sub/deep.txt", "d")
    graph.add_folder("Archive")
    renamed = onedrive.call("MoveOneDriveItem", path="Inbox/report.txt", new_name="final.txt")
    assert renamed["success"] and renamed["new_path"] == "Inbox/final.txt", renamed
    moved = onedrive.call("MoveOneDriveItem", path="Inbox/sub", destination_folder="Archive")
    assert moved["new_path"] == "Archive/sub" and "Archive/sub/deep.txt" in graph.nodes
    both = onedrive.call("MoveOneDriveItem", path="Inbox/final.txt", destination_folder="/",
                         new_name="top.txt")
    assert both["new_path"] == "top.txt" and graph.nodes["top.txt"].content == b"r"
    patch = graph.requests("PATCH")[-1]
    assert "conflictBehavior=fail" in patch["path"]
    for nothing in ({}, {"new_name": " "}, {"destination_folder": None, "new_name": None}):
        refused = onedrive.call("MoveOneDriveItem", {"path": "top.txt", **nothing})
        assert refused["error_type"] == "invalid_arguments" and refused["details"], refused


def test_move_conflicts_follow_the_behaviour(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "a")
    graph.add_file("Dest/a.txt", "old")
    failed = onedrive.call("MoveOneDriveItem", path="a.txt", destination_folder="Dest")
    assert failed["error_type"] == "conflict" and "rename" in failed["error"]
    renamed = onedrive.call("MoveOneDriveItem", path="a.txt", destination_folder="Dest",
                            conflict_behavior="rename")
    assert renamed["new_path"] == "Dest/a 1.txt"
    graph.add_file("b.txt", "new")
    replaced = onedrive.call("MoveOneDriveItem", path="b.txt", destination_folder="Dest",
                             new_name="a.txt", conflict_behavior="replace")
    assert replaced["success"] and graph.nodes["Dest/a.txt"].content == b"new"
    assert onedrive.call("MoveOneDriveItem", path="Dest", destination_folder="Dest/x")[
        "error_type"] == "invalid_arguments"
    assert onedrive.call("MoveOneDriveItem", path="Dest")["error_type"] == "invalid_arguments"
    assert onedrive.call("MoveOneDriveItem", path="nope.txt", new_name="x.txt")[
        "error_type"] == "not_found"
    assert onedrive.call("MoveOneDriveItem", path="Dest/a.txt", new_name="../x")[
        "error_type"] == "invalid_arguments"


def test_copy_waits_on_the_monitor_url_without_the_token(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("Plans/plan.xlsx", b"PK-not-really")
    graph.add_folder("Backup")
    graph.copy_polls_before_done = 2
    copied = onedrive.call("CopyOneDriveItem", path="Plans/plan.xlsx", destination_folder="Backup")
    assert copied["success"] and copied["completed"] is True, copied
    assert copied["new_path"] == "Backup/plan.xlsx"
    assert graph.nodes["Backup/plan.xlsx"].content == b"PK-not-really"
    assert "Plans/plan.xlsx" in graph.nodes
    polls = graph.requests("GET", "/monitor/")
    assert len(polls) == 3 and all("authorization" not in p["headers"] for p in polls)
    assert "monitor" not in json.dumps(copied)

    again = onedrive.call("CopyOneDriveItem", path="Plans/plan.xlsx", destination_folder="Backup")
    assert again["error_type"] == "conflict"
    beside = onedrive.call("CopyOneDriveItem", path="Plans/plan.xlsx", conflict_behavior="rename")
    assert beside["new_path"] == "Plans/plan 1.xlsx"
    same = onedrive.call("CopyOneDriveItem", path="Plans/plan.xlsx")
    assert same["error_type"] == "invalid_arguments"


def test_a_copy_still_running_is_reported_as_such(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("big.bin", b"x")
    graph.copy_polls_before_done = 1000
    running = onedrive.call("CopyOneDriveItem", path="big.bin", new_name="big2.bin",
                            wait_seconds=0)
    assert running["success"] and running["completed"] is False
    assert running["percent_complete"] == 50.0


def test_upload_conflict_behaviour_rename(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("notes.txt", "old")
    renamed = onedrive.call("UploadOneDriveFile", path="notes.txt", content="new",
                            conflict_behavior="rename")
    assert renamed["success"] and renamed["path"] == "notes 1.txt", renamed
    assert graph.nodes["notes.txt"].content == b"old"
    assert graph.nodes["notes 1.txt"].content == b"new"
    bad = onedrive.call("UploadOneDriveFile", path="n.txt", content="x", conflict_behavior="merge")
    assert bad["error_type"] == "invalid_arguments"


# -- OneDrive for Business ----------------------------------------------------------------


def test_business_refuses_orderby_and_the_list_is_sorted_here(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.business()
    graph.page_size = 2
    graph.add_file("small.txt", "a")
    graph.add_file("big.txt", "a" * 100)
    graph.add_file("mid.txt", "a" * 10)
    result = onedrive.call("ListOneDriveFiles", order_by="size desc", limit=2)
    assert result["success"], result
    assert [i["name"] for i in result["items"]] == ["big.txt", "mid.txt"]
    assert result["sorted_locally"] is True and result["has_more"] is True
    by_name = onedrive.call("ListOneDriveFiles")
    assert "sorted_locally" not in by_name


def test_business_search_results_get_their_paths(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.business()
    graph.add_file("Projects/Alpha/budget.txt", "budget")
    graph.add_file("top-budget.txt", "budget")
    found = onedrive.call("SearchOneDriveFiles", query="budget")
    paths = sorted(item["path"] for item in found["items"])
    assert paths == ["Projects/Alpha/budget.txt", "top-budget.txt"], found
    lookups = graph.requests("GET", "/me/drive/items/")
    assert len(lookups) == 2  # one per parent folder


@pytest.mark.parametrize("status, words, error_type", [
    (423, "locked", "locked"), (507, "drive is full", "quota_exceeded")])
def test_locked_and_full_are_said_plainly(onedrive: Any, status: int, words: str,
                                          error_type: str) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("doc.txt", "x")
    graph.add_fault("status", lambda method, path: method in ("PUT", "DELETE"), status=status,
                    times=2)
    for call in (("UploadOneDriveFile", {"path": "doc.txt", "content": "y", "overwrite": True}),
                 ("DeleteOneDriveFile", {"path": "doc.txt"})):
        result = onedrive.call(call[0], **call[1])
        assert result["success"] is False and result["error_type"] == error_type, result
        assert result["error"].startswith(f"the {'item' if status == 423 else 'drive'}")
        assert words in result["error"]


# -- sharing ------------------------------------------------------------------------------


def test_share_with_expiry_and_password(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("deck.pptx", b"x")
    shared = onedrive.call("GetOneDriveShareLink", path="deck.pptx", expires_in_days=7,
                           password="correct horse 42")
    assert shared["success"], shared
    assert shared["expiration"] and shared["password_protected"] is True
    assert "correct horse 42" not in json.dumps(shared)
    body = graph.requests("POST", "createLink")[-1]
    assert body is not None
    assert onedrive.call("GetOneDriveShareLink", path="deck.pptx", expires_in_days=0)[
        "error_type"] == "invalid_arguments"


def test_a_tenant_without_anonymous_links_is_answered_clearly(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.business(anonymous_links=False)
    graph.add_file("deck.pptx", b"x")
    refused = onedrive.call("GetOneDriveShareLink", path="deck.pptx")
    assert refused["error_type"] == "sharing_refused" and "'organization'" in refused["error"]
    inside = onedrive.call("GetOneDriveShareLink", path="deck.pptx", scope="organization")
    assert inside["success"] and inside["scope"] == "organization"
    no_password = onedrive.call("GetOneDriveShareLink", path="deck.pptx", scope="organization",
                                password="secret-pass")
    assert no_password["error_type"] == "not_supported" and "password" in no_password["error"]
    assert "secret-pass" not in json.dumps(no_password)


# -- Office documents as text -----------------------------------------------------------------


def _zip(parts: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return buffer.getvalue()


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
DOCX = _zip({"word/document.xml": f'<w:document {W}><w:body>'
             '<w:p><w:r><w:t>Quarterly report</w:t></w:r></w:p>'
             '<w:p><w:r><w:t>Revenue</w:t></w:r><w:r><w:tab/><w:t>grew 12%</w:t></w:r></w:p>'
             '</w:body></w:document>'})
S = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
RNS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
XLSX = _zip({
    "xl/workbook.xml": f'<workbook {S} {RNS}><sheets><sheet name="Q1" sheetId="1" r:id="rId1"/>'
                       '</sheets></workbook>',
    "xl/_rels/workbook.xml.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/'
                                  'package/2006/relationships"><Relationship Id="rId1" '
                                  'Target="worksheets/sheet1.xml" Type="x"/></Relationships>',
    "xl/sharedStrings.xml": f'<sst {S}><si><t>Region</t></si><si><t>North</t></si></sst>',
    "xl/worksheets/sheet1.xml": f'<worksheet {S}><sheetData>'
                                '<row><c t="s"><v>0</v></c><c><v>2025</v></c></row>'
                                '<row><c t="s"><v>1</v></c><c><v>42.5</v></c></row>'
                                '</sheetData></worksheet>'})
A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
PPTX = _zip({f"ppt/slides/slide{n}.xml": f'<p:sld xmlns:p="p" {A}><a:p><a:r><a:t>Slide {n} '
             f'title</a:t></a:r></a:p></p:sld>' for n in (1, 2, 10)})


@pytest.mark.parametrize("name, data, expected", [
    ("report.docx", DOCX, "Quarterly report\nRevenue\tgrew 12%"),
    ("numbers.xlsx", XLSX, "--- sheet Q1 ---\nRegion\t2025\nNorth\t42.5"),
    ("deck.pptx", PPTX, "--- slide 1 ---\nSlide 1 title\n--- slide 2 ---\nSlide 2 title\n"
                        "--- slide 3 ---\nSlide 10 title"),
])
def test_office_documents_are_read_as_text(onedrive: Any, name: str, data: bytes,
                                           expected: str) -> None:
    onedrive.graph.add_file(f"Docs/{name}", data)
    result = onedrive.call("ReadOneDriveFile", path=f"Docs/{name}")
    assert result["success"] and result["content"] == expected, result
    assert result["truncated"] is False and "text of a" in result["content_format"]
    short = onedrive.call("ReadOneDriveFile", path=f"Docs/{name}", max_content_length=5)
    assert short["content"] == expected[:5] and short["truncated"] is True


def test_broken_and_hostile_office_files_are_refused_as_text(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("fake.docx", b"not a zip at all")
    graph.add_file("dtd.docx", _zip({"word/document.xml": '<!DOCTYPE x [<!ENTITY a "aaaa">]>'
                                                          f'<w:document {W}/>'}))
    graph.add_file("old.doc", b"\xd0\xcf\x11\xe0")
    for path, words in (("fake.docx", "not a zip"), ("dtd.docx", "DTD"),
                        ("old.doc", "older Office format")):
        result = onedrive.call("ReadOneDriveFile", path=path)
        assert result["success"] and "content" not in result
        assert words in result["content_skipped"], result


# -- other drives ---------------------------------------------------------------------------


def test_shared_with_me_and_a_library_by_drive_id(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_drive("b!library42")
    graph.use_drive("b!library42")
    graph.add_file("Policies/handbook.txt", "be kind")
    graph.use_drive("b!fake")
    graph.shared_with_me.append({
        "id": "REMOTE1", "name": "handbook.txt",
        "remoteItem": {"id": "X1", "name": "handbook.txt", "size": 7,
                       "file": {"mimeType": "text/plain"},
                       "parentReference": {"driveId": "b!library42", "driveType": "documentLibrary",
                                           "path": "/drives/b!library42/root:/Policies"},
                       "shared": {"owner": {"user": {"displayName": "Grace"}}}}})
    shared = onedrive.call("ListOneDriveSharedWithMe")
    [item] = shared["items"]
    assert (item["drive_id"], item["path"], item["shared_by"]) == (
        "b!library42", "Policies/handbook.txt", "Grace")
    listed = onedrive.call("ListOneDriveFiles", path="Policies", drive_id=item["drive_id"])
    assert [i["name"] for i in listed["items"]] == ["handbook.txt"]
    read = onedrive.call("ReadOneDriveFile", path=item["path"], drive_id=item["drive_id"])
    assert read["content"] == "be kind"
    saved = onedrive.call("DownloadOneDriveFile", path=item["path"], drive_id="b!library42")
    assert saved["success"] and onedrive.path("handbook.txt").read_text() == "be kind"
    found = onedrive.call("SearchOneDriveFiles", query="handbook", drive_id="b!library42")
    assert [i["path"] for i in found["items"]] == ["Policies/handbook.txt"]
    assert "Policies/handbook.txt" not in graph.nodes  # not in the user's own drive
    missing = onedrive.call("ListOneDriveFiles", drive_id="b!nope")
    assert missing["error_type"] == "not_found"
    bad = onedrive.call("ListOneDriveFiles", drive_id="../me")
    assert bad["error_type"] == "invalid_arguments"
