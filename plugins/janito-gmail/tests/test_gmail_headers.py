"""Header values and names that would end a line: refused when a call gives them, made
safe when they come from stored mail. Against the real Dovecot and SMTP sink.

"Would end a line" is judged as the email package writes the header: a raw line break
(any character str.splitlines ends a line at), or an encoded word (=?utf-8?q?...?=) that
decodes to one, which before Python 3.13 the email package writes as it is.
"""

from __future__ import annotations

import sys
from typing import Any

import _gmail_servers as servers
import pytest

BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
          "\u2029"]
#: Decodes to "a", CR LF, "Bcc: evil@attacker.test".
ENCODED_BREAK = "=?utf-8?q?a=0D=0ABcc:_evil@attacker.test?="
#: An encoded word that decodes to ENCODED_BREAK: what a reader that decodes once and
#: hands the text to the email package again ends up writing.
TWICE_ENCODED = "=?utf-8?b?PT91dGYtOD9xP2E9MEQ9MEFCY2M6X2V2aWxAYXR0YWNrZXIudGVzdD89?="
#: An encoded word in a charset Python does not know: a reader that decodes with Python's
#: codecs leaves it as it is, and the email package still decodes it to the line break.
UNKNOWN_CHARSET = "=?x-unknown?q?a=0D=0ABcc:_evil@attacker.test?="


def sent(outbox: servers.SmtpServer) -> list[servers.Arrived]:
    """What reached the SMTP sink. A call has returned once its message was accepted, so
    there is nothing to wait for."""
    return outbox.wait_for(1, timeout=0)


def drafts_stored(dovecot: servers.DovecotServer) -> int:
    client = dovecot.client()
    try:
        return int(client.select_folder("Drafts", readonly=True)[b"EXISTS"])
    finally:
        client.logout()


def stored_draft(dovecot: servers.DovecotServer, uid: int) -> bytes:
    client = dovecot.client()
    try:
        client.select_folder("Drafts", readonly=True)
        return bytes(client.fetch([uid], ["BODY.PEEK[]"])[uid][b"BODY[]"])
    finally:
        client.logout()


#: Every header the messages of these tests may carry, in any of their parts.
WRITTEN = {"from", "to", "cc", "reply-to", "subject", "date", "message-id", "in-reply-to",
           "references", "mime-version", "content-type", "content-transfer-encoding",
           "content-disposition"}


def assert_no_smuggled_header(raw: bytes) -> None:
    """Each header of the message and its parts is one known field on one line."""
    import email.parser
    import email.policy
    import re

    parsed = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(raw)
    for part in parsed.walk():
        for name, value in part.items():
            assert name.lower() in WRITTEN, (name, raw[:3000])
            unfolded = re.sub(r"\r?\n[ \t]", " ", str(value))
            assert not any(b in unfolded for b in BREAKS), (name, value)


# -- what a call gives ---------------------------------------------------------------------


def test_the_line_breaks_are_every_one_splitlines_knows() -> None:
    from janito_gmail._params import BREAK, LINE_BREAKS

    knows = {chr(c) for c in range(sys.maxunicode + 1) if len(f"a{chr(c)}b".splitlines()) > 1}
    assert set(LINE_BREAKS) == knows
    assert all(BREAK.search(f"a{c}b") for c in knows | {"\x00"})
    assert BREAK.search("one line\t of text, ünïcödé") is None


def _values(field: str) -> list[str]:
    """Every spelling of a line break ``field`` can be given: in the middle, at the end
    (which Python's "$" lets through a pattern), and hidden in an encoded word."""
    if field in ("to", "cc", "bcc"):
        return ([f"Ann{b}Lee <ann@example.test>" for b in BREAKS] + ["ann@example.test\n"]
                + [f'"{ENCODED_BREAK}" <ann@example.test>', f"{ENCODED_BREAK} <ann@example.test>"])
    if field == "attachments":
        return ([f"a{b}b.txt" for b in BREAKS] + ["ab.txt\n", "ab\x00.txt"]
                + [f"{ENCODED_BREAK}.txt"])
    if field == "in_reply_to":
        return [f"<a{b}b@example.test>" for b in BREAKS] + [f"<{ENCODED_BREAK}@example.test>"]
    return [f"a{b}b" for b in BREAKS] + [f"ab{b}" for b in BREAKS] + ["ab\x00", ENCODED_BREAK]


