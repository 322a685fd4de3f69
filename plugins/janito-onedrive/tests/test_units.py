"""Small pieces on their own: redaction, Retry-After, paths, settings."""

from __future__ import annotations

import email.utils
import time
from email.message import Message
from typing import Any

import pytest
from janito_onedrive import _settings
from janito_onedrive._errors import redact, remember_secret
from janito_onedrive._graph import clean_path, format_item, item_action, item_target, retry_after


def test_redact_known_values_and_token_shapes() -> None:
    remember_secret("opaque-secret-value-123")
    text = redact("a opaque-secret-value-123 b Authorization: Bearer abc.DEF-ghi_jkl "
                  "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl https://x/up?tempauth=XYZ&x=1")
    assert "opaque-secret-value-123" not in text and "abc.DEF" not in text
    assert "eyJzdWIiOi" not in text and "XYZ" not in text
    assert "Bearer [redacted]" in text and "tempauth=[redacted]&x=1" in text
    assert redact("$skiptoken=3 and error code=42") == "$skiptoken=3 and error code=42"


def test_redact_finds_remembered_values_in_their_travelling_forms() -> None:
    import base64
    import json
    from urllib.parse import quote

    url = "https://upload.example.test/up/session?key=abc/def+ghi"
    remember_secret(url)
    for shown in (json.dumps({"uploadUrl": url}), quote(url, safe=""),
                  base64.urlsafe_b64encode(url.encode()).decode()):
        assert "abc/def" not in redact(shown) and "abc%2Fdef" not in redact(shown)


def test_an_item_with_mistyped_values_still_matches_the_declared_type() -> None:
    """A value of the wrong type from the service is null, never passed on as it came, so
    the answers keep to the tools' output schema."""
    item = format_item({"id": 7, "name": "a.txt", "size": True, "createdDateTime": None,
                        "lastModifiedDateTime": ["x"], "webUrl": {"u": 1},
                        "file": {"mimeType": 3}, "parentReference": {"path": "/drive/root:/d"}})
    assert item == {"id": None, "name": "a.txt", "path": "d/a.txt", "type": "file", "size": None,
                    "created": None, "modified": None, "web_url": None, "mime_type": None}
    assert format_item({"name": "d", "folder": {"childCount": "3"}, "size": 12})["child_count"] is None


def _headers(value: str) -> Message:
    message = Message()
    message["Retry-After"] = value
    return message


def test_retry_after_seconds_and_dates() -> None:
    assert retry_after(_headers("7")) == 7.0
    assert retry_after(_headers("-3")) == 0.0
    assert retry_after(_headers("inf")) is None and retry_after(_headers("soon")) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after(_headers(later)) or 0) <= 31
    assert retry_after(Message()) is None


def test_paths_are_cleaned_and_encoded() -> None:
    assert clean_path("/Documents//My Files/") == "Documents/My Files"
    assert clean_path("a\\b") == "a/b"
    for bad in ("a/../b", "./a", "a\x00b", "bad\ud800"):
        with pytest.raises(ValueError):
            clean_path(bad)
    with pytest.raises(ValueError):
        clean_path("/", allow_root=False)
    assert item_target("") == "/me/drive/root"
    assert item_target("My Files/a#b.txt") == "/me/drive/root:/My%20Files/a%23b.txt"
    assert item_action("", "children") == "/me/drive/root/children"
    assert item_action("Docs", "content") == "/me/drive/root:/Docs:/content"


def test_settings_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_ONEDRIVE_CHUNK_SIZE", "1000000")
    assert _settings.chunk_size() == 3 * 320 * 1024
    monkeypatch.setenv("JANITO_ONEDRIVE_CHUNK_SIZE", "5")
    assert _settings.chunk_size() == 320 * 1024
    monkeypatch.setenv("JANITO_ONEDRIVE_MAX_RETRY_WAIT", "nonsense")
    assert _settings.max_retry_wait() == 60.0
    monkeypatch.delenv("JANITO_ONEDRIVE_GRAPH_URL", raising=False)
    assert _settings.graph_url() == "https://graph.microsoft.com/v1.0"


def test_surrogates_become_replacement_characters_not_errors(onedrive: Any) -> None:
    # JSON can carry lone surrogates, which no URL or UTF-8 file can hold: dispatch hands the
    # tools U+FFFD in their place (docs/dispatch.md), so nothing raises.
    upload = onedrive.call("UploadOneDriveFile", '{"path": "a.txt", "content": "x\\udc00"}')
    assert upload["success"] is True and upload["size"] == len("x\ufffd".encode())
    renamed = onedrive.call("UploadOneDriveFile", '{"path": "b\\ud800.txt", "content": "x"}')
    assert renamed["success"] is True and renamed["path"].endswith("b\ufffd.txt")
    search = onedrive.call("SearchOneDriveFiles", {"query": "q\ud800"})
    assert search["success"] is True and search["query"] == "q\ufffd"
    listing = onedrive.call("ListOneDriveFiles", {"path": "p\ud800"})
    assert listing["error_type"] == "not_found"
