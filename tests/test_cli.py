"""The ``janito`` command, run for real: a subprocess per invocation, real distributions.

Every test starts the installed console script (or ``python -m janito_core.cli`` where the
script is missing) with ``PYTHONPATH`` naming folders that hold real distributions: the
testkit toolset of ``conftest.py`` and the small ``acme-*`` distributions written below
(the two broken plugins by ``helpers/faults.py``). Each invocation gets a private
``JANITO_CONFIG_DIR`` and the keyring's ``fail`` backend, so nothing here reads or writes
the settings of the person running the tests.

Other toolsets (``janito-files``, ``janito-system``) may or may not be installed next to
janito-core; assertions look only at rows of the distributions the tests wrote.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import faults
from helpers.distributions import clean_env, sources_of_testkit, write_distribution

import janito_core

_SCRIPT = Path(sys.executable).with_name("janito.exe" if os.name == "nt" else "janito")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "janito_core.cli"]
MODULE_COMMAND = [sys.executable, "-m", "janito_core.cli"]

PARALLEL = 4  # invocations at once in Janito.many

ROW_KEYS = {"name", "toolset", "distribution", "permissions", "description", "status", "reason"}
ERROR_ROW_KEYS = ROW_KEYS | {"kind"}
TOOLSET_KEYS = {"name", "distribution", "version", "location", "installed_in", "autoload", "allowed",
                "loaded", "tools", "error"}


# -- the distributions --------------------------------------------------------------------

BROKEN = {
    "acme_broken/__init__.py": '''
        """A toolset whose package cannot be imported."""
        raise ImportError("acme_broken needs the frobnicate library")
    ''',
}

ODD = {
    "acme_odd/__init__.py": '"""A toolset with one good tool, one broken module, one odd tool."""\n',
    "acme_odd/fine.py": '''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class Fine(BaseTool):
            """Work fine although a sibling module is broken."""

            def run(self) -> dict[str, Any]:
                return {"success": True}
    ''',
    "acme_odd/exploding.py": '''
        raise RuntimeError("the exploding module blew up")
    ''',
    "acme_odd/unresolved.py": '''
        from __future__ import annotations

        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class Unresolved(BaseTool):
            """Name a type that does not exist in its annotations."""

            def run(self, value: NoSuchType) -> dict[str, Any]:  # noqa: F821
                """Take it.

                Args:
                    value: Something.
                """
                return {"success": True}
    ''',
}


def _one_tool_package(package: str, tool_name: str, doc: str, permissions: str = "") -> dict[str, str]:
    return {
        f"{package}/__init__.py": f'"""The {package} package."""\n',
        f"{package}/tools.py": f'''
            from typing import Any

            from janito_core import BaseTool, tool


            @tool(permissions="{permissions}")
            class {tool_name}(BaseTool):
                """{doc}"""

                def run(self) -> dict[str, Any]:
                    return {{"success": True, "from": "{package}"}}
        ''',
    }


MARKER = {
    "acme_marker/__init__.py": '''
        """Leave a file behind when imported, so a test can see whether it was."""
        import os
        from pathlib import Path

        Path(os.environ["ACME_MARKER_DIR"], "imported").write_text("acme_marker", encoding="utf-8")
    ''',
    "acme_marker/probe.py": '''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class MarkerTool(BaseTool):
            """Exist only once the marker toolset is loaded."""

            def run(self) -> dict[str, Any]:
                return {"success": True}
    ''',
}

HELLO_PLUGIN = {
    "acme_hello_plugin.py": '''
        """A hook plugin that adds the `janito hello` subcommand."""
        import argparse
        import json
        import sys

        from janito_core import hookimpl
        from janito_core.cli import build_registry, registry_options


        def hello(args: argparse.Namespace) -> int:
            registry = build_registry(args)
            sys.stdout.write(json.dumps({"greeting": f"hello {args.who}",
                                         "tools": registry.names()}) + "\\n")
            return 4 if args.fail else 0


        @hookimpl
        def janito_register_commands(subparsers):
            parser = subparsers.add_parser("hello", parents=[registry_options()],
                                           help="greet someone")
            parser.add_argument("who")
            parser.add_argument("--fail", action="store_true")
            parser.set_defaults(handler=hello)
    ''',
}

GUARD_PLUGIN = {
    "acme_guard_plugin.py": '''
        """A hook plugin that refuses one tool and crashes on another."""
        from janito_core import hookimpl


        @hookimpl(tryfirst=True)
        def janito_tool_call(call):
            if call.name == "RunThing":
                return call.refuse("the guard does not allow commands")
            if call.name == "ChattyNone":
                raise RuntimeError("the guard crashed")
            return None
    ''',
}


FORMS = {
    "acme_forms/__init__.py": '"""Tools for checking how `janito run` turns options into arguments."""\n',
    "acme_forms/echo.py": '''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class Echo(BaseTool):
            """Return the arguments it received."""

            def run(self, max_lines: int = 1, paths: list[str] | None = None, verbose: bool = False,
                    text: str = "", tool: str = "", work: str = "", ar: str = "",
                    names: str | list[str] = "") -> dict[str, Any]:
                """Echo.

                Args:
                    max_lines: A number.
                    paths: Several strings.
                    verbose: A flag.
                    text: Any text.
                    tool: A parameter whose name starts like --toolset.
                    work: A parameter whose name starts like --workspace.
                    ar: A parameter whose name starts like --args.
                    names: One string or several.
                """
                return {"success": True, "received": {
                    "max_lines": max_lines, "paths": paths, "verbose": verbose, "text": text,
                    "tool": tool, "work": work, "ar": ar, "names": names}}
    ''',
    "acme_forms/loud.py": '''
        from typing import Any

        from janito_core import BaseTool, tool

        print("acme_forms.loud talks on stdout while imported")


        @tool()
        class Loud(BaseTool):
            """Print on stdout instead of reporting progress."""

            def run(self) -> dict[str, Any]:
                print("Loud talks on stdout while running")
                return {"success": True}
    ''',
}

QUIET = {
    "acme_quiet/__init__.py": '"""A toolset that cannot work yet, and says so once."""\n',
    "acme_quiet/mail.py": '''
        from typing import Any

        from janito_core import BaseTool, tool

        #: nothing configured yet is worth a note, not an error
        janito_load_notes = ["no mailbox is configured yet"]


        class _NeedsMailbox(BaseTool):
            @classmethod
            def should_load(cls) -> bool:
                return cls.skip("no mailbox is configured")

            def run(self) -> dict[str, Any]:
                return {"success": True}


        @tool()
        class ReadMail(_NeedsMailbox):
            """Read mail."""


        @tool()
        class SendMail(_NeedsMailbox):
            """Send mail."""


        @tool()
        class CountMail(_NeedsMailbox):
            """Count mail."""
    ''',
}


SLOPPY = {
    "acme_sloppy/__init__.py": '"""Tools a model would struggle with: nothing in them is wrong for Python."""\n',
    "acme_sloppy/sloppy.py": '''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class Sloppy(BaseTool):
            def run(self, count, label: str = "") -> dict[str, Any]:
                return {"success": True}
    ''',
}

EMPTY = {
    "acme_empty/__init__.py": '"""A toolset whose one tool sits where janito does not look."""\n',
    "acme_empty/_hidden.py": '''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool()
        class Hidden(BaseTool):
            """Never found: modules starting with _ are helpers."""

            def run(self) -> dict[str, Any]:
                return {"success": True}
    ''',
}


AUTOLOADED = {
    **_one_tool_package("acme_autofiles", "AutoFiles", "Arrive without -t."),
    "acme_autosystem/__init__.py": '''
        raise ImportError("acme_autosystem is broken on purpose")
    ''',
}


@dataclass(frozen=True)
class Sites:
    """Folders of distributions; each goes on PYTHONPATH only where a test wants it."""

    broken: Path  # acme-broken (package fails to import), acme-odd (a module fails, odd tool)
    clash: Path  # acme-clash-one and acme-clash-two both advertise the toolset "clash"
    dupe: Path  # acme-dupe: toolset "dupe" defines a second ReadNote
    marker: Path  # acme-marker: importing it writes $ACME_MARKER_DIR/imported
    hello: Path  # acme-hello: janito.plugins entry point adding `janito hello`
    raising: Path  # acme-raising (command hook raises), acme-unloadable (module missing)
    guard: Path  # acme-guard: janito_tool_call refuses RunThing, raises on ChattyNone
    autoload: Path  # acme-files and acme-system advertise the autoload names; system is broken
    forms: Path  # acme-forms: toolset "forms": Echo for the --name value form of run, and Loud
    quiet: Path  # acme-quiet: toolset "quiet": three tools skipped for one reason, and a note
    sloppy: Path  # acme-sloppy: Sloppy without docstrings or a type; acme-empty: no tool found


def build_sites(root: Path) -> Sites:
    """Write every distribution above under ``root``, one folder per group."""
    folders = {name: root / name for name in Sites.__dataclass_fields__}
    write_distribution(folders["broken"], "acme-broken", "0.1.0",
                       toolsets={"broken": "acme_broken"}, files=BROKEN)
    write_distribution(folders["broken"], "acme-odd", "2.0.0", toolsets={"odd": "acme_odd"}, files=ODD)
    write_distribution(folders["clash"], "acme-clash-two", "1.0.0", toolsets={"clash": "acme_clash_two"},
                       files=_one_tool_package("acme_clash_two", "ClashTwo", "From the second."))
    write_distribution(folders["clash"], "acme-clash-one", "1.0.0", toolsets={"clash": "acme_clash_one"},
                       files=_one_tool_package("acme_clash_one", "ClashOne", "From the first."))
    write_distribution(folders["dupe"], "acme-dupe", "0.3.0", toolsets={"dupe": "acme_dupe"},
                       files=_one_tool_package("acme_dupe", "ReadNote", "A second ReadNote.", "r"))
    write_distribution(folders["marker"], "acme-marker", "0.0.1", toolsets={"marker": "acme_marker"},
                       files=MARKER)
    write_distribution(folders["hello"], "acme-hello", "1.0.0", plugins={"hello": "acme_hello_plugin"},
                       files=HELLO_PLUGIN)
    faults.raising_plugin(folders["raising"], "acme-raising", hooks=["janito_register_commands"])
    faults.unimportable_plugin(folders["raising"], "acme-unloadable", module="acme_not_there")
    write_distribution(folders["guard"], "acme-guard", "1.0.0", plugins={"guard": "acme_guard_plugin"},
                       files=GUARD_PLUGIN)
    write_distribution(folders["autoload"], "acme-files", "0.5.0", toolsets={"files": "acme_autofiles"},
                       files={k: v for k, v in AUTOLOADED.items() if k.startswith("acme_autofiles/")})
    write_distribution(folders["autoload"], "acme-system", "0.5.0", toolsets={"system": "acme_autosystem"},
                       files={k: v for k, v in AUTOLOADED.items() if k.startswith("acme_autosystem/")})
    write_distribution(folders["forms"], "acme-forms", "1.0.0", toolsets={"forms": "acme_forms"},
                       files=FORMS)
    write_distribution(folders["quiet"], "acme-quiet", "1.0.0", toolsets={"quiet": "acme_quiet"},
                       files=QUIET)
    write_distribution(folders["sloppy"], "acme-sloppy", "1.0.0", toolsets={"sloppy": "acme_sloppy"},
                       files=SLOPPY)
    write_distribution(folders["sloppy"], "acme-empty", "1.0.0", toolsets={"empty": "acme_empty"},
                       files=EMPTY)
    return Sites(**folders)


@pytest.fixture(scope="session")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    return build_sites(tmp_path_factory.mktemp("cli-sites"))


# -- running the command ------------------------------------------------------------------


@dataclass(repr=False)
class Ran:
    """One finished invocation."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    def json(self) -> Any:
        try:
            return json.loads(self.out)
        except ValueError as exc:  # pragma: no cover - shown only when a test fails
            raise AssertionError(f"stdout of janito {' '.join(self.args)} is not JSON: {exc}\n"
                                 f"stdout:\n{self.out}\nstderr:\n{self.err}") from None

    def __repr__(self) -> str:  # what an assertion message shows
        return (f"janito {' '.join(self.args)} -> exit {self.code}\n--- stdout\n{self.out}"
                f"--- stderr\n{self.err}")


