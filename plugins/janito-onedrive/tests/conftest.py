"""Fixtures: the fake Graph and identity service, and a signed-in janito."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from fake_graph import FakeGraph, make_tls_files

CLIENT_ID = "3c5d8b6e-1f7a-4c2b-9e0d-7a6b5c4d3e2f"


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def graph(tls_files: tuple[Path, Path, Path], janito_isolated: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGraph]:
    """The fake service, with janito-onedrive pointed at it (not signed in yet)."""
    server = FakeGraph(tls_files).start()
    monkeypatch.setenv("JANITO_ONEDRIVE_GRAPH_URL", server.graph_url)
    monkeypatch.setenv("JANITO_ONEDRIVE_AUTHORITY", server.authority)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(server.ca_path))
    monkeypatch.setenv("JANITO_ONEDRIVE_MAX_RETRY_WAIT", "5")
    for name in ("JANITO_ONEDRIVE_SIMPLE_UPLOAD_LIMIT", "JANITO_ONEDRIVE_CHUNK_SIZE",
                 "JANITO_ONEDRIVE_MAX_RETRIES", "JANITO_SECRET_ONEDRIVE_CLIENT_ID",
                 "JANITO_SECRET_ONEDRIVE_TOKEN_CACHE"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield server
    finally:
        server.stop()


def login(client_id: str = CLIENT_ID) -> int:
    from janito_core.cli import main

    return main(["onedrive", "login", "--client-id", client_id])


@pytest.fixture
def signed_in(graph: FakeGraph, capsys: pytest.CaptureFixture[str]) -> FakeGraph:
    """The fake service after a real device-code sign-in through `janito onedrive login`."""
    assert login() == 0, capsys.readouterr()
    capsys.readouterr()
    return graph


@pytest.fixture
def onedrive(signed_in: FakeGraph, janito: Any) -> Any:
    """The janito tester with the onedrive toolset loaded (all privileges)."""
    janito.load("onedrive", privileges="rw")
    janito.graph = signed_in
    return janito
