"""Sign-in: the device-code flow through `janito onedrive login`, silent refresh, sign-out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import CLIENT_ID, login
from fake_graph import FakeGraph

from janito_core.cli import main as janito_main
from janito_core.secrets import get_secret

TOOLS = {"ListOneDriveFiles", "SearchOneDriveFiles", "ReadOneDriveFile", "DownloadOneDriveFile",
         "UploadOneDriveFile", "CreateOneDriveFolder", "DeleteOneDriveFile", "GetOneDriveShareLink",
         "MoveOneDriveItem", "CopyOneDriveItem", "ListOneDriveSharedWithMe"}


def test_without_a_token_every_tool_is_skipped_with_how_to_sign_in(graph: FakeGraph,
                                                                     janito: Any) -> None:
    registry = janito.load("onedrive", privileges="rw")
    skipped = registry.skipped()
    assert set(skipped) == TOOLS
    assert all("janito onedrive login" in reason for reason in skipped.values())
    assert registry.names() == []


def test_login_runs_the_device_code_flow_and_stores_the_cache(
        graph: FakeGraph, janito: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert janito.load("onedrive", privileges="rw").names() == []
    graph.pending_polls = 1  # the person has not entered the code at the first poll
    assert login() == 0
    out = capsys.readouterr().out
    assert "https://microsoft.com/devicelogin" in out and "enter the code" in out
    assert "Signed in to OneDrive as ada@example.com" in out
    grants = [entry["grant_type"] for entry in graph.token_log]
    assert grants == ["urn:ietf:params:oauth:grant-type:device_code"] * 2
    assert get_secret("onedrive_client_id") == CLIENT_ID
    cache = json.loads(get_secret("onedrive_token_cache") or "{}")
    assert cache["RefreshToken"] and cache["Account"]
    # Nothing the service issued was printed.
    for secret in graph.issued_secrets():
        assert secret not in out
    registry = janito.load("onedrive", privileges="rw")
    assert set(registry.names()) == TOOLS


def test_login_without_a_client_id_says_what_to_do(
        graph: FakeGraph, capsys: pytest.CaptureFixture[str]) -> None:
    assert janito_main(["onedrive", "login"]) == 2
    assert "--client-id" in capsys.readouterr().err


def test_login_refused_by_the_service_fails_cleanly(
        graph: FakeGraph, capsys: pytest.CaptureFixture[str]) -> None:
    graph.device_codes.clear()
    graph.pending_polls = 0
    original = graph.issue_tokens

    def refuse(client_id: str, scope: str) -> dict[str, Any]:
        raise AssertionError("no token may be issued")

    graph.issue_tokens = refuse  # type: ignore[method-assign]
    try:
        assert janito_main(["onedrive", "login", "--client-id", CLIENT_ID]) == 1
    finally:
        graph.issue_tokens = original  # type: ignore[method-assign]
    assert get_secret("onedrive_token_cache") is None


def test_status_and_logout(signed_in: FakeGraph, janito: Any,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert janito_main(["onedrive", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["signed_in"] is True and status["accounts"] == ["ada@example.com"]
    assert status["graph_url"] == signed_in.graph_url
    assert janito_main(["onedrive", "logout"]) == 0
    assert "Signed out" in capsys.readouterr().out
    assert get_secret("onedrive_token_cache") is None
    assert janito_main(["onedrive", "status"]) == 1
    assert "not signed in" in capsys.readouterr().out
    registry = janito.load("onedrive", privileges="rw")
    assert set(registry.skipped()) == TOOLS


def test_an_expired_access_token_is_refreshed_silently_and_saved(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "alpha")
    before = get_secret("onedrive_token_cache")
    graph.expire_access_tokens()  # the service no longer accepts the cached token
    result = onedrive.call("ListOneDriveFiles")
    assert result["success"], result
    assert [i["name"] for i in result["items"]] == ["a.txt"]
    statuses = [r for r in graph.requests("GET", "/children")]
    assert len(statuses) == 2  # one refused with 401, one retried with the new token
    assert graph.token_log[-1]["grant_type"] == "refresh_token"
    after = get_secret("onedrive_token_cache")
    assert after != before  # the rotated refresh token was written back
    # And the next call uses the new token without refreshing again.
    refreshes = len(graph.token_log)
    assert onedrive.call("ListOneDriveFiles")["success"]
    assert len(graph.token_log) == refreshes


def test_an_access_token_msal_knows_is_expired_is_refreshed_before_the_call(
        graph: FakeGraph, janito: Any, capsys: pytest.CaptureFixture[str]) -> None:
    graph.access_token_ttl = 60  # msal refreshes tokens that expire within minutes
    assert login() == 0
    capsys.readouterr()
    janito.load("onedrive", privileges="rw")
    graph.add_file("b.txt", "beta")
    assert janito.call("ListOneDriveFiles")["success"]
    assert graph.token_log[-1]["grant_type"] == "refresh_token"
    # msal refreshed before calling Graph: no request was refused first.
    assert len(graph.requests("GET", "/children")) == 1


def test_a_refresh_token_that_was_revoked_asks_to_sign_in_again(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.expire_access_tokens()
    graph.revoke_refresh_tokens()
    result = onedrive.call("ListOneDriveFiles", path="Documents")
    assert result["success"] is False
    assert result["error_type"] == "auth_failed"
    assert "janito onedrive login" in result["error"]
    assert result["path"] == "Documents"
    text = json.dumps(result)
    for secret in graph.issued_secrets():
        assert secret not in text


def test_a_refused_refresh_quoting_the_token_stays_out_of_msal_logs(
        onedrive: Any, caplog: pytest.LogCaptureFixture) -> None:
    """msal logs a refused refresh at DEBUG with the service's error_description verbatim."""
    import logging

    graph: FakeGraph = onedrive.graph
    graph.quote_refused_refresh_token = True
    graph.expire_access_tokens()
    graph.revoke_refresh_tokens()
    with caplog.at_level(logging.DEBUG):
        result = onedrive.call("ListOneDriveFiles")
    assert result["error_type"] == "auth_failed", result
    logged = [(r.name, r.getMessage(), r.exc_text or "") for r in caplog.records]
    assert any(name.startswith("msal") for name, _, _ in logged)
    # the service did quote the token, and msal did log the refusal
    assert any("invalid_grant" in message for _, message, _ in logged), logged
    text = "\n".join(f"{name}: {message} {exc}" for name, message, exc in logged)
    assert "[redacted]" in text
    for secret in graph.issued_secrets():
        assert secret not in text