@dataclass
class Janito:
    """Runs ``janito`` with the given distribution folders on PYTHONPATH, in ``cwd``."""

    path: list[Path]
    cwd: Path
    config: Path
    env: dict[str, str] = field(default_factory=dict)
    command: Sequence[str] = tuple(COMMAND)

    def __call__(self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None,
                 path: Sequence[Path] = (), cwd: Path | None = None) -> Ran:
        environment = clean_env({"JANITO_CONFIG_DIR": str(self.config), **self.env, **(env or {})},
                                path=[*path, *self.path])
        completed = subprocess.run(
            [*self.command, *args], env=environment, cwd=cwd or self.cwd, input=stdin or "",
            capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=60,
            check=False,
        )
        return Ran(tuple(args), completed.returncode, completed.stdout, completed.stderr)

    def many(self, commands: Mapping[str, Sequence[str]], **options: Any) -> dict[str, Ran]:
        """Run independent invocations a few at a time; the results by the same keys."""
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            futures = {key: pool.submit(self, *args, **options) for key, args in commands.items()}
            return {key: future.result() for key, future in futures.items()}


def make_janito(testkit_dir: Path, workspace: Path, tmp_path: Path) -> Janito:
    """``janito(...)`` with the testkit distribution visible, run in an empty workspace."""
    return Janito(path=[testkit_dir], cwd=workspace, config=tmp_path / "janito-config")


