"""Loading the toolset: on demand, gated by credentials, with the right permissions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from janito_core import AUTOLOAD_TOOLSETS, Registry

TOOLS = {
    "ListFolders": "r",
    "CountEmails": "r",
    "ReadEmails": "r",
    "MarkEmails": "w",
    "MoveEmails": "w",
    "TrashEmails": "w",
    "DeleteEmails": "w",
    "SendEmail": "w",
    "SaveAttachment": "w",
    "ReplyToEmail": "w",
    "ForwardEmail": "w",
    "CreateDraft": "w",
    "ListDrafts": "r",
    "UpdateDraft": "w",
    "SendDraft": "w",
    "ListLabels": "r",
    "LabelEmails": "w",
}


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, janito_isolated: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("JANITO_GMAIL_", "JANITO_SECRET_GMAIL_")):
            monkeypatch.delenv(name)


def test_gmail_is_on_demand_not_autoloaded(no_credentials: None) -> None:
    assert "gmail" not in AUTOLOAD_TOOLSETS
    registry = Registry(autoload=None)
    assert "gmail" in registry.toolsets()
    assert "gmail" not in registry.loaded_toolsets()


def test_without_credentials_every_tool_is_skipped_with_the_command(
    janito: Any, no_credentials: None
) -> None:
    registry = janito.load("gmail")
    skipped = registry.skipped()
    assert set(skipped) == set(TOOLS)
    for reason in skipped.values():
        assert "gmail_username" in reason
        assert "`janito secrets set gmail_username`" in reason
    result = janito.call("ReadEmails", folder="INBOX")
    assert result["success"] is False
    assert result["error_type"] == "tool_unavailable"


def test_without_password_the_reason_names_gmail_password(
    janito: Any, no_credentials: None
) -> None:
    from janito_core.secrets import set_secret

    set_secret("gmail_username", "someone@example.test")
    skipped = janito.load("gmail").skipped()
    assert set(skipped) == set(TOOLS)
    for reason in skipped.values():
        assert "set it with `janito secrets set gmail_password`" in reason


def test_stored_secrets_load_the_tools(janito: Any, no_credentials: None) -> None:
    from janito_core.secrets import set_secret

    set_secret("gmail_username", "someone@example.test")
    set_secret("gmail_password", "stored-app-password")
    registry = janito.load("gmail")
    assert sorted(registry.names()) == sorted(TOOLS)
    assert registry.get_all_tool_permissions() == TOOLS


def test_an_oauth_token_is_enough(janito: Any, no_credentials: None,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_USERNAME", "someone@example.test")
    monkeypatch.setenv("JANITO_SECRET_GMAIL_OAUTH_TOKEN", "token-value")
    assert sorted(janito.load("gmail").names()) == sorted(TOOLS)


def test_read_only_privileges_deny_every_changing_tool(janito: Any, no_credentials: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_USERNAME", "someone@example.test")
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "pw-value-123")
    registry = janito.load("gmail", privileges="r")
    assert sorted(registry.names()) == sorted(n for n, p in TOOLS.items() if p == "r")
    for name, permission in TOOLS.items():
        if permission == "w":
            result = janito.call(name, {})
            assert result["success"] is False
            assert result["error_type"] == "permission_denied"


def test_every_tool_reaches_the_network(janito: Any, no_credentials: None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_USERNAME", "someone@example.test")
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "pw-value-123")
    registry = janito.load("gmail")
    for name in TOOLS:
        record = registry.record(name)
        assert record is not None and record.cls.open_world is True, name


def test_janito_tools_lists_every_tool_with_its_permissions(no_credentials: None,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "JANITO_SECRET_GMAIL_USERNAME": "someone@example.test",
           "JANITO_SECRET_GMAIL_PASSWORD": "pw-value-123"}
    listed = subprocess.run([sys.executable, "-m", "janito_core.cli", "tools", "-t", "gmail",
                             "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout) if row["toolset"] == "gmail"}
    assert {name: row["permissions"] for name, row in rows.items()} == TOOLS
    assert {row["status"] for row in rows.values()} == {"loaded"}


def test_every_tool_has_a_documented_schema(janito: Any, no_credentials: None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_USERNAME", "someone@example.test")
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "pw-value-123")
    registry = janito.load("gmail")
    for name in TOOLS:
        schema = registry.get_function_schema(name)
        function = schema["function"]
        assert function["name"] == name
        assert function["description"]
        for field, spec in function["parameters"]["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"


def test_a_corrupt_secrets_store_is_named_not_taken_for_missing_credentials(
    janito: Any, no_credentials: None, janito_isolated: Path
) -> None:
    store = janito_isolated / "secrets.json"
    store.write_text('{"gmail_username": "someone@example.test", ', encoding="utf-8")
    skipped = janito.load("gmail").skipped()
    assert set(skipped) == set(TOOLS)
    for reason in skipped.values():
        assert str(store) in reason
        assert "not valid JSON" in reason
        assert "gmail_username" not in reason  # not "no mail account is configured"


def test_a_corrupt_store_met_during_a_call_is_a_configuration_error(
    no_credentials: None, janito_isolated: Path
) -> None:
    from janito_gmail.list_folders import ListFolders

    store = janito_isolated / "secrets.json"
    store.write_text("[1, 2", encoding="utf-8")
    result = ListFolders().run()
    assert result["success"] is False
    assert result["error_type"] == "configuration_error"
    assert str(store) in result["error"]


def test_the_changing_tools_describe_the_selection_in_the_same_words(
        janito: Any, no_credentials: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_GMAIL_USERNAME", "someone@example.test")
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "pw-value-123")
    registry = janito.load("gmail")
    shared = ("folder", "ids", "query", "sender", "subject", "since", "before", "unread_only")
    seen: dict[str, set[str]] = {name: set() for name in shared}
    for tool in ("MarkEmails", "MoveEmails", "TrashEmails", "DeleteEmails", "LabelEmails"):
        properties = registry.get_function_schema(tool)["function"]["parameters"]["properties"]
        for name in shared:
            seen[name].add(properties[name]["description"])
    assert all(len(texts) == 1 for texts in seen.values()), seen
