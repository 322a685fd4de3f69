"""The distribution as janito sees it: conformance, harnesses, entry points, import cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_graph import FakeGraph

from janito_core.testing import check_toolset

MODULES = ["list_onedrive_files", "search_onedrive_files", "read_onedrive_file",
           "download_onedrive_file", "upload_onedrive_file", "create_onedrive_folder",
           "delete_onedrive_file", "get_onedrive_share_link", "move_onedrive_item",
           "copy_onedrive_item", "list_onedrive_shared_with_me"]
PERMISSIONS = {"ListOneDriveFiles": "r", "SearchOneDriveFiles": "r", "ReadOneDriveFile": "r",
               "GetOneDriveShareLink": "w", "DownloadOneDriveFile": "w",
               "UploadOneDriveFile": "w", "CreateOneDriveFolder": "w", "DeleteOneDriveFile": "w",
               "MoveOneDriveItem": "w", "CopyOneDriveItem": "w", "ListOneDriveSharedWithMe": "r"}


def test_the_toolset_conforms_with_generated_calls_against_the_service(signed_in: FakeGraph) -> None:
    signed_in.add_file("Documents/a.txt", "a")
    report = check_toolset("onedrive", max_examples=15)
    assert sorted(report.tools) == sorted(PERMISSIONS)
    assert report.calls_made >= len(PERMISSIONS) * 15


def test_permissions_are_least_privilege(onedrive: Any) -> None:
    assert onedrive.registry.get_all_tool_permissions() == PERMISSIONS


def test_read_only_privileges_deny_the_write_tools(signed_in: FakeGraph, janito: Any) -> None:
    registry = janito.load("onedrive", privileges="r")
    assert set(registry.names()) == {n for n, p in PERMISSIONS.items() if p == "r"}
    denied = janito.call("DeleteOneDriveFile", path="a.txt")
    assert denied["success"] is False
    assert not signed_in.requests("DELETE")
    # a sharing link changes who can reach the file: not for a read-only session
    signed_in.add_file("b.txt", "b")
    shared = janito.call("GetOneDriveShareLink", path="b.txt")
    assert shared["error_type"] == "permission_denied"
    assert not signed_in.requests("POST", "createLink")


def test_importing_the_toolset_imports_neither_msal_nor_the_http_stack() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for m in {MODULES!r}: importlib.import_module('janito_onedrive.' + m)\n"
        "importlib.import_module('janito_onedrive._commands')\n"
        "print(json.dumps([m for m in ('msal', 'requests', 'urllib.request', 'ssl') "
        "if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout) == []


def test_entry_points_advertise_the_toolset_and_the_command_plugin() -> None:
    from importlib.metadata import distribution

    points = {(ep.group, ep.name): ep.value for ep in distribution("janito-onedrive").entry_points}
    assert points[("janito.toolsets", "onedrive")] == "janito_onedrive"
    assert points[("janito.plugins", "onedrive")] == "janito_onedrive._commands"


def _env(graph: FakeGraph, config: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(JANITO_CONFIG_DIR=str(config), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
               JANITO_ONEDRIVE_GRAPH_URL=graph.graph_url, JANITO_ONEDRIVE_AUTHORITY=graph.authority,
               REQUESTS_CA_BUNDLE=str(graph.ca_path))
    return env


def test_main_harness_runs_one_tool_from_the_shell(signed_in: FakeGraph, janito_isolated: Path,
                                                   tmp_path: Path) -> None:
    signed_in.add_file("Documents/notes.txt", "hello from the harness")
    env = _env(signed_in, janito_isolated)
    listed = subprocess.run(
        [sys.executable, "-m", "janito_onedrive.list_onedrive_files", "--path", "Documents",
         "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["items"][0]["name"] == "notes.txt"
    read = subprocess.run(
        [sys.executable, "-m", "janito_onedrive.read_onedrive_file", "Documents/notes.txt",
         "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert json.loads(read.stdout)["content"] == "hello from the harness"
    missing = subprocess.run(
        [sys.executable, "-m", "janito_onedrive.delete_onedrive_file", "gone.txt", "--dry-run",
         "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert missing.returncode == 1 and json.loads(missing.stdout)["error_type"] == "not_found"


@pytest.mark.parametrize("module", MODULES)
def test_every_module_has_a_main_harness(module: str) -> None:
    import importlib

    loaded = importlib.import_module(f"janito_onedrive.{module}")
    assert callable(loaded.main)
    with pytest.raises(SystemExit) as exit_info:
        loaded.main(["--help"])
    assert exit_info.value.code == 0


def test_janito_command_lists_the_onedrive_subcommand(graph: FakeGraph, janito_isolated: Path,
                                                      tmp_path: Path) -> None:
    env = _env(graph, janito_isolated)
    done = subprocess.run([sys.executable, "-m", "janito_core.cli", "onedrive", "status"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 1 and "not signed in" in done.stdout
    assert "janito onedrive login" in done.stdout