@pytest.fixture
def janito(testkit_dir: Path, workspace: Path, tmp_path: Path) -> Janito:
    return make_janito(testkit_dir, workspace, tmp_path)


def rows_of(rows: list[dict[str, Any]], *toolsets: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["toolset"] in toolsets]


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in rows if r["name"] is not None}


def errors_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["status"] == "error"]


TESTKIT_TOOLS = {
    # name: (permissions, status with every privilege granted)
    "ChattyNone": ("", "loaded"), "ChattyRead": ("r", "loaded"), "ChattyWrite": ("w", "loaded"),
    "ChattyExec": ("x", "loaded"), "NeedsToken": ("r", "skipped"), "SaysNo": ("", "skipped"),
    "LoadRaises": ("", "skipped"), "Raises": ("", "loaded"), "Exits": ("", "loaded"),
    "Escapes": ("", "loaded"), "ReturnsList": ("", "loaded"), "ReturnsNoSuccess": ("", "loaded"),
    "ReturnsBadSuccess": ("", "loaded"), "ReturnsObject": ("", "loaded"), "Huge": ("", "loaded"),
    "NeedsWorkspaceError": ("", "loaded"), "ReadNote": ("r", "loaded"), "WriteNote": ("w", "loaded"),
    "RunThing": ("x", "loaded"), "Everything": ("rwx", "loaded"), "Nothing": ("", "loaded"),
    "Typed": ("", "loaded"),
}


# -- the command itself -------------------------------------------------------------------


def test_version_help_and_no_command(janito: Janito) -> None:
    module = Janito(janito.path, janito.cwd, janito.config, command=MODULE_COMMAND)
    ran = janito.many({
        "version": ["--version"], "help": ["--help"], "bare": [], "wrong": ["frobnicate"],
        **{command: [command, "--help"] for command in ("tools", "run", "schema", "secrets")},
    })
    assert ran["version"].code == 0, ran["version"]
    assert ran["version"].out.strip() == f"janito {janito_core.__version__}"
    assert module("--version").out == ran["version"].out

    helped = ran["help"]
    assert helped.code == 0, helped
    assert helped.out.startswith("usage: janito")
    for command in ("tools", "toolsets", "schema", "run", "secrets", "plugins", "new-toolset"):
        assert command in helped.out

    bare = ran["bare"]
    assert bare.code == 2, bare
    assert bare.out == ""
    assert "usage: janito" in bare.err

    wrong = ran["wrong"]
    assert wrong.code == 2, wrong
    assert "invalid choice" in wrong.err and wrong.out == ""

    for command in ("tools", "run", "schema", "secrets"):
        sub = ran[command]
        assert sub.code == 0 and sub.out.startswith(f"usage: janito {command}"), sub


def test_a_bad_option_is_a_usage_error(janito: Janito) -> None:
    cases = [["tools", "--no-such-option"], ["toolsets", "-q"], ["schema", "--format", "xml"],
             ["run"], ["secrets"], ["secrets", "show", "x"]]
    for ran in janito.many({" ".join(args): args for args in cases}).values():
        assert ran.code == 2, ran
        assert ran.out == "", ran


# -- janito tools -------------------------------------------------------------------------


def test_tools_json_rows_with_every_privilege(janito: Janito) -> None:
    ran = janito("tools", "-t", "testkit", "--json")
    assert ran.code == 0, ran
    rows = ran.json()
    assert isinstance(rows, list)
    for row in rows:
        # a tool that runs code may add how it is confined (BaseTool.sandbox_status)
        keys = set(row) - ({"sandbox"} if row["status"] != "error" else set())
        assert keys == (ERROR_ROW_KEYS if row["status"] == "error" else ROW_KEYS), row
    testkit = rows_of(rows, "testkit")
    assert [r["name"] for r in testkit if r["status"] != "error"] == list(TESTKIT_TOOLS)
    for row in testkit:
        permissions, status = TESTKIT_TOOLS[row["name"]]
        assert row["distribution"] == "janito-testkit"
        assert row["permissions"] == permissions
        assert row["status"] == status, row
        assert isinstance(row["description"], str) and row["description"], row
        assert (row["reason"] is None) == (status == "loaded"), row
    found = by_name(testkit)
    assert found["ReadNote"]["description"] == "Read a note from the workspace."
    assert found["NeedsToken"]["reason"] == "the testkit_token secret is not set"
    assert found["SaysNo"]["reason"] == "should_load() returned False"
    assert found["LoadRaises"]["reason"] == "should_load() raised OSError: probe device missing"
    assert "_HiddenHelperTool" not in found and "HiddenHelperTool" not in found
    assert errors_of(testkit) == []