def test_the_log_filter_cleans_arguments_tracebacks_and_bad_records() -> None:
    import logging

    from janito_onedrive._errors import LOG_FILTER, remember_secret

    remember_secret("very-secret-refresh-token")
    try:
        raise ValueError("refused very-secret-refresh-token")
    except ValueError:
        import sys

        exc_info = sys.exc_info()
    record = logging.LogRecord("msal.application", logging.DEBUG, __file__, 1,
                               "Refresh failed. %s: %s", ("invalid_grant",
                                                          "quoting very-secret-refresh-token"),
                               exc_info)
    assert LOG_FILTER.filter(record) is True
    assert record.getMessage() == "Refresh failed. invalid_grant: quoting [redacted]"
    assert "very-secret" not in (record.exc_text or "") and record.exc_info is None
    broken = logging.LogRecord("urllib3.connectionpool", logging.DEBUG, __file__, 1,
                               "%s %s", ("very-secret-refresh-token",), None)
    LOG_FILTER.filter(broken)
    assert "very-secret" not in broken.getMessage()


def test_the_sign_in_service_unreachable_is_a_connection_failure(
        signed_in: FakeGraph, janito: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_onedrive import _auth

    janito.load("onedrive", privileges="rw")
    signed_in.expire_access_tokens()
    signed_in.auth_server.shutdown()
    signed_in.auth_server.server_close()
    _auth.forget_apps()  # a fresh process would have to read the OpenID configuration
    result = janito.call("ListOneDriveFiles")
    assert result["success"] is False
    assert result["error_type"] == "connection_failed"
    assert "sign-in service" in result["error"]