CASES = [
    ("SendEmail", "subject"), ("SendEmail", "to"), ("SendEmail", "cc"), ("SendEmail", "bcc"),
    ("SendEmail", "attachments"), ("SendEmail", "in_reply_to"),
    ("CreateDraft", "subject"), ("CreateDraft", "to"), ("CreateDraft", "bcc"),
    ("CreateDraft", "attachments"), ("CreateDraft", "in_reply_to"),
    ("UpdateDraft", "subject"), ("UpdateDraft", "to"), ("UpdateDraft", "cc"),
    ("UpdateDraft", "attachments"),
    ("ReplyToEmail", "cc"), ("ReplyToEmail", "bcc"), ("ReplyToEmail", "attachments"),
    ("ForwardEmail", "to"), ("ForwardEmail", "cc"), ("ForwardEmail", "attachments"),
]


@pytest.mark.parametrize("tool, field", CASES)
def test_a_header_argument_that_would_end_a_line_is_refused_naming_it(
        gmail: Any, dovecot: servers.DovecotServer, folder: str, outbox: servers.SmtpServer,
        tool: str, field: str) -> None:
    (uid,) = servers.seed(dovecot, folder, [servers.plain_message(1)])
    draft = gmail.call("CreateDraft", to=["ann@example.test"], subject="kept", body="x")
    assert draft["success"] is True, draft
    base: dict[str, Any] = {
        "SendEmail": {"to": ["ann@example.test"], "body": "x", "subject": "s"},
        "CreateDraft": {"to": ["ann@example.test"], "body": "x", "subject": "s"},
        "UpdateDraft": {"id": draft["draft_id"]},
        "ReplyToEmail": {"id": uid, "folder": folder, "body": "x"},
        "ForwardEmail": {"id": uid, "folder": folder, "to": ["ann@example.test"]},
    }[tool]
    before = drafts_stored(dovecot)
    wrong = []
    for value in _values(field):
        if field == "attachments" and "\x00" not in value:
            (gmail.workspace / value).write_text("attached", encoding="utf-8")
        argument: Any = [value] if field in ("to", "cc", "bcc", "attachments") else value
        result = gmail.call(tool, {**base, field: argument})
        named = [d.get("field", "") for d in result.get("details") or []]
        if result.get("error_type") != "invalid_arguments" or not named or \
                not all(n == field or n.startswith(f"{field}[") for n in named):
            wrong.append((value, {k: result.get(k) for k in ("success", "error_type", "error",
                                                             "details")}))
    assert wrong == []
    assert sent(outbox) == []
    assert drafts_stored(dovecot) == before


@pytest.mark.parametrize("tool, arguments, field", [
    ("ReadEmails", {}, "folder"),
    ("CountEmails", {}, "folder"),
    ("ReplyToEmail", {"id": 1, "body": "x"}, "folder"),
    ("SendEmail", {"to": ["ann@example.test"], "body": "x", "in_reply_to": "1"},
     "reply_folder"),
    ("MoveEmails", {"ids": [1], "folder": "INBOX"}, "destination"),
])
def test_a_folder_name_that_would_end_a_line_is_refused_naming_it(
        gmail: Any, outbox: servers.SmtpServer, tool: str, arguments: dict[str, Any],
        field: str) -> None:
    wrong = []
    for name in [f"INBOX{b}x" for b in BREAKS] + ["INBOX\n", "INBOX\r\nA1 NOOP", "INBOX\x00"]:
        result = gmail.call(tool, {**arguments, field: name})
        named = [d.get("field") for d in result.get("details") or []]
        if result.get("error_type") != "invalid_arguments" or named != [field]:
            wrong.append((name, result.get("error_type"), result.get("error")))
    assert wrong == []
    assert sent(outbox) == []


def test_a_label_that_would_end_a_line_is_refused(google: Any,
                                                 gmail_dovecot: servers.DovecotServer,
                                                 label: str) -> None:
    (uid,) = servers.seed(gmail_dovecot, label, [servers.plain_message(1)])
    wrong = []
    # Named after this test: another test on the same server may own a plain "Work" label.
    prefix = f"{label}-work"
    for name in [f"{prefix}{b}x" for b in BREAKS]:
        for key in ("add", "remove"):
            result = google.call("LabelEmails", {"folder": label, "ids": [uid], key: [name]})
            named = [d.get("field") for d in result.get("details") or []]
            if result.get("error_type") != "invalid_arguments" or named != [f"{key}[0]"]:
                wrong.append((name, key, result.get("error_type"), result.get("error")))
    assert wrong == []
    labels = google.call("ListLabels")
    assert not [n for n in (row["name"] for row in labels["labels"]) if n.startswith(prefix)]


# -- what stored mail holds ----------------------------------------------------------------