def test_a_secret_in_the_environment_lets_a_gated_tool_load(janito: Janito) -> None:
    rows = janito("tools", "-t", "testkit", "--json",
                  env={"JANITO_SECRET_TESTKIT_TOKEN": "t0k3n"}).json()
    row = by_name(rows)["NeedsToken"]
    assert (row["status"], row["reason"]) == ("loaded", None)


def test_tools_denied_rows_for_each_privilege_combination(janito: Janito) -> None:
    combinations = ["r", "w", "x", "rw", "rx", "wx", "rwx"]
    ran = janito.many({flags: ["tools", "-t", "testkit", "--json", *[f"-{f}" for f in flags]]
                       for flags in combinations})
    words = {"r": "read (-r)", "w": "write (-w)", "x": "execute (-x)"}
    for flags in combinations:
        assert ran[flags].code == 0, ran[flags]
        found = by_name(rows_of(ran[flags].json(), "testkit"))
        for name, (permissions, unprivileged_status) in TESTKIT_TOOLS.items():
            row = found[name]
            if unprivileged_status == "skipped":
                assert row["status"] == "skipped", row  # skipped wins: it cannot work here at all
                continue
            missing = [letter for letter in permissions if letter not in flags]
            if not missing:
                assert (row["status"], row["reason"]) == ("loaded", None), (flags, row)
            else:
                assert row["status"] == "denied", (flags, row)
                expected = f"needs {', '.join(words[m] for m in missing)} permission, which is not granted"
                assert row["reason"] == expected, (flags, row)


def test_combined_and_separate_privilege_flags_agree(janito: Janito) -> None:
    ran = janito.many({"together": ["tools", "-t", "testkit", "--json", "-rw"],
                       "apart": ["tools", "-t", "testkit", "--read", "--write", "--json"]})
    together, apart = ran["together"].json(), ran["apart"].json()
    assert together == apart
    assert by_name(together)["Everything"]["reason"] == (
        "needs execute (-x) permission, which is not granted")


def test_tools_human_output(janito: Janito) -> None:
    ran = janito("tools", "-t", "testkit", "-r")
    assert ran.code == 0, ran
    lines = ran.out.splitlines()
    header = lines[0]
    assert header.split() == ["TOOL", "TOOLSET", "PERMS", "DESCRIPTION"]
    columns = [header.index(title) for title in ("TOOLSET", "PERMS", "DESCRIPTION")]
    body = lines[1:lines.index("")]
    assert [line.split()[0] for line in body if line.split()[1] == "testkit"] == [
        n for n, (p, s) in TESTKIT_TOOLS.items() if s == "loaded" and set(p) <= {"r"}
    ]
    for line in body:
        for column in columns:  # every column starts where its title does
            assert line[column - 2: column] == "  " and line[column] != " ", (line, column)
    read_note = next(line for line in body if line.startswith("ReadNote "))
    assert read_note.split(None, 3) == ["ReadNote", "testkit", "r", "Read a note from the workspace."]
    nothing = next(line for line in body if line.startswith("Nothing "))
    assert nothing.split()[2] == "-"  # no permission is shown as a dash
    text = ran.out
    skipped = text[text.index("\nSkipped:\n"):text.index("\nDenied:\n")]
    assert "NeedsToken" in skipped and "the testkit_token secret is not set" in skipped
    denied = text[text.index("\nDenied:\n"):]
    assert "WriteNote" in denied and "needs write (-w) permission, which is not granted" in denied
    assert "Everything" in denied and "needs write (-w), execute (-x) permission" in denied
    assert "ReadNote" not in denied
    assert "LoadRaises" in ran.err  # a tool whose should_load raised is a failure on stderr


def test_a_shared_skip_reason_is_said_once_and_a_note_is_no_error(janito: Janito,
                                                                   sites: Sites) -> None:
    ran = janito("tools", "-t", "quiet", "--strict", path=[sites.quiet])
    assert ran.code == 0, ran  # a note is no failure, even under --strict
    skipped = ran.out[ran.out.index("\nSkipped:\n"):ran.out.index("\nNotes:\n")]
    assert skipped.count("no mailbox is configured") == 1, skipped
    assert "all 3 tools" in skipped and "ReadMail" not in skipped
    notes = ran.out[ran.out.index("\nNotes:\n"):]
    assert "quiet" in notes and "acme-quiet" in notes and "no mailbox is configured yet" in notes
    assert "Errors:" not in ran.out
    rows = janito("tools", "-t", "quiet", "--json", path=[sites.quiet])
    assert rows.code == 0, rows
    quiet = [r for r in rows.json() if r.get("toolset") == "quiet"]
    assert {r["name"] for r in quiet} == {"ReadMail", "SendMail", "CountMail"}  # no note row
    assert "note: toolset 'quiet' (acme-quiet): no mailbox is configured yet" in rows.err


