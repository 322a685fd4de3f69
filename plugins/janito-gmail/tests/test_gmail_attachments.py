"""SaveAttachment writes into the workspace only."""

from __future__ import annotations

import os
from email.message import EmailMessage
from typing import Any

import _gmail_servers as servers

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 40


def seed_attachments(dovecot: servers.DovecotServer, folder: str) -> tuple[int, int]:
    single = EmailMessage()
    single["From"] = "Eve <eve@example.test>"
    single["To"] = servers.USER
    single["Subject"] = "One file"
    single.set_content("see attached")
    single.add_attachment("naïve café notes\n".encode(), maintype="text", subtype="plain",
                          filename="naïve notes.txt")
    uids = servers.seed(dovecot, folder, [servers.attachment_message(1, PDF),
                                          single.as_bytes()])
    return uids[0], uids[1]


def test_save_by_filename_index_and_single(gmail: Any, dovecot: Any, folder: str) -> None:
    two, one = seed_attachments(dovecot, folder)
    by_name = gmail.call("SaveAttachment", id=two, folder=folder, filename="report.pdf")
    assert by_name["success"] is True, by_name
    assert (by_name["path"], by_name["size"], by_name["content_type"]) == \
        ("report.pdf", len(PDF), "application/pdf")
    assert gmail.path("report.pdf").read_bytes() == PDF

    by_index = gmail.call("SaveAttachment", id=two, folder=folder, index=2, path="out/")
    assert by_index["path"] == "out/data.csv"
    assert gmail.path("out/data.csv").read_bytes() == b"a,b\n1,2\n"

    single = gmail.call("SaveAttachment", id=one, folder=folder)
    assert single["filename"] == "naïve notes.txt"
    assert gmail.path("naïve notes.txt").read_bytes() == "naïve café notes\n".encode()

    listed = gmail.call("ReadEmails", folder=folder, ids=[one])["messages"][0]["attachments"]
    assert [a["filename"] for a in listed] == ["naïve notes.txt"]


def test_existing_files_and_explicit_paths(gmail: Any, dovecot: Any, folder: str) -> None:
    two, _one = seed_attachments(dovecot, folder)
    gmail.path("report.pdf").write_bytes(b"keep me")
    refused = gmail.call("SaveAttachment", id=two, folder=folder, index=1)
    assert refused["success"] is False and refused["error_type"] == "already_exists"
    assert gmail.path("report.pdf").read_bytes() == b"keep me"
    replaced = gmail.call("SaveAttachment", id=two, folder=folder, index=1, overwrite=True)
    assert replaced["success"] is True
    assert gmail.path("report.pdf").read_bytes() == PDF
    renamed = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path="docs/r.pdf")
    assert renamed["path"] == "docs/r.pdf"
    assert gmail.path("docs/r.pdf").read_bytes() == PDF


def test_nothing_is_written_outside_the_workspace(gmail: Any, dovecot: Any, folder: str,
                                                  tmp_path: Any) -> None:
    two, _one = seed_attachments(dovecot, folder)
    outside = tmp_path / "outside.pdf"
    for path in ("../outside.pdf", str(outside), "../../x/"):
        result = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path=path)
        assert result["success"] is False, path
        assert result["error_type"] == "outside_workspace", path
    assert not outside.exists()
    evil = EmailMessage()
    evil["From"] = "x@example.test"
    evil["Subject"] = "evil name"
    evil.set_content("x")
    evil.add_attachment(b"payload", maintype="application", subtype="octet-stream",
                        filename="../../escape.bin")
    (uid,) = servers.seed(dovecot, folder, [evil.as_bytes()])
    saved = gmail.call("SaveAttachment", id=uid, folder=folder)
    assert saved["success"] is True
    assert saved["path"] == "escape.bin"
    assert gmail.path("escape.bin").read_bytes() == b"payload"


