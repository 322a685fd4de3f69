"""The sandbox policy: where the user sets it, and how ``janito tools`` shows what a tool says.

Enforcing the policy is the business of the toolsets that run code (janito-system's tests
check it with real processes); janito-core reads the setting, offers ``--sandbox`` and
shows each tool's ``sandbox_status()``. The command runs for real, with a small
distribution whose tool reports the policy it sees.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.distributions import clean_env, write_distribution

from janito_core.sandbox import (
    CONFIG_FILE,
    DEFAULT_POLICY,
    ENV_VAR,
    POLICIES,
    SandboxPolicyError,
    sandbox_policy,
)

_SCRIPT = Path(sys.executable).with_name("janito")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "janito_core.cli"]

SANDBOXED = {
    "acme_sandboxed/__init__.py": '"""Tools that report the sandbox policy they see."""\n',
    "acme_sandboxed/show.py": '''
        from typing import Any

        from janito_core import BaseTool, tool
        from janito_core.sandbox import sandbox_policy


        @tool(permissions="x")
        class ShowPolicy(BaseTool):
            """Answer with the sandbox policy in force."""

            @classmethod
            def sandbox_status(cls) -> str:
                policy = sandbox_policy()
                return f"{policy.name} ({policy.source})"

            def run(self) -> dict[str, Any]:
                return {"success": True, "policy": sandbox_policy().name}


        @tool(permissions="r")
        class RunsNothing(BaseTool):
            """Run no code at all."""

            def run(self) -> dict[str, Any]:
                return {"success": True}


        @tool(permissions="x")
        class BrokenStatus(BaseTool):
            """Say nothing sensible about its sandbox."""

            @classmethod
            def sandbox_status(cls) -> str:
                raise RuntimeError("status on fire")

            def run(self) -> dict[str, Any]:
                return {"success": True}
    ''',
}


# A plugin subcommand built like `janito mcp serve`: the shared options, its own handler.
SERVE_LIKE = {
    "acme_policy_plugin.py": '''
        """A hook plugin adding `janito show-sandbox`, which prints the sandbox policy it sees."""
        import sys

        from janito_core import hookimpl
        from janito_core.cli import registry_options
        from janito_core.sandbox import sandbox_policy


        def show(args):
            sys.stdout.write(sandbox_policy().name + "\\n")
            return 0


        @hookimpl
        def janito_register_commands(subparsers):
            parser = subparsers.add_parser("show-sandbox", parents=[registry_options()])
            parser.set_defaults(handler=show)
    ''',
}


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sandbox-site")
    write_distribution(folder, "acme-sandboxed", "1.0.0", toolsets={"sandboxed": "acme_sandboxed"},
                       files=SANDBOXED)
    write_distribution(folder, "acme-policy", "1.0.0", plugins={"policy": "acme_policy_plugin"},
                       files=SERVE_LIKE)
    return folder


def janito(site: Path, config: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    environment = clean_env({"JANITO_CONFIG_DIR": str(config), "JANITO_TOOLSETS": "sandboxed",
                             **(env or {})}, path=[site])
    return subprocess.run([*COMMAND, *args], env=environment, cwd=config.parent,
                          capture_output=True, text=True, timeout=60, check=False)


def rows(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    assert done.returncode == 0, done
    return {row["name"]: row for row in json.loads(done.stdout) if row["name"]}


# -- reading the setting ------------------------------------------------------------------


def test_the_default_is_workspace_write(isolated: Path) -> None:
    policy = sandbox_policy()
    assert (policy.name, policy.source) == (DEFAULT_POLICY, "default") == ("workspace-write",
                                                                         "default")
    assert policy.confined and policy.workspace_writable and not policy.network


@pytest.mark.parametrize("name", POLICIES)
def test_the_environment_variable_sets_it(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, name.upper())
    policy = sandbox_policy()
    assert policy == (name, ENV_VAR)
    assert policy.confined == (name != "off")
    assert policy.workspace_writable == (name != "read-only")
    assert policy.network == (name in ("workspace-write+network", "off"))


def test_the_configuration_file_sets_it(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    config = isolated / CONFIG_FILE
    config.write_text(json.dumps({"sandbox": "read-only", "other": 1}), encoding="utf-8")
    assert sandbox_policy() == ("read-only", str(config))
    monkeypatch.setenv(ENV_VAR, "off")  # the variable (and so --sandbox) outranks the file
    assert sandbox_policy().name == "off"
    monkeypatch.delenv(ENV_VAR)
    config.write_text(json.dumps({"unrelated": True}), encoding="utf-8")
    assert sandbox_policy() == (DEFAULT_POLICY, "default")


@pytest.mark.parametrize(("content", "words"), [
    ('{"sandbox": "sometimes"}', "not one of"),
    ('{"sandbox": 3}', "must be a string"),
    ('["off"]', "JSON object"),
    ("{broken", "not valid JSON"),
])
def test_a_bad_setting_is_an_error_naming_the_file(isolated: Path, content: str,
                                                    words: str) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / CONFIG_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(SandboxPolicyError, match=words) as caught:
        sandbox_policy()
    assert str(isolated / CONFIG_FILE) in str(caught.value)


def test_a_bad_environment_value_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "nope")
    with pytest.raises(SandboxPolicyError, match=f"{ENV_VAR} sets the sandbox policy 'nope'"):
        sandbox_policy()


# -- the command ------------------------------------------------------------------------


def test_janito_tools_shows_the_status_of_tools_that_give_one(site: Path, tmp_path: Path) -> None:
    found = rows(janito(site, tmp_path / "config", "tools", "-t", "sandboxed", "--json"))
    assert found["ShowPolicy"]["sandbox"] == "workspace-write (default)"
    assert "sandbox" not in found["RunsNothing"]
    assert found["BrokenStatus"]["sandbox"].startswith("unknown: sandbox_status() raised "
                                                       "RuntimeError: status on fire")
    text = janito(site, tmp_path / "config", "tools", "-t", "sandboxed")
    assert text.returncode == 0, text
    section = text.stdout.split("Sandbox of the code they run:\n", 1)[1]
    assert "ShowPolicy" in section and "workspace-write (default)" in section
    assert "RunsNothing" not in section


@pytest.mark.parametrize("args", [
    ("--sandbox", "read-only", "tools"),
    ("--sandbox=read-only", "tools"),
    ("tools", "--sandbox", "read-only"),
])
def test_the_option_before_or_after_the_command(site: Path, tmp_path: Path,
                                                args: tuple[str, ...]) -> None:
    done = janito(site, tmp_path / "config", *args, "-t", "sandboxed", "--json",
                  env={ENV_VAR: "off"})
    assert rows(done)["ShowPolicy"]["sandbox"] == f"read-only ({ENV_VAR})"


def test_the_option_reaches_the_call(site: Path, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / CONFIG_FILE).write_text('{"sandbox": "read-only"}', encoding="utf-8")
    from_file = janito(site, config, "run", "-t", "sandboxed", "ShowPolicy")
    assert json.loads(from_file.stdout)["policy"] == "read-only", from_file
    for args in (("--sandbox", "off", "run"), ("run", "--sandbox", "off")):
        done = janito(site, config, *args, "-t", "sandboxed", "ShowPolicy")
        assert done.returncode == 0, done
        assert json.loads(done.stdout) == {"success": True, "policy": "off"}


@pytest.mark.parametrize("args", [("--sandbox", "read-only", "show-sandbox"),
                                  ("show-sandbox", "--sandbox", "read-only")])
def test_the_option_reaches_plugin_commands(site: Path, tmp_path: Path,
                                            args: tuple[str, ...]) -> None:
    """Such as `janito mcp serve`, whose calls run in the same process."""
    done = janito(site, tmp_path / "config", *args)
    assert done.returncode == 0, done
    assert done.stdout == "read-only\n"
    assert janito(site, tmp_path / "config", "show-sandbox").stdout == "workspace-write\n"


@pytest.mark.parametrize("args", [("--sandbox", "bogus", "tools"), ("--sandbox",),
                                  ("tools", "--sandbox", "bogus")])
def test_an_unknown_policy_is_a_usage_error(site: Path, tmp_path: Path,
                                            args: tuple[str, ...]) -> None:
    done = janito(site, tmp_path / "config", *args)
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert "read-only" in done.stderr and "workspace-write+network" in done.stderr


def test_help_names_the_option(site: Path, tmp_path: Path) -> None:
    done = janito(site, tmp_path / "config", "--help")
    assert done.returncode == 0
    assert "--sandbox POLICY" in done.stdout
