"""Fixtures of the reliability suite.

- Every test runs with the configured secrets in ``JANITO_SECRET_*`` (after the core
  conftest's ``isolated`` fixture has cleared them), the gmail and onedrive toolsets
  pointed at the suite's loopback servers, and proxies that send any other HTTP request
  to a closed loopback port.
- Outbound connections and name lookups other than loopback are refused inside the test
  process (an audit hook), so no test can reach the network whatever a tool is sent.
- Every log record (root logger at DEBUG) and every report event is swept for secrets;
  a test during which a secret shows up fails at teardown with where it was seen.
- The counts the suite measured are printed at the end of the run.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import rel_support as rel
from rel_servers import IdentityServer, ImapServer, SmtpServer

# -- no network beyond loopback -----------------------------------------------------------

_GUARD = {"on": False}
BLOCKED: list[str] = []
_LOOPBACK = {"127.0.0.1", "::1", "localhost", "0.0.0.0", "", None}


def _loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return host in _LOOPBACK or (isinstance(host, str) and host.startswith("127."))


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _GUARD["on"]:
        return
    if event == "socket.getaddrinfo":
        host = args[0]
        if not _loopback(host):
            BLOCKED.append(f"lookup {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, "network access is disabled in the reliability suite")
    elif event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and not _loopback(address[0]):
            BLOCKED.append(f"connect {address!r}")
            raise ConnectionRefusedError(111, "network access is disabled in the reliability suite")


sys.addaudithook(_audit)


# -- services and environment ---------------------------------------------------------------


class Services:
    def __init__(self, imap: ImapServer, smtp: SmtpServer, identity: IdentityServer) -> None:
        self.imap = imap
        self.smtp = smtp
        self.identity = identity


@pytest.fixture(scope="session")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """The loopback IMAP, SMTP and identity/Graph servers, and the settings naming them."""
    secrets = rel.SECRETS
    imap = ImapServer((secrets["gmail_username"], secrets["gmail_password"])).start()
    smtp = SmtpServer().start()
    identity = IdentityServer(tmp_path_factory.mktemp("tls")).start()
    secrets["onedrive_token_cache"] = identity.token_cache(
        secrets["onedrive_client_id"], rel.ONEDRIVE_ACCESS_TOKEN, rel.ONEDRIVE_REFRESH_TOKEN)
    rel.SWEEP.reset_values()
    rel.SERVICE_ENV.update({
        "JANITO_GMAIL_IMAP_HOST": "127.0.0.1",
        "JANITO_GMAIL_IMAP_PORT": str(imap.port),
        "JANITO_GMAIL_IMAP_TLS": "none",
        "JANITO_GMAIL_SMTP_HOST": "127.0.0.1",
        "JANITO_GMAIL_SMTP_PORT": str(smtp.port),
        "JANITO_GMAIL_SMTP_TLS": "none",
        "JANITO_GMAIL_TIMEOUT": "10",
        "JANITO_ONEDRIVE_AUTHORITY": identity.authority,
        "JANITO_ONEDRIVE_GRAPH_URL": identity.graph_url,
        "JANITO_ONEDRIVE_TIMEOUT": "10",
        "JANITO_ONEDRIVE_MAX_RETRIES": "0",
        "JANITO_ONEDRIVE_MAX_RETRY_WAIT": "0",
        "REQUESTS_CA_BUNDLE": str(identity.cert),
    })
    try:
        yield Services(imap, smtp, identity)
    finally:
        imap.stop()
        smtp.stop()
        identity.stop()


@pytest.fixture(scope="session", autouse=True)
def swept_logging() -> Iterator[rel.SweepHandler]:
    """Every log record of the session, at every level, goes through the secret sweep."""
    handler = rel.SweepHandler()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@pytest.fixture(autouse=True)
def reliability_env(isolated: Path, services: Services, monkeypatch: pytest.MonkeyPatch,
                    request: pytest.FixtureRequest) -> Iterator[None]:
    """Secrets, service settings and dead proxies for the test; the network guard on."""
    for name, value in {**rel.secret_env(), **rel.SERVICE_ENV, **rel.offline_env()}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("JANITO_MCP_CONFIG", raising=False)
    from janito_core.registry import default_registry

    rel.watch(default_registry())
    hits_before = len(rel.SWEEP.hits)
    _GUARD["on"] = True
    try:
        yield
    finally:
        _GUARD["on"] = False
    new = rel.SWEEP.hits[hits_before:]
    if new and request.node.get_closest_marker("xfail") is not None:
        # a known leak, reported by that test's own xfail: kept apart from the session sweep
        rel.SWEEP.excused.extend(new)
        del rel.SWEEP.hits[hits_before:]
    elif new:
        lines = "\n".join(f"  {where}: {secret[:12]}... in {excerpt!r}" for where, secret, excerpt in new[:10])
        pytest.fail(f"{len(new)} secret value(s) leaked during this test:\n{lines}", pytrace=False)


@pytest.fixture(scope="session")
def inventory(tmp_path_factory: pytest.TempPathFactory, services: Any) -> list[dict[str, Any]]:
    """Every tool of every repository toolset, as a fully privileged registry sees it."""
    with rel.service_environment():
        registry = rel.make_registry(tmp_path_factory.mktemp("inventory"))
        records = registry.records()
    tools = []
    for record in records:
        schema = registry.schema(record.name).parameters if record.status == "loaded" else {}
        tools.append({"name": record.name, "toolset": record.toolset,
                      "permissions": record.permissions, "status": record.status,
                      "schema": schema})
    by_toolset = {t["toolset"] for t in tools}
    assert set(rel.ALL_TOOLSETS) <= by_toolset, by_toolset
    loaded = [t for t in tools if t["status"] == "loaded"]
    # the credentials make gmail and onedrive load: their tools are really gated here
    assert {t["toolset"] for t in loaded} >= set(rel.ALL_TOOLSETS)
    return tools



def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sweep_last: run after every other test of the session")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    last = [item for item in items if item.get_closest_marker("sweep_last")]
    items[:] = [item for item in items if item not in last] + last


# -- the counts --------------------------------------------------------------------------------


# Under pytest-xdist each worker counts what it ran; the workers hand their counts to the
# controller, which prints and writes the sums.
_FROM_WORKERS: list[dict[str, Any]] = []


def _local_counts() -> dict[str, Any] | None:
    if not rel.COUNTS and not rel.FAULT_KINDS:
        return None
    data = rel.counts_report()
    data["secret sweep: hits"] = len(rel.SWEEP.hits)
    data["secret sweep: known leaks (xfail tests)"] = len(rel.SWEEP.excused)
    data["secret sweep: items"] = rel.SWEEP.items
    data["network attempts refused"] = len(BLOCKED)
    return data


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    names: set[str] = set()
    for part in parts:
        for key, value in part.items():
            if key == "fault kind names":
                names.update(value)
            elif key != "fault kinds":
                total[key] = total.get(key, 0) + value
    total["fault kinds"] = len(names)
    total["fault kind names"] = sorted(names)
    return dict(sorted(total.items()))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # an xdist worker
        output["janito_reliability_counts"] = json.dumps(_local_counts() or {})
    elif _FROM_WORKERS and any(part.get("secret sweep: hits") for part in _FROM_WORKERS):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    raw = getattr(node, "workeroutput", {}).get("janito_reliability_counts")
    if raw:
        _FROM_WORKERS.append(json.loads(raw))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    local = _local_counts()
    parts = [p for p in [*_FROM_WORKERS, local] if p]
    if not parts:
        return
    data = _merged(parts)
    terminalreporter.write_sep("=", "janito reliability counts")
    for key, value in data.items():
        if key == "fault kind names":
            continue
        terminalreporter.write_line(f"{key}: {value}")
    target = os.environ.get("JANITO_RELIABILITY_COUNTS")
    if target:
        Path(target).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