def test_unknown_attachment_message_and_folder(gmail: Any, dovecot: Any, folder: str) -> None:
    two, _one = seed_attachments(dovecot, folder)
    (plain,) = servers.seed(dovecot, folder, [servers.plain_message(5)])
    cases = [
        ({"id": two, "filename": "nope.pdf"}, "not_found"),
        ({"id": two, "index": 3}, "not_found"),
        ({"id": two}, "invalid_arguments"),
        ({"id": plain}, "not_found"),
        ({"id": 9999}, "not_found"),
        ({"id": two, "folder": "No such folder"}, "folder_not_found"),
    ]
    for arguments, error_type in cases:
        result = gmail.call("SaveAttachment", {"folder": folder, **arguments})
        assert result["success"] is False, arguments
        assert result["error_type"] == error_type, (arguments, result)
    listed = gmail.call("SaveAttachment", id=two, folder=folder, filename="x")
    assert listed["attachments"] == ["report.pdf", "data.csv"]


def test_links_inside_are_followed_and_links_out_refused(gmail: Any, dovecot: Any, folder: str,
                                                        tmp_path: Any) -> None:
    two, _one = seed_attachments(dovecot, folder)
    outside = tmp_path / "outside"
    outside.mkdir()
    (gmail.workspace / "real").mkdir()
    os.symlink(gmail.workspace / "real", gmail.workspace / "inside-link")
    os.symlink(outside, gmail.workspace / "link-out")
    os.symlink(outside / "planted.pdf", gmail.workspace / "dangling-out.pdf")
    into = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path="inside-link")
    assert into["success"] is True, into
    assert into["path"] == "real/report.pdf"
    assert gmail.path("real/report.pdf").read_bytes() == PDF
    for path in ("link-out", "link-out/", "link-out/x.pdf", "link-out/new/x.pdf",
                 "dangling-out.pdf"):
        result = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path=path,
                            overwrite=True)
        assert result["success"] is False, (path, result)
        assert result["error_type"] == "outside_workspace", (path, result)
    assert list(outside.iterdir()) == []
    loop = gmail.workspace / "loop"
    os.symlink("loop", loop)
    looped = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path="loop/x.pdf")
    assert looped["error_type"] == "symlink_loop", looped
    nul = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path="a\x00b")
    assert nul["error_type"] == "invalid_path", nul


def test_a_file_on_the_way_or_a_folder_as_target(gmail: Any, dovecot: Any, folder: str) -> None:
    two, _one = seed_attachments(dovecot, folder)
    gmail.path("plain.txt").write_text("x")
    through = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path="plain.txt/x.pdf")
    assert through["error_type"] == "write_failed", through
    (gmail.workspace / "report.pdf").mkdir()
    onto = gmail.call("SaveAttachment", id=two, folder=folder, index=1, path="./",
                      overwrite=True)
    assert onto["error_type"] == "write_failed" and "folder" in onto["error"], onto
    assert not [p for p in gmail.workspace.rglob(".*.tmp")]


def test_a_folder_swapped_for_a_link_never_leads_a_write_out(gmail: Any, dovecot: Any,
                                                             folder: str, tmp_path: Any) -> None:
    """The attachment is written into a folder that a thread keeps swapping for a link to
    a folder outside: every write lands inside (or is refused), none outside."""
    from janito_core.testing import FolderSwapper

    two, _one = seed_attachments(dovecot, folder)
    outside = tmp_path / "outside"
    outside.mkdir()
    (gmail.workspace / "box").mkdir()
    outcomes: dict[str, set[str]] = {state: set() for state in FolderSwapper.STATES}
    with FolderSwapper(gmail.workspace / "box", outside) as swapper:
        for state in swapper.rounds(ROUNDS):
            result = gmail.call("SaveAttachment", id=two, folder=folder, index=1,
                                path="box/report.pdf", overwrite=True)
            outcomes[state].add("saved" if result["success"] else result["error_type"])
    assert swapper.errors == []
    assert list(outside.iterdir()) == [], outcomes
    assert outcomes["folder"] == {"saved"} and outcomes["link"] == {"outside_workspace"}, outcomes
    assert gmail.path("box/report.pdf").read_bytes() == PDF


ROUNDS = 300
