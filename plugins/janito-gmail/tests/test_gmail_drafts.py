"""Drafts: created, listed, updated and sent through the Drafts folder (IMAP APPEND)."""

from __future__ import annotations

from typing import Any

import _gmail_servers as servers


def stored(server: servers.DovecotServer, folder: str, uid: int) -> dict[bytes, Any] | None:
    client = server.client()
    try:
        client.select_folder(folder, readonly=True)
        return client.fetch([uid], ["FLAGS", "BODY.PEEK[]"]).get(uid)
    finally:
        client.logout()


def test_create_list_update_send(gmail: Any, dovecot: servers.DovecotServer,
                                 outbox: servers.SmtpServer) -> None:
    (gmail.workspace / "plan.txt").write_text("the plan\n", encoding="utf-8")
    created = gmail.call("CreateDraft", to=["ann@example.test"], subject="Plan",
                         body="First go.", bcc=["quiet@example.test"], attachments=["plan.txt"])
    assert created["success"] is True, created
    assert created["drafts_folder"] == "Drafts"
    first = created["draft_id"]
    item = stored(dovecot, "Drafts", first)
    assert item is not None
    assert b"\\Draft" in item[b"FLAGS"]
    assert b"Bcc: quiet@example.test" in item[b"BODY[]"]

    listed = gmail.call("ListDrafts", limit=50)
    assert listed["success"] is True
    mine = next(d for d in listed["drafts"] if d["id"] == first)
    assert (mine["subject"], mine["to"], mine["bcc"]) == ("Plan", ["ann@example.test"],
                                                          ["quiet@example.test"])
    assert mine["body"].strip() == "First go."
    assert [a["filename"] for a in mine["attachments"]] == ["plan.txt"]

    updated = gmail.call("UpdateDraft", id=first, body="Second go.", cc=["bob@example.test"])
    assert updated["success"] is True, updated
    second = updated["draft_id"]
    assert second != first
    assert stored(dovecot, "Drafts", first) is None  # the old version is gone
    # what was not given is kept: recipients, subject, Bcc, attachment, Message-ID
    assert (updated["to"], updated["cc"], updated["bcc"], updated["subject"]) == \
        (["ann@example.test"], ["bob@example.test"], ["quiet@example.test"], "Plan")
    assert updated["attachments"] == ["plan.txt"]
    assert updated["message_id"] == created["message_id"]

    sent = gmail.call("SendDraft", id=second)
    assert sent["success"] is True, sent
    assert sent["recipients"] == 3
    (arrived,) = outbox.wait_for(1)
    assert sorted(arrived.recipients) == ["ann@example.test", "bob@example.test",
                                          "quiet@example.test"]
    msg = arrived.message
    assert msg["Bcc"] is None and b"quiet@example.test" not in arrived.raw
    assert msg["Message-ID"] == created["message_id"]
    assert msg.get_body(("plain",)).get_content().strip() == "Second go."
    assert [p.get_filename() for p in msg.iter_attachments()] == ["plan.txt"]
    assert stored(dovecot, "Drafts", second) is None  # sent drafts leave the folder


def test_update_can_clear_and_replace(gmail: Any) -> None:
    (gmail.workspace / "a.txt").write_text("a", encoding="utf-8")
    (gmail.workspace / "b.txt").write_text("b", encoding="utf-8")
    created = gmail.call("CreateDraft", to=["ann@example.test"], body="x",
                         html_body="<p>x</p>", attachments=["a.txt"])
    updated = gmail.call("UpdateDraft", id=created["draft_id"], to=[], subject="New subject",
                         html_body="", attachments=["b.txt"])
    assert updated["success"] is True, updated
    assert (updated["to"], updated["subject"], updated["attachments"]) == \
        ([], "New subject", ["b.txt"])
    listed = gmail.call("ListDrafts", limit=100)
    draft = next(d for d in listed["drafts"] if d["id"] == updated["draft_id"])
    assert draft["body_format"] == "text"  # the HTML alternative is gone
    refused = gmail.call("SendDraft", id=updated["draft_id"])
    assert refused["error_type"] == "invalid_arguments"
    assert "no recipients" in refused["error"]


def test_a_draft_can_answer_a_message(gmail: Any, dovecot: servers.DovecotServer,
                                      folder: str) -> None:
    (uid,) = servers.seed(dovecot, folder, [servers.plain_message(77, subject="Lunch?")])
    created = gmail.call("CreateDraft", to=["bob@example.test"], body="Yes!",
                         in_reply_to=str(uid), reply_folder=folder)
    assert created["success"] is True, created
    assert created["subject"] == "Re: Lunch?"
    assert created["in_reply_to"] == "<msg-77@example.test>"
    updated = gmail.call("UpdateDraft", id=created["draft_id"], body="Yes, at noon!")
    item = stored(dovecot, "Drafts", updated["draft_id"])
    assert item is not None
    assert b"In-Reply-To: <msg-77@example.test>" in item[b"BODY[]"]


def test_missing_drafts(gmail: Any) -> None:
    for name in ("UpdateDraft", "SendDraft"):
        result = gmail.call(name, id=987654)
        assert result["error_type"] == "not_found", result
        assert "ListDrafts" in result["error"]


def test_listing_drafts_pages(gmail: Any) -> None:
    ids = [gmail.call("CreateDraft", subject=f"Page {n}", body="x")["draft_id"]
           for n in range(3)]
    first = gmail.call("ListDrafts", limit=2)
    assert [d["id"] for d in first["drafts"]] == ids[:0:-1]
    assert first["has_more"] is True
    second = gmail.call("ListDrafts", limit=1, before_id=first["next_before_id"])
    assert [d["id"] for d in second["drafts"]] == [ids[0]]
