"""Graph errors become clear results: throttling, unreachable service, redirects of trust,
and no credential ever appears in a result or a report."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_graph import FakeGraph

from janito_core.secrets import get_secret


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the client makes; the waits still happen."""
    from janito_onedrive import _graph

    seen: list[float] = []
    real = _graph._sleep

    def record(seconds: float) -> None:
        seen.append(seconds)
        real(seconds)

    monkeypatch.setattr(_graph, "_sleep", record)
    return seen


def test_429_waits_out_retry_after_then_succeeds(onedrive: Any, waits: list[float]) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "a")
    graph.add_fault("throttle", "/v1.0/me/drive/root/children", status=429, retry_after="1")
    result = onedrive.call("ListOneDriveFiles")
    assert result["success"], result
    assert waits == [1.0]
    assert len(graph.requests("GET", "/children")) == 2


def test_503_without_retry_after_backs_off(onedrive: Any, waits: list[float]) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_fault("throttle", "/v1.0/me/drive/root/children", status=503, retry_after=None)
    result = onedrive.call("ListOneDriveFiles")
    assert result["success"], result
    assert waits == [1.0]


def test_a_retry_after_beyond_the_bound_is_reported_not_waited(onedrive: Any,
                                                               waits: list[float]) -> None:
    graph: FakeGraph = onedrive.graph
    graph.add_fault("throttle", "/v1.0/me/drive/root", status=429, retry_after="3600")
    result = onedrive.call("ReadOneDriveFile", path="a.txt")
    assert result["success"] is False and result["error_type"] == "throttled"
    assert result["retry_after"] == 3600 and result["status"] == 429
    assert waits == []


def test_throttling_that_does_not_stop_gives_up(onedrive: Any, waits: list[float],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_ONEDRIVE_MAX_RETRIES", "2")
    graph: FakeGraph = onedrive.graph
    graph.add_fault("throttle", "/v1.0/", status=503, retry_after="0", times=10)
    result = onedrive.call("ListOneDriveFiles")
    assert result["error_type"] == "service_unavailable" and result["status"] == 503
    assert waits == [0.0, 0.0] and len(graph.requests("GET", "/children")) == 3


def test_graph_unreachable_and_too_slow(onedrive: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    graph: FakeGraph = onedrive.graph
    monkeypatch.setenv("JANITO_ONEDRIVE_TIMEOUT", "1")
    graph.add_fault("slow", "/v1.0/", retry_after="2.5")
    slow = onedrive.call("ListOneDriveFiles")
    assert slow["success"] is False and slow["error_type"] == "timeout"
    graph.graph_server.shutdown()
    graph.graph_server.server_close()
    down = onedrive.call("ListOneDriveFiles")
    assert down["success"] is False and down["error_type"] == "connection_failed"


def test_a_next_link_to_another_host_is_not_followed(onedrive: Any) -> None:
    graph: FakeGraph = onedrive.graph
    graph.page_size = 1
    graph.add_file("a.txt", "a")
    graph.add_file("b.txt", "b")
    graph.add_fault("foreign_next_link", "/v1.0/")
    result = onedrive.call("ListOneDriveFiles")
    assert result["success"] is False and result["error_type"] == "invalid_response"
    assert "another host" in result["error"]


def test_no_credential_appears_in_results_or_reports(
        onedrive: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from fake_graph import FRAGMENT_UNIT

    graph: FakeGraph = onedrive.graph
    graph.add_file("a.txt", "alpha")
    results: list[dict[str, Any]] = []
    # A service that quotes the Authorization header back in an error message.
    graph.add_fault("echo", "/v1.0/", status=400)
    results.append(onedrive.call("ListOneDriveFiles"))
    assert results[-1]["error_type"] == "invalid_request"
    assert "[redacted]" in results[-1]["error"]
    # ... and the upload URL of a session, during an upload.
    monkeypatch.setenv("JANITO_ONEDRIVE_SIMPLE_UPLOAD_LIMIT", "10")
    monkeypatch.setenv("JANITO_ONEDRIVE_CHUNK_SIZE", str(FRAGMENT_UNIT))
    onedrive.path("big.bin").write_bytes(b"z" * (FRAGMENT_UNIT + 1))
    graph.add_fault("fail_fragment", lambda method, index: True, status=400)
    results.append(onedrive.call("UploadOneDriveFile", path="big.bin", local_path="big.bin"))
    assert results[-1]["error_type"] == "invalid_request"
    assert "accepted at [redacted]" in results[-1]["error"]
    results.append(onedrive.call("ReadOneDriveFile", path="a.txt"))
    results.append(onedrive.call("ListOneDriveFiles"))  # item JSON has pre-authenticated URLs
    # A refresh that fails.
    graph.expire_access_tokens()
    graph.revoke_refresh_tokens()
    results.append(onedrive.call("ListOneDriveFiles"))
    assert results[-1]["error_type"] == "auth_failed"
    shown = json.dumps(results) + capsys.readouterr().err
    secrets = graph.issued_secrets() + [graph._tempauth(n.id) for n in graph.nodes.values()]
    assert len(secrets) >= 5
    for secret in secrets:
        assert secret not in shown
    assert "tempauth=" not in shown.replace("tempauth=[redacted]", "")
    cache = get_secret("onedrive_token_cache") or ""
    for entry in json.loads(cache).get("RefreshToken", {}).values():
        assert entry["secret"] not in shown