def with_attachment(disposition: bytes, **headers: bytes) -> bytes:
    fields = {b"From": b"Bob <bob@example.test>", b"To": servers.USER.encode(),
              b"Subject": b"Files", b"Message-ID": b"<files-1@example.test>",
              b"Date": b"Thu, 02 May 2024 09:30:00 +0000", **{k.encode(): v
                                                               for k, v in headers.items()}}
    head = b"".join(name + b": " + value + b"\r\n" for name, value in fields.items() if value)
    return (head + b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"BB\"\r\n\r\n"
            b"--BB\r\nContent-Type: text/plain\r\n\r\nSee the file.\r\n"
            b"--BB\r\nContent-Type: text/plain\r\nContent-Disposition: " + disposition +
            b"\r\n\r\nthe attached text\r\n--BB--\r\n")


NAMES = [
    (b"attachment; filename*=UTF-8''a%0D%0Ab.txt", "a\r\nb.txt"),
    (b"attachment; filename*0*=UTF-8''a%0D; filename*1*=%0Ab.txt", "a\r\nb.txt"),
    (b'attachment; filename="=?utf-8?q?a=0D=0Ab.txt?="', "a\r\nb.txt"),
    (b"attachment; filename*=UTF-8''a%E2%80%A8b.txt", "a\u2028b.txt"),
    # the name as ReadEmails decodes it: a space between an encoded word and plain text
    (b'attachment; filename="' + TWICE_ENCODED.encode() + b'.txt"', ENCODED_BREAK + " .txt"),
]


@pytest.mark.parametrize("disposition, stored_name", NAMES)
def test_forward_carries_an_attachment_whose_name_holds_a_line_break(
        gmail: Any, dovecot: servers.DovecotServer, folder: str, outbox: servers.SmtpServer,
        disposition: bytes, stored_name: str) -> None:
    (uid,) = servers.seed(dovecot, folder, [with_attachment(disposition)])
    result = gmail.call("ForwardEmail", id=uid, folder=folder, to=["ann@example.test"])
    assert result["success"] is True, result
    (safe,) = result["attachments"]
    assert not any(b in safe for b in BREAKS) and "=?" not in safe
    assert result["renamed"] == [{"filename": safe, "original": stored_name}]
    (arrived,) = sent(outbox)
    assert_no_smuggled_header(arrived.raw)
    (part,) = arrived.message.iter_attachments()
    assert part.get_filename() == safe
    assert part.get_content() == "the attached text"

    drafted = gmail.call("ForwardEmail", id=uid, folder=folder, to=["ann@example.test"],
                         draft=True)
    assert drafted["success"] is True, drafted
    assert drafted["renamed"] == result["renamed"]
    assert_no_smuggled_header(stored_draft(dovecot, drafted["draft_id"]))


def test_an_answer_carries_no_header_that_a_received_message_smuggles(
        gmail: Any, dovecot: servers.DovecotServer, folder: str,
        outbox: servers.SmtpServer) -> None:
    hostile = with_attachment(
        b"attachment; filename=notes.txt",
        Subject=TWICE_ENCODED.encode(),
        References=f"<ok@example.test> <{UNKNOWN_CHARSET}@example.test>".encode(),
    )
    (uid,) = servers.seed(dovecot, folder, [hostile])
    replied = gmail.call("ReplyToEmail", id=uid, folder=folder, body="ok")
    forwarded = gmail.call("ForwardEmail", id=uid, folder=folder, to=["ann@example.test"])
    assert (replied["success"], forwarded["success"]) == (True, True), (replied, forwarded)
    for arrived in sent(outbox):
        assert_no_smuggled_header(arrived.raw)
    assert len(sent(outbox)) == 2
    assert replied["references"] == ["<ok@example.test>", "<files-1@example.test>"]
    # a draft keeps its Bcc header, which SendDraft sends to: none may be smuggled in
    drafted = gmail.call("ReplyToEmail", id=uid, folder=folder, body="ok", draft=True)
    assert drafted["success"] is True, drafted
    assert_no_smuggled_header(stored_draft(dovecot, drafted["draft_id"]))


def test_reply_all_leaves_out_an_address_a_header_cannot_name(
        gmail: Any, dovecot: servers.DovecotServer, folder: str,
        outbox: servers.SmtpServer) -> None:
    hostile = with_attachment(
        b"attachment; filename=notes.txt",
        **{"Reply-To": f'"{TWICE_ENCODED}" <bob@example.test>'.encode()},
        Cc=b'carol@example.test, "x\x0by"@example.test',
    )
    (uid,) = servers.seed(dovecot, folder, [hostile])
    replied = gmail.call("ReplyToEmail", id=uid, folder=folder, body="ok", reply_all=True)
    assert replied["success"] is True, replied
    assert replied["left_out"] == ['"x\x0by"@example.test']
    (arrived,) = sent(outbox)
    assert_no_smuggled_header(arrived.raw)
    assert sorted(arrived.recipients) == ["bob@example.test", "carol@example.test"]


