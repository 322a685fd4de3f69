"""The MIME helpers on their own: structures, parameters, bodies, HTML and headers."""

from __future__ import annotations

from janito_gmail import _mime


def test_html_to_text_drops_markup_and_keeps_blocks() -> None:
    html = ("<html><head><title>t</title><style>x{}</style></head><body>"
            "<p>One&nbsp;<a href='x'>link</a></p><script>evil()</script>"
            "<table><tr><td>a</td><td>b</td></tr></table><pre>  keep\n  this</pre>"
            "<p>caf&eacute; &lt;tag&gt;</p></body></html>")
    text = _mime.html_to_text(html)
    assert text.splitlines()[0] == "One link"
    assert "evil" not in text and "x{}" not in text and "t\n" not in text
    assert "a b" in text
    assert "  keep\n  this" in text
    assert "café <tag>" in text


def test_parameters_rfc2231_and_encoded_words() -> None:
    pairs = _mime._pairs((b"filename*0*", b"utf-8''na%C3%AF", b"filename*1", b"ve.txt",
                          b"NAME", b"=?utf-8?q?caf=C3=A9?="))
    assert pairs["filename"] == "naïve.txt"
    assert pairs["name"] == "café"
    assert _mime._pairs(None) == {}


def test_parts_of_a_nested_structure() -> None:
    structure = (
        [
            (
                [
                    (b"text", b"plain", (b"charset", b"iso-8859-1"), None, None, b"quoted-printable",
                     10, 1, None, None, None, None),
                    (b"text", b"html", (b"charset", b"utf-8"), None, None, b"7bit", 20, 1, None,
                     None, None, None),
                ],
                b"alternative", None, None, None, None,
            ),
            (b"image", b"png", (b"name", b"pic.png"), b"<cid>", None, b"base64", 780, None,
             (b"inline", None), None, None),
            (b"application", b"pdf", None, None, None, b"base64", 156, None,
             (b"attachment", (b"filename", b"a.pdf")), None, None),
        ],
        b"mixed", None, None, None, None,
    )
    leaves = _mime.parts(structure)
    assert [p.section for p in leaves] == ["1.1", "1.2", "2", "3"]
    body, attachments = _mime.split_parts(leaves)
    assert body is not None and body.section == "1.1" and body.charset == "iso-8859-1"
    assert [(a.filename, a.disposition) for a in attachments] == [("pic.png", "inline"),
                                                                 ("a.pdf", "attachment")]
    info = _mime.attachment_info(1, attachments[0])
    assert info["inline"] is True and info["size"] == 570


def test_partial_bodies_decode_without_broken_tails() -> None:
    import base64
    import quopri

    text = "héllo wörld " * 20
    encoded = base64.encodebytes(text.encode())
    cut = _mime.decode_body(encoded[:37], "base64", complete=False)
    assert text.encode().startswith(cut)
    qp = quopri.encodestring(text.encode())
    cut_qp = _mime.decode_body(qp[:8], "quoted-printable", complete=False)
    assert text.encode().startswith(cut_qp)
    assert _mime.to_text(cut_qp, "utf-8", complete=False) == text[: len(
        _mime.to_text(cut_qp, "utf-8", complete=False))]


def test_headers_decode_and_addresses() -> None:
    raw = (b"From: =?utf-8?q?Andr=C3=A9?= <andre@example.test>\r\n"
           b"To: \"Doe, John\" <john@example.test>, plain@example.test\r\n"
           b"Subject: =?utf-8?b?w6l0w6k=?= and\r\n more\r\n"
           b"Date: Tue, 05 Mar 2024 10:00:00 +0100\r\n\r\n")
    headers = _mime.parse_headers(raw)
    assert _mime.header(headers, "Subject") == "été and more"
    assert _mime.addresses(headers, "From") == ["André <andre@example.test>"]
    assert _mime.addresses(headers, "To") == ['"Doe, John" <john@example.test>',
                                              "plain@example.test"]
    assert _mime.iso_date(_mime.header(headers, "Date")) == "2024-03-05T10:00:00+01:00"
    assert _mime.addresses(headers, "Cc") == []