def test_a_toolset_that_fails_to_import(janito: Janito, sites: Sites) -> None:
    ran = janito("tools", "-t", "broken", "-t", "testkit", "--json", path=[sites.broken])
    assert ran.code == 0, ran
    rows = ran.json()
    errors = rows_of(errors_of(rows), "broken")
    assert errors == [{
        "name": None, "toolset": "broken", "distribution": "acme-broken", "permissions": None,
        "description": None, "status": "error", "kind": "import",
        "reason": "cannot import acme_broken: ImportError: acme_broken needs the frobnicate library",
    }]
    assert rows.index(errors[0]) > max(rows.index(r) for r in rows if r["status"] != "error")
    assert by_name(rows)["ReadNote"]["status"] == "loaded"  # the rest keep working
    assert ("janito: error: toolset 'broken' (acme-broken): cannot import acme_broken: "
            "ImportError: acme_broken needs the frobnicate library") in ran.err.splitlines()

    strict = janito("tools", "-t", "broken", "--json", "--strict", path=[sites.broken])
    assert strict.code == 1, strict
    assert strict.json() == [r for r in rows if r["toolset"] != "testkit"]

    human = janito("tools", "-t", "broken", path=[sites.broken])
    assert human.code == 0, human
    assert "\nErrors:\n" in human.out
    errors_part = human.out[human.out.index("\nErrors:\n"):]
    assert "broken" in errors_part and "acme-broken" in errors_part
    assert "acme_broken needs the frobnicate library" in errors_part
    assert "acme_broken needs the frobnicate library" in human.err


def test_a_module_that_fails_and_a_tool_that_cannot_be_described(janito: Janito, sites: Sites) -> None:
    ran = janito("tools", "-t", "odd", "--json", path=[sites.broken])
    assert ran.code == 0, ran
    rows = rows_of(ran.json(), "odd")
    found = by_name(rows)
    assert found["Fine"]["status"] == "loaded"
    assert found["Fine"]["distribution"] == "acme-odd"
    assert found["Unresolved"]["status"] == "error"  # its code is broken: no environment mends it
    assert "NoSuchType" in found["Unresolved"]["reason"]
    [error] = [r for r in errors_of(rows) if r["name"] is None]
    assert error["kind"] == "import" and error["distribution"] == "acme-odd"
    assert error["reason"] == "cannot import acme_odd.exploding: RuntimeError: the exploding module blew up"
    assert "the exploding module blew up" in ran.err
    assert "Unresolved" in ran.err  # an unresolvable annotation is a fault, summarised too
    assert janito("tools", "-t", "odd", "--strict", path=[sites.broken]).code == 1
    human = janito("tools", "-t", "odd", path=[sites.broken])
    before, _, listed = human.out.partition("\nErrors:\n")
    assert "Unresolved: Unresolved.run() has an annotation that cannot be resolved" in listed
    assert "Unresolved" not in before  # neither loaded nor skipped
    called = janito("run", "-t", "odd", "Unresolved", "--args", '{"value": 1}', path=[sites.broken])
    assert called.code == 1 and called.json()["error_type"] == "tool_unavailable"


def test_strict_counts_tools_whose_should_load_raised(janito: Janito) -> None:
    assert janito("tools", "-t", "testkit", "--strict").code == 1  # LoadRaises
    assert janito("toolsets", "-t", "testkit", "--strict").code == 1
    clean = janito("tools", "--strict", "--json")  # testkit is on demand: not loaded, nothing failed
    assert clean.code == 0, clean
    assert rows_of(clean.json(), "testkit") == []


def test_strict_fails_tools_a_model_could_not_be_told_about(janito: Janito, sites: Sites) -> None:
    ran = janito.many({"plain": ["tools", "-t", "sloppy", "--json"],
                       "strict": ["tools", "-t", "sloppy", "--json", "--strict"],
                       "clean": ["tools", "-t", "testkit", "-t", "sloppy", "--strict", "-r"]},
                      path=[sites.sloppy])
    plain = ran["plain"]
    assert plain.code == 0, plain
    assert by_name(plain.json())["Sloppy"]["status"] == "loaded"  # it works: it is badly told
    assert "Sloppy" not in plain.err  # only --strict looks at how a tool is described
    strict = ran["strict"]
    assert strict.code == 1, strict
    assert strict.json() == plain.json()
    said = [line for line in strict.err.splitlines() if "Sloppy" in line]
    where = "janito: error: tool Sloppy (acme-sloppy): "
    assert said == [
        f"{where}Sloppy has no docstring: the model sees no description",
        f"{where}parameter 'count' has no type annotation: any value is accepted",
        f"{where}parameter 'count' is not documented in run()'s docstring",
        f"{where}parameter 'label' is not documented in run()'s docstring",
    ], strict.err
    # Every tool janito's test toolset loads is described; only Sloppy (and LoadRaises,
    # whose should_load raised) fail it.
    assert not [line for line in ran["clean"].err.splitlines()
                if "error: tool" in line and "Sloppy" not in line and "LoadRaises" not in line]


def test_a_toolset_with_no_tools_is_an_error(janito: Janito, sites: Sites) -> None:
    ran = janito.many({"tools": ["tools", "-t", "empty", "--json"],
                       "strict": ["tools", "-t", "empty", "--strict"],
                       "toolsets": ["toolsets", "-t", "empty", "--json", "--strict"]},
                      path=[sites.sloppy])
    assert ran["tools"].code == 0, ran["tools"]
    [error] = rows_of(errors_of(ran["tools"].json()), "empty")
    reason = ("toolset 'empty' has no tools: no public module of acme_empty defines a @tool "
              "class (modules whose names start with _ are not scanned)")
    assert error == {"name": None, "toolset": "empty", "distribution": "acme-empty",
                     "permissions": None, "description": None, "status": "error",
                     "kind": "empty", "reason": reason}
    assert f"janito: error: toolset 'empty' (acme-empty): {reason}" in ran["tools"].err
    assert ran["strict"].code == 1, ran["strict"]
    assert ran["toolsets"].code == 1, ran["toolsets"]
    [row] = [r for r in ran["toolsets"].json() if r["name"] == "empty"]
    assert row["error"] == reason and row["tools"] == []