def test_a_message_id_that_would_end_a_line_is_not_answered(
        gmail: Any, dovecot: servers.DovecotServer, folder: str,
        outbox: servers.SmtpServer) -> None:
    # a Message-ID by its looks, and a line break once the email package writes it
    hostile = with_attachment(b"attachment; filename=notes.txt",
                              **{"Message-ID": f"<{UNKNOWN_CHARSET}@example.test>".encode()})
    (uid,) = servers.seed(dovecot, folder, [hostile])
    for tool, arguments in [("ReplyToEmail", {"body": "ok"}),
                            ("ForwardEmail", {"to": ["ann@example.test"]}),
                            ("SendEmail", {"to": ["ann@example.test"], "body": "ok",
                                           "in_reply_to": str(uid), "reply_folder": folder})]:
        result = gmail.call(tool, {"id": uid, "folder": folder, **arguments}
                            if tool != "SendEmail" else arguments)
        assert result.get("error_type") == "not_found", result
        assert "Message-ID" in result["error"]
    assert sent(outbox) == []


def hostile_draft(subject: str) -> bytes:
    return with_attachment(
        b"attachment; filename*=UTF-8''plan%0D%0Av2.txt",
        From=f'"{ENCODED_BREAK}" <{servers.USER}>'.encode(),
        To=b"ann@example.test, =?utf-8?q?Ann=0D=0ALee?= <lee@example.test>",
        Subject=subject.encode(),
        **{"In-Reply-To": f"<{ENCODED_BREAK}@example.test>".encode()},
    )


def test_a_draft_written_elsewhere_can_be_updated_and_sent(
        gmail: Any, dovecot: servers.DovecotServer, outbox: servers.SmtpServer) -> None:
    (uid,) = servers.seed(dovecot, "Drafts", [hostile_draft(ENCODED_BREAK)])
    updated = gmail.call("UpdateDraft", id=uid, body="changed")
    assert updated["success"] is True, updated
    assert updated["to"] == ["ann@example.test", "Ann Lee <lee@example.test>"]
    assert updated["subject"] == "a Bcc: evil@attacker.test"
    assert updated["renamed"] == [{"filename": "plan_v2.txt", "original": "plan\r\nv2.txt"}]
    raw = stored_draft(dovecot, updated["draft_id"])
    assert_no_smuggled_header(raw)
    assert b"In-Reply-To" not in raw

    sent_draft = gmail.call("SendDraft", id=updated["draft_id"])
    assert sent_draft["success"] is True, sent_draft
    (arrived,) = sent(outbox)
    assert sorted(arrived.recipients) == ["ann@example.test", "lee@example.test"]
    assert_no_smuggled_header(arrived.raw)


def test_a_long_stored_header_is_sent_as_it_was_stored(
        gmail: Any, dovecot: servers.DovecotServer, outbox: servers.SmtpServer) -> None:
    # refolding a header longer than a line decodes its encoded words
    subject = "=?utf-8?q?a_subject_long_enough_to_be_folded_again_when_it_is_sent" \
              "=0D=0ABcc:_evil@attacker.test?="
    draft = with_attachment(b"attachment; filename=notes.txt", Subject=subject.encode(),
                            To=b"ann@example.test")
    (uid,) = servers.seed(dovecot, "Drafts", [draft])
    result = gmail.call("SendDraft", id=uid)
    assert result["success"] is True, result
    (arrived,) = sent(outbox)
    assert_no_smuggled_header(arrived.raw)
    assert f"Subject: {subject}\r\n".encode() in arrived.raw


def test_header_values_are_judged_as_the_email_package_writes_them() -> None:
    from janito_gmail import _compose

    assert _compose.header_fits("Subject", "Quarterly numbers, ünïcödé")
    assert not _compose.header_fits("Subject", ENCODED_BREAK)
    assert not _compose.header_fits("References", f"<{ENCODED_BREAK}@example.test>")
    assert _compose.settled("Subject", "a\r\nb") == "a b"
    assert "\n" not in _compose.settled("Subject", TWICE_ENCODED)
    assert _compose.safe_filename("a\r\nb.txt") == "a_b.txt"
    assert _compose.header_fits("To", str(_compose.usable_address(
        f'"{ENCODED_BREAK}" <bob@example.test>')))