def test_two_distributions_advertising_one_toolset(janito: Janito, sites: Sites) -> None:
    ran = janito("tools", "-t", "clash", "--json", path=[sites.clash])
    assert ran.code == 0, ran
    rows = rows_of(ran.json(), "clash")
    assert [r["name"] for r in rows if r["status"] == "loaded"] == ["ClashOne"]
    assert by_name(rows)["ClashOne"]["distribution"] == "acme-clash-one"
    [error] = errors_of(rows)
    assert error["kind"] == "clash"
    assert error["distribution"] == "acme-clash-one, acme-clash-two"
    assert "acme-clash-one (used)" in error["reason"] and "acme-clash-two (ignored)" in error["reason"]
    assert "acme-clash-two" in ran.err
    # The clash is found by listing alone: it shows without -t too, and --strict sees it.
    listed = janito("tools", "--json", "--strict", path=[sites.clash])
    assert listed.code == 1, listed
    assert rows_of(errors_of(listed.json()), "clash") == [error]


def test_two_toolsets_defining_one_tool_name(janito: Janito, sites: Sites) -> None:
    first = janito("tools", "-t", "testkit", "-t", "dupe", "--json", path=[sites.dupe])
    assert first.code == 0, first
    rows = first.json()
    read_notes = [r for r in rows if r["name"] == "ReadNote"]
    assert len(read_notes) == 1 and read_notes[0]["toolset"] == "testkit"
    [error] = rows_of(errors_of(rows), "dupe")
    assert error["kind"] == "clash" and error["distribution"] == "acme-dupe"
    assert "ReadNote" in error["reason"] and "janito-testkit" in error["reason"]
    assert "ReadNote" in first.err

    # -t order decides: the toolset loaded first keeps the name.
    second = janito("tools", "-t", "dupe", "-t", "testkit", "--json", path=[sites.dupe])
    read_notes = [r for r in second.json() if r["name"] == "ReadNote"]
    assert [r["toolset"] for r in read_notes] == ["dupe"]
    [error] = rows_of(errors_of(second.json()), "testkit")
    assert error["distribution"] == "janito-testkit"
    run = janito("run", "-t", "dupe", "-t", "testkit", "ReadNote", path=[sites.dupe])
    assert run.json() == {"success": True, "from": "acme_dupe"}


def test_run_says_what_failed_to_load_and_names_it_as_the_cause(janito: Janito,
                                                                 sites: Sites) -> None:
    ran = janito.many({
        "module": ["run", "-t", "odd", "Exploding"],
        "package": ["run", "-t", "broken", "Frobnicate"],
        "help": ["run", "-t", "odd", "Exploding", "--help"],
        "fine": ["run", "-t", "odd", "Fine"],
    }, path=[sites.broken])
    ran["clash"] = janito("run", "-t", "clash", "ClashTwo", path=[sites.clash])
    exploded = "cannot import acme_odd.exploding: RuntimeError: the exploding module blew up"
    # The module named after the tool failed to import: that is the cause, said as such.
    module = ran["module"]
    assert module.code == 1, module
    result = module.json()
    assert result["error_type"] == "unknown_tool"
    assert result["error"] == f"Exploding could not be loaded: toolset 'odd' (acme-odd): {exploded}"
    assert result["load_errors"] == [{"toolset": "odd", "distribution": "acme-odd",
                                      "kind": "import", "reason": exploded}]
    assert module.err.splitlines() == [f"janito: error: toolset 'odd' (acme-odd): {exploded}",
                                       f"janito: {result['error']}"]
    assert ran["help"].code == 2 and "Exploding could not be loaded: toolset 'odd'" in ran["help"].err
    # A whole package failed: its tools are unknown, and the failure is the likely cause.
    package = ran["package"].json()
    assert package["error"].startswith("there is no tool called 'Frobnicate'; it may be missing "
                                       "because a toolset failed to load: toolset 'broken' "
                                       "(acme-broken): cannot import acme_broken: ImportError")
    assert [e["toolset"] for e in package["load_errors"]] == ["broken"]
    assert "acme_broken needs the frobnicate library" in ran["package"].err
    # A toolset name two distributions advertise: the one ignored has the tool.
    clash = ran["clash"].json()
    assert clash["error_type"] == "unknown_tool"
    assert [(e["kind"], e["distribution"]) for e in clash["load_errors"]] == [
        ("clash", "acme-clash-one, acme-clash-two")]
    assert "acme-clash-two (ignored)" in ran["clash"].err
    # The call of a tool that did load still runs, the failure beside it said on stderr.
    assert ran["fine"].code == 0 and ran["fine"].json() == {"success": True}
    assert ran["fine"].err.splitlines() == [f"janito: error: toolset 'odd' (acme-odd): {exploded}"]


def test_run_says_when_a_tool_name_belongs_to_two_toolsets(janito: Janito, sites: Sites) -> None:
    run = janito("run", "-t", "testkit", "-t", "dupe", "ReadNote", "--filepath", "x",
                 path=[sites.dupe])
    assert run.json()["error_type"] == "not_found"  # testkit's ReadNote ran: it was first
    [line] = run.err.splitlines()
    assert line.startswith("janito: error: toolset 'dupe' (acme-dupe): tool 'ReadNote' of "
                           "toolset 'dupe' (acme-dupe) has the name of a tool already loaded "
                           "from toolset 'testkit' (janito-testkit)"), run.err


def test_a_plugin_that_cannot_load_is_an_error_row(janito: Janito, sites: Sites) -> None:
    ran = janito("tools", "-t", "testkit", "--json", path=[sites.raising])
    assert ran.code == 0, ran
    [error] = [r for r in errors_of(ran.json()) if r["distribution"] == "acme-unloadable"]
    assert error["toolset"] is None and error["name"] is None and error["kind"] == "plugin"
    assert "acme_not_there" in error["reason"]
    assert "acme-unloadable" in ran.err
    assert by_name(ran.json())["ReadNote"]["status"] == "loaded"


def test_one_distribution_found_twice(janito: Janito, tmp_path: Path) -> None:
    copy = tmp_path / "second-site"
    write_distribution(copy, "janito-testkit", "9.9.9", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    ran = janito.many({"toolsets": ["toolsets", "--json"], "tools": ["tools", "-t", "testkit", "--json"]},
                      path=[copy])
    [row] = [r for r in ran["toolsets"].json() if r["name"] == "testkit"]
    assert row["version"] == "9.9.9"  # the first copy on sys.path, the one Python imports
    tools = ran["tools"]
    assert tools.code == 0, tools
    assert errors_of(rows_of(tools.json(), "testkit")) == []  # a warning, not an error row
    warning = next(line for line in tools.err.splitlines() if line.startswith("janito: warning:"))
    assert "janito-testkit is installed twice" in warning
    assert str(copy) in warning and str(janito.path[0]) in warning


def test_an_unknown_toolset_is_a_usage_error_with_a_suggestion(janito: Janito) -> None:
    ran = janito.many({
        **{command: [command, "-t", "testkt"] + (["Nothing"] if command == "run" else [])
           for command in ("tools", "toolsets", "schema", "run")},
        "far": ["tools", "-t", "zzzzzz"],
    })
    for command in ("tools", "toolsets", "schema", "run"):
        assert ran[command].code == 2, ran[command]
        assert ran[command].out == ""
        assert ran[command].err.strip() == (
            "janito: error: no installed toolset is called 'testkt' (did you mean testkit?)")
    assert ran["far"].code == 2 and "did you mean" not in ran["far"].err


@pytest.mark.skipif(any(importlib.util.find_spec(p) for p in ("janito_files", "janito_system")),
                    reason="janito-files or janito-system is installed and owns the autoload names")
def test_autoload_toolsets_load_without_t(janito: Janito, sites: Sites) -> None:
    ran = janito.many({"toolsets": ["toolsets", "--json"], "tools": ["tools", "--json"],
                       "strict": ["tools", "--json", "--strict"], "run": ["run", "AutoFiles"]},
                      path=[sites.autoload])
    ran.update(janito.many({"only-files": ["toolsets", "--json"], "only-files-strict": ["tools", "--strict"]},
                           path=[sites.autoload], env={"JANITO_TOOLSETS": "files"}))
    rows = {r["name"]: r for r in ran["toolsets"].json()}
    assert rows["files"] == {"name": "files", "distribution": "acme-files", "version": "0.5.0",
                             "location": str(sites.autoload / "acme_autofiles"),
                             "installed_in": str(sites.autoload),
                             "autoload": True, "allowed": True, "loaded": True, "tools": ["AutoFiles"],
                             "error": None}
    assert rows["system"]["autoload"] is True and rows["system"]["loaded"] is False
    assert rows["system"]["error"] == "cannot import acme_autosystem: ImportError: acme_autosystem is broken on purpose"
    assert rows["testkit"]["autoload"] is False and rows["testkit"]["loaded"] is False

    tools = ran["tools"]
    assert tools.code == 0, tools
    assert [(r["name"], r["status"]) for r in tools.json() if r["status"] != "error"] == [("AutoFiles", "loaded")]
    [error] = errors_of(tools.json())
    assert (error["toolset"], error["distribution"], error["kind"]) == ("system", "acme-system", "import")
    assert "acme_autosystem is broken on purpose" in tools.err
    assert ran["strict"].code == 1
    assert ran["run"].code == 0 and ran["run"].json() == {"success": True, "from": "acme_autofiles"}

    # JANITO_TOOLSETS=files: the broken autoload toolset is never imported, so nothing failed.
    rows = {r["name"]: r for r in ran["only-files"].json()}
    assert rows["files"]["loaded"] is True
    assert (rows["system"]["allowed"], rows["system"]["loaded"], rows["system"]["error"]) == (False, False, None)
    assert ran["only-files-strict"].code == 0, ran["only-files-strict"]


def test_janito_toolsets_restricts_what_may_load(janito: Janito, sites: Sites) -> None:
    path = [sites.marker, sites.broken]
    only = {"JANITO_TOOLSETS": "testkit, odd"}
    ran = janito("toolsets", "--json", "-t", "testkit", env=only, path=path)
    assert ran.code == 0, ran
    rows = {r["name"]: r for r in ran.json()}
    assert rows["testkit"]["allowed"] is True and rows["odd"]["allowed"] is True
    assert rows["marker"]["allowed"] is False and rows["broken"]["allowed"] is False
    for name in ("files", "system"):
        if name in rows:
            assert rows[name]["allowed"] is False and rows[name]["loaded"] is False

    refused = janito("tools", "-t", "marker", env=only, path=path)
    assert refused.code == 2, refused
    assert "JANITO_TOOLSETS" in refused.err and "marker" in refused.err
    assert refused.out == ""

    human = janito("toolsets", env=only, path=path)
    marker_line = next(line for line in human.out.splitlines() if line.startswith("marker "))
    assert marker_line.endswith("not allowed by JANITO_TOOLSETS")

    nothing = janito("toolsets", "--json", env={"JANITO_TOOLSETS": ""}, path=path)
    assert all(r["allowed"] is False and r["loaded"] is False for r in nothing.json())
    assert janito("tools", "-t", "testkit", env={"JANITO_TOOLSETS": ""}).code == 2


# -- janito toolsets ----------------------------------------------------------------------


def test_toolsets_json_imports_only_what_it_loads(janito: Janito, sites: Sites, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {"ACME_MARKER_DIR": str(marks)}
    path = [sites.marker, sites.broken]

    ran = janito("toolsets", "--json", env=env, path=path)
    assert ran.code == 0, ran
    rows = ran.json()
    assert [r["name"] for r in rows] == sorted(r["name"] for r in rows)
    for row in rows:
        assert set(row) == TOOLSET_KEYS, row
    mine = {r["name"]: r for r in rows if r["name"] in ("testkit", "marker", "broken", "odd")}
    # where each is installed, and the copy `import` would use: found without importing it
    places = {name: (row.pop("installed_in"), row.pop("location")) for name, row in mine.items()}
    assert places["marker"] == (str(sites.marker), str(sites.marker / "acme_marker"))
    assert places["broken"] == (str(sites.broken), str(sites.broken / "acme_broken"))
    assert places["odd"] == (str(sites.broken), str(sites.broken / "acme_odd"))
    assert places["testkit"][1] == os.path.join(places["testkit"][0], "janito_testkit")
    assert mine == {
        "testkit": {"name": "testkit", "distribution": "janito-testkit", "version": "1.2.3",
                    "autoload": False, "allowed": True, "loaded": False, "tools": [], "error": None},
        "marker": {"name": "marker", "distribution": "acme-marker", "version": "0.0.1",
                   "autoload": False, "allowed": True, "loaded": False, "tools": [], "error": None},
        "broken": {"name": "broken", "distribution": "acme-broken", "version": "0.1.0",
                   "autoload": False, "allowed": True, "loaded": False, "tools": [], "error": None},
        "odd": {"name": "odd", "distribution": "acme-odd", "version": "2.0.0",
                "autoload": False, "allowed": True, "loaded": False, "tools": [], "error": None},
    }
    for row in rows:
        assert row["autoload"] is (row["name"] in ("files", "system")), row
    assert not (marks / "imported").exists(), "listing toolsets imported acme_marker"
    assert janito("tools", "--json", env=env, path=path).code == 0
    assert not (marks / "imported").exists(), "janito tools imported an on-demand toolset"

    loaded = janito("toolsets", "--json", "-t", "marker", "-t", "broken", "-t", "odd", env=env, path=path)
    assert loaded.code == 0, loaded
    assert (marks / "imported").read_text(encoding="utf-8") == "acme_marker"
    rows = {r["name"]: r for r in loaded.json()}
    assert rows["marker"]["loaded"] is True and rows["marker"]["tools"] == ["MarkerTool"]
    assert rows["marker"]["location"] == str(sites.marker / "acme_marker")
    assert rows["marker"]["error"] is None
    assert rows["testkit"]["loaded"] is False  # on the path, not asked for
    assert rows["broken"]["loaded"] is False
    assert rows["broken"]["error"] == ("cannot import acme_broken: ImportError: "
                                       "acme_broken needs the frobnicate library")
    assert rows["odd"]["loaded"] is True  # the package loaded; one module of it did not
    assert rows["odd"]["tools"] == ["Fine"]
    assert "exploding" in rows["odd"]["error"]
    assert "acme-broken" in loaded.err


def test_toolsets_tools_lists_only_what_became_available(janito: Janito) -> None:
    rows = {r["name"]: r for r in janito("toolsets", "--json", "-t", "testkit", "-r").json()}
    expected = [n for n, (p, s) in TESTKIT_TOOLS.items() if s == "loaded" and set(p) <= {"r"}]
    assert rows["testkit"]["tools"] == expected
    human = janito("toolsets", "-t", "testkit", "-r")
    line = next(line for line in human.out.splitlines() if line.startswith("testkit "))
    assert line.split(None, 4)[1:] == ["janito-testkit", "1.2.3",
                                       str(Path(rows["testkit"]["location"])),
                                       f"loaded ({len(expected)} tools)"]


def test_toolsets_human_output(janito: Janito, sites: Sites, tmp_path: Path) -> None:
    ran = janito("toolsets", "-t", "broken", path=[sites.broken, sites.clash],
                 env={"ACME_MARKER_DIR": str(tmp_path)})
    assert ran.code == 0, ran
    lines = ran.out.splitlines()
    assert lines[0].split() == ["TOOLSET", "DISTRIBUTION", "VERSION", "LOCATION", "STATE"]
    state_column = lines[0].index("STATE")
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["odd"].split()[3] == str(sites.broken / "acme_odd")
    assert rows["testkit"][state_column:] == "available (load with -t testkit)"
    assert rows["odd"].split()[1:3] == ["acme-odd", "2.0.0"]
    assert rows["broken"][state_column:].startswith("error: cannot import acme_broken")
    assert rows["clash"].split()[1] == "acme-clash-one"
    assert "acme-clash-two (ignored)" in rows["clash"][state_column:]


def test_nothing_to_load(tmp_path: Path) -> None:
    bare = Janito(path=[], cwd=tmp_path, config=tmp_path / "config")
    ran = bare.many({"toolsets": ["toolsets"], "toolsets-json": ["toolsets", "--json"]})
    ran.update(bare.many({"tools": ["tools"], "tools-json": ["tools", "--json"]},
                         env={"JANITO_TOOLSETS": ""}))
    for done in ran.values():
        assert done.code == 0, done
    if not ran["toolsets-json"].json():  # only janito-core is installed
        assert ran["toolsets"].out == "No toolsets are installed.\n"
    assert ran["tools"].out == "No tools are loaded.\n"
    assert ran["tools-json"].json() == []


# -- --workspace ----------------------------------------------------------------------------


def test_workspace_option(janito: Janito, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "note.txt").write_text("from elsewhere", encoding="utf-8")
    (janito.cwd / "note.txt").write_text("from the current folder", encoding="utf-8")

    here = janito("run", "-t", "testkit", "ReadNote", "--filepath", "note.txt")
    assert here.json()["text"] == "from the current folder"
    there = janito("run", "-t", "testkit", "ReadNote", "--filepath", "note.txt",
                   "--workspace", str(elsewhere))
    assert there.code == 0, there
    assert there.json() == {"success": True, "filepath": "note.txt", "text": "from elsewhere"}
    root = janito("run", "--workspace", str(elsewhere), "-t", "testkit", "Nothing").json()["root"]
    assert os.path.realpath(root) == os.path.realpath(elsewhere)
    # The workspace is a boundary: the current folder is outside it.
    outside = janito("run", "-t", "testkit", "ReadNote", "--workspace", str(elsewhere),
                     "--filepath", str(janito.cwd / "note.txt"))
    assert outside.code == 1 and outside.json()["error_type"] == "outside_workspace", outside

    assert janito("tools", "--workspace", str(elsewhere), "-t", "testkit").code == 0
    for command in ("tools", "run"):
        args = [command, "--workspace", str(tmp_path / "missing")] + (["Nothing"] if command == "run" else [])
        missing = janito(*args, "-t", "testkit")
        assert missing.code == 2, missing
        assert "is not a folder" in missing.err and missing.out == ""
