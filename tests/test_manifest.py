"""Toolsets loaded from their manifests: what janito remembers of a toolset's modules.

A toolset's first load imports its modules and writes a manifest in janito's state folder;
later loads list its tools from it and import a module when one of its tools is first
called, or, for a tool with a ``should_load()`` of its own, when the registry is first
asked about it. Every answer must be the one a load without a manifest gives: the rows of
``janito tools --json``, the load errors, the calls. Each check runs janito in a fresh
interpreter against real distributions in a folder of their own, old enough (see
``_manifest.SETTLED_SECONDS``) for a manifest to be kept.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.distributions import run_python, write_distribution, write_files
from test_cli import Janito

from janito_core import _manifest
from janito_core.discovery import ToolsetSpec

LISTED = {
    "acme_listed/__init__.py": '"""Tools remembered by a manifest."""\n',
    "acme_listed/plain.py": '''
        from __future__ import annotations

        from typing import TYPE_CHECKING

        from janito_core import BaseTool, tool

        if TYPE_CHECKING:
            from acme_heavy import Query


        @tool(permissions="r")
        class ReadThing(BaseTool):
            """Read a thing.

            Longer text the model does not see in the listing.
            """

            def run(self, name: str, limit: int = 3) -> dict:
                """Read.

                Args:
                    name: Which thing.
                    limit: How many.
                """
                return {"success": True, "name": name, "limit": limit}


        @tool(permissions="w")
        class WriteThing(BaseTool):
            """Write a thing."""

            writes_paths = ("path",)

            def run(self, path: str) -> dict:
                """Write.

                Args:
                    path: Where.
                """
                return {"success": True}


        @tool(permissions="r")
        class BrokenAnnotation(BaseTool):
            """Annotated with a name that does not resolve."""

            def run(self, query: Query) -> dict:
                """Query.

                Args:
                    query: What.
                """
                return {"success": True}
    ''',
    "acme_listed/gated.py": '''
        import os

        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class NeedsKey(BaseTool):
            """Works only with ACME_KEY set."""

            @classmethod
            def should_load(cls) -> bool:
                if not os.environ.get("ACME_KEY"):
                    return cls.skip("ACME_KEY is not set")
                return True

            def run(self) -> dict:
                """Use the key."""
                return {"success": True, "key": os.environ["ACME_KEY"]}
    ''',
    "acme_listed/noted.py": '''
        import os

        from janito_core import BaseTool, tool

        janito_load_notes = [f"noted at load, ACME_NOTE={os.environ.get('ACME_NOTE', '')}"]


        @tool(permissions="r")
        class NotedThing(BaseTool):
            """A tool of a module that speaks at load."""

            def run(self) -> dict:
                """Do it."""
                return {"success": True}
    ''',
    "acme_listed/envy.py": '''
        import os

        from janito_core import BaseTool, tool

        if os.environ.get("ACME_BREAK"):
            raise RuntimeError("the environment broke this module")


        @tool(permissions="r")
        class EnvyThing(BaseTool):
            """A tool whose module imports only in some environments."""

            def run(self) -> dict:
                """Do it."""
                return {"success": True}
    ''',
    "acme_listed/broken.py": 'raise ImportError("acme_listed.broken is broken")\n',
}

CLASHING = {
    "acme_clash/__init__.py": "",
    "acme_clash/read_thing.py": '''
        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class ReadThing(BaseTool):
            """Another ReadThing."""

            def run(self) -> dict:
                """Read."""
                return {"success": True}
    ''',
}

PROBE = '''
import json, sys
from janito_core import Privileges, Registry
from janito_core.dispatch import call_tool

request = json.loads(sys.argv[1])
registry = Registry(autoload=tuple(request["toolsets"]),
                    privileges=Privileges.from_string(request.get("privileges", "rwx")))
registry.loaded_toolsets()
before = sorted(m for m in sys.modules if m.startswith("acme_"))
lookups = {name: getattr(registry.record(name), "status", None) for name in request["look_up"]}
looked_up = sorted(m for m in sys.modules if m.startswith("acme_"))
calls = [call_tool(name, arguments, registry=registry) for name, arguments in request["calls"]]
called = sorted(m for m in sys.modules if m.startswith("acme_"))
rows = [r.as_row() for r in registry.records()]
print(json.dumps({
    "before": before, "looked_up": looked_up, "called": called, "lookups": lookups,
    "calls": calls, "rows": rows, "records_modules": sorted(
        m for m in sys.modules if m.startswith("acme_")),
    "errors": [e.as_row() for e in registry.load_errors],
    "notes": [n.reason for n in registry.notes], "warnings": registry.warnings,
}))
'''


def _settle(*folders: Path) -> None:
    """Wait until everything under ``folders`` is old enough for a manifest to be kept."""
    newest = max(max(os.lstat(p).st_ctime for p in [f, *f.rglob("*")]) for f in folders)
    wait = newest + _manifest.SETTLED_SECONDS + 0.2 - time.time()
    if wait > 0:
        time.sleep(wait)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("manifest-site")
    write_distribution(root, "acme-listed", "1.0", toolsets={"listed": "acme_listed"},
                       files=LISTED)
    write_distribution(root, "acme-clash", "2.0", toolsets={"clash": "acme_clash"},
                       files=CLASHING)
    _settle(root)
    yield root


def probe(site: Path, state: Path, *, toolsets: tuple[str, ...] = ("listed", "clash"),
          look_up: tuple[str, ...] = (), calls: tuple[tuple[str, Any], ...] = (),
          privileges: str = "rwx", env: dict[str, str] | None = None) -> dict[str, Any]:
    request = {"toolsets": list(toolsets), "look_up": list(look_up),
               "calls": [list(c) for c in calls], "privileges": privileges}
    done = run_python(PROBE, path=[site], args=[json.dumps(request)],
                      env={"JANITO_CONFIG_DIR": str(state), **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def manifests(state: Path) -> list[Path]:
    return sorted(state.glob("cache/toolsets/*.json"))


def without(seen: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in seen.items() if k not in keys}


IMPORT_KEYS = ("before", "looked_up", "called", "records_modules")


def test_a_second_load_lists_from_the_manifest_and_answers_the_same(site: Path,
                                                                    tmp_path: Path) -> None:
    state = tmp_path / "state"
    calls = (("ReadThing", {"name": "x"}), ("WriteThing", {"path": "p"}),
             ("BrokenAnnotation", {"query": "q"}), ("NeedsKey", {}), ("Missing", {}))
    first = probe(site, state, calls=calls)
    assert len(manifests(state)) == 2
    second = probe(site, state, calls=calls)
    assert without(second, *IMPORT_KEYS) == without(first, *IMPORT_KEYS)
    # Without a manifest every public module is imported at load; with one, only the
    # module that speaks at load (and the broken ones, tried again) before anything asks.
    assert first["before"] == ["acme_clash", "acme_clash.read_thing", "acme_listed",
                               "acme_listed.envy", "acme_listed.gated", "acme_listed.noted",
                               "acme_listed.plain"]
    assert second["before"] == ["acme_listed", "acme_listed.noted"]
    assert second["called"] == ["acme_listed", "acme_listed.gated", "acme_listed.noted",
                                "acme_listed.plain"]
    rows = {r["name"]: r for r in second["rows"]}
    assert rows["ReadThing"]["toolset"] == "listed" and rows["ReadThing"]["status"] == "loaded"
    assert rows["ReadThing"]["description"] == "Read a thing."
    assert rows["BrokenAnnotation"]["status"] == "error"
    assert rows["NeedsKey"] == {**rows["NeedsKey"], "status": "skipped",
                                "reason": "ACME_KEY is not set"}
    assert second["calls"][0] == {"success": True, "name": "x", "limit": 3}
    assert second["calls"][3]["error_type"] == "tool_unavailable"
    kinds = sorted((e["kind"], e["toolset"]) for e in second["errors"])
    assert kinds == [("clash", "clash"), ("import", "listed")]
    assert second["notes"] == ["noted at load, ACME_NOTE="]


def test_what_changes_between_starts_is_asked_on_every_start(site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    probe(site, state)
    assert manifests(state)
    seen = probe(site, state, env={"ACME_KEY": "k1", "ACME_NOTE": "n1"},
                 calls=(("NeedsKey", {}),))
    assert seen["notes"] == ["noted at load, ACME_NOTE=n1"]
    assert seen["calls"] == [{"success": True, "key": "k1"}]
    assert {r["name"]: r["status"] for r in seen["rows"]}["NeedsKey"] == "loaded"


def test_privileges_gate_remembered_tools(site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = probe(site, state, privileges="r", calls=(("WriteThing", {"path": "p"}),))
    second = probe(site, state, privileges="r", calls=(("WriteThing", {"path": "p"}),))
    assert second["calls"] == first["calls"]
    assert second["calls"][0]["error_type"] == "permission_denied"
    assert without(second, *IMPORT_KEYS) == without(first, *IMPORT_KEYS)
    # A call imports its tool's module first, so privileges are held to the class itself.
    assert "acme_listed.plain" in second["called"]


def test_a_tool_looked_up_by_name_imports_only_its_module(site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    probe(site, state)
    seen = probe(site, state, look_up=("ReadThing",))
    assert seen["lookups"] == {"ReadThing": "loaded"}
    assert seen["looked_up"] == ["acme_listed", "acme_listed.noted", "acme_listed.plain"]
    gated = probe(site, state, look_up=("NeedsKey",))
    assert gated["lookups"] == {"NeedsKey": "skipped"}
    assert gated["looked_up"] == ["acme_listed", "acme_listed.gated", "acme_listed.noted"]


def test_a_module_that_fails_on_first_use_fails_as_it_would_have_at_load(
        site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    probe(site, state)
    broken = {"ACME_BREAK": "1"}
    calls = (("EnvyThing", {}), ("ReadThing", {"name": "y"}))
    remembered = probe(site, state, env=broken, calls=calls)
    fresh = probe(site, tmp_path / "other-state", env=broken, calls=calls)
    assert remembered["calls"] == fresh["calls"]
    assert remembered["calls"][0]["error_type"] == "unknown_tool"
    assert any("the environment broke this module" in e["reason"] for e in remembered["errors"])
    assert remembered["calls"][1]["success"] is True
    assert sorted(map(json.dumps, remembered["errors"])) == sorted(map(json.dumps, fresh["errors"]))
    assert "EnvyThing" not in {r["name"] for r in remembered["rows"]}
    assert len(manifests(state)) == 1  # the listed toolset's was found untrue: made anew


def _edit(path: Path, text: str, *, keep_times: bool) -> None:
    info = path.stat()
    path.write_text(text)
    if keep_times:  # what a careful editor, or a hostile one, can put back
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


@pytest.mark.parametrize("keep_times", [False, True], ids=["edited", "times-put-back"])
def test_an_edited_module_is_imported_again(tmp_path: Path, keep_times: bool) -> None:
    site = tmp_path / "site"
    write_distribution(site, "acme-listed", "1.0", toolsets={"listed": "acme_listed"},
                       files=LISTED)
    _settle(site)
    state = tmp_path / "state"
    probe(site, state, toolsets=("listed",))
    assert manifests(state)
    plain = site / "acme_listed" / "plain.py"
    text = plain.read_text()
    edited = text.replace('"""Read a thing.', '"""Read a THING.').replace(
        '@tool(permissions="r")\nclass ReadThing', '@tool(permissions="rw")\nclass ReadThing')
    assert len(edited) == len(text) + 1
    edited = edited.replace("Longer text the model", "Longer text the modl")  # same size
    assert len(edited) == len(text)
    _edit(plain, edited, keep_times=keep_times)
    seen = probe(site, state, toolsets=("listed",), privileges="r",
                 calls=(("ReadThing", {"name": "z"}),))
    row = {r["name"]: r for r in seen["rows"]}["ReadThing"]
    assert row["description"] == "Read a THING."
    assert row["permissions"] == "rw" and row["status"] == "denied"
    assert seen["calls"][0]["error_type"] == "permission_denied"
    assert "acme_listed.plain" in seen["before"]  # imported at load: the manifest was not used


def test_an_edit_behind_a_link_to_a_folder_is_seen(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(site, "acme-linked", "1.0", toolsets={"linked": "acme_linked"},
                       files={"acme_linked/__init__.py": ""})
    write_files(tmp_path / "elsewhere", {"linked_sub/__init__.py": '''
        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class Behind(BaseTool):
            """Behind a link."""

            def run(self) -> dict:
                """Do it."""
                return {"success": True}
    '''})
    (site / "acme_linked" / "sub").symlink_to(tmp_path / "elsewhere" / "linked_sub")
    (site / "acme_linked" / "dangling").symlink_to(tmp_path / "nowhere")
    _settle(site, tmp_path / "elsewhere")
    state = tmp_path / "state"
    probe(site, state, toolsets=("linked",))
    assert manifests(state)
    remembered = probe(site, state, toolsets=("linked",))
    assert remembered["before"] == []
    module = tmp_path / "elsewhere" / "linked_sub" / "__init__.py"
    _edit(module, module.read_text().replace("Behind a link.", "Behind a lynx."),
          keep_times=True)
    seen = probe(site, state, toolsets=("linked",))
    assert [r["description"] for r in seen["rows"]] == ["Behind a lynx."]
    assert "acme_linked.sub" in seen["before"]


def test_a_manifest_that_lies_about_a_tool_is_caught_when_the_tool_is_called(
        site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    probe(site, state)
    for path in manifests(state):
        data = json.loads(path.read_bytes())
        for module in data["modules"]:
            for tool in module[2]:
                if tool["name"] == "WriteThing":
                    tool["permissions"] = ""  # as if it changed nothing
        path.write_text(json.dumps(data))
        path.chmod(0o600)
    seen = probe(site, state, privileges="r", calls=(("WriteThing", {"path": "p"}),))
    assert seen["calls"][0]["error_type"] == "permission_denied"
    assert {r["name"]: r for r in seen["rows"]}["WriteThing"]["permissions"] == "w"
    assert any("no longer defines what janito remembered" in w for w in seen["warnings"])
    assert len(manifests(state)) == 1  # the lying one is gone, to be made anew
    again = probe(site, state, privileges="r")
    assert {r["name"]: r for r in again["rows"]}["WriteThing"]["permissions"] == "w"
    assert len(manifests(state)) == 2


@pytest.mark.parametrize("change", ["group-writable", "another-owner", "a-link"])
def test_a_manifest_others_could_have_written_is_not_trusted(site: Path, tmp_path: Path,
                                                             change: str) -> None:
    state = tmp_path / "state"
    probe(site, state)
    if change == "another-owner" and os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    for path in manifests(state):
        data = json.loads(path.read_bytes())
        for module in data["modules"]:
            for tool in module[2]:
                tool["description"] = "planted"
        if change == "a-link":
            planted = tmp_path / f"planted-{path.name}"
            planted.write_text(json.dumps(data))
            planted.chmod(0o600)
            path.unlink()
            path.symlink_to(planted)
            continue
        path.write_text(json.dumps(data))
        if change == "group-writable":
            path.chmod(0o620)
        else:
            path.chmod(0o600)
            os.chown(path, 65534, 65534)
    seen = probe(site, state)
    assert "planted" not in {r["description"] for r in seen["rows"]}
    assert "acme_listed.plain" in seen["before"]


def test_a_state_folder_that_cannot_keep_manifests_changes_nothing(site: Path,
                                                                   tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "cache").write_text("a file where the folder would be")
    first = probe(site, state)
    second = probe(site, state)
    assert second == first
    assert "acme_listed.plain" in second["before"]


def test_many_threads_calling_a_remembered_tool_import_it_once(site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    probe(site, state)
    code = '''
        import json, sys, threading
        from janito_core import Registry
        from janito_core.dispatch import call_tool

        registry = Registry(autoload=("listed",))
        registry.loaded_toolsets()
        assert "acme_listed.plain" not in sys.modules
        start = threading.Barrier(16)
        results = []

        def call():
            start.wait()
            results.append(call_tool("ReadThing", {"name": "t"}, registry=registry))

        threads = [threading.Thread(target=call) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(json.dumps({"results": results, "pending": registry.record("ReadThing").pending}))
    '''
    done = run_python(code, path=[site], env={"JANITO_CONFIG_DIR": str(state)})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["results"] == [{"success": True, "name": "t", "limit": 3}] * 16
    assert seen["pending"] is False


MOODY = {
    "acme_moody/__init__.py": "",
    "acme_moody/moody.py": '''
        import os

        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class Steady(BaseTool):
            """Here in every mood."""

            def run(self) -> dict:
                """Do it."""
                return {"success": True}


        @tool(permissions="r")
        def say_steady(text: str) -> dict:
            """Say something, steadily.

            Args:
                text: What to say.
            """
            return {"success": True, "said": text}


        if os.environ.get("ACME_MOOD"):  # what the author was asked to say, and did not
            janito_load_errors = ["the mood changed"]

            @tool(permissions="r")
            class Moody(BaseTool):
                """Here in a mood."""

                def run(self) -> dict:
                    """Do it."""
                    return {"success": True, "mood": True}
    ''',
}


def test_a_module_that_defines_more_than_remembered_gives_it_all_on_first_use(
        tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(site, "acme-moody", "1.0", toolsets={"moody": "acme_moody"}, files=MOODY)
    _settle(site)
    state = tmp_path / "state"
    probe(site, state, toolsets=("moody",))
    assert manifests(state)
    steady = probe(site, state, toolsets=("moody",), calls=(("SaySteady", {"text": "hi"}),))
    assert steady["before"] == []
    assert steady["calls"] == [{"success": True, "said": "hi"}]
    assert steady["called"] == ["acme_moody", "acme_moody.moody"]
    assert [r["name"] for r in steady["rows"]] == ["Steady", "SaySteady"]
    assert steady["warnings"] == [] and steady["errors"] == []
    seen = probe(site, state, toolsets=("moody",), env={"ACME_MOOD": "1"},
                 calls=(("Steady", {}), ("Moody", {})))
    assert seen["before"] == []  # nothing said the module speaks at load
    assert seen["calls"] == [{"success": True}, {"success": True, "mood": True}]
    assert [r["name"] for r in seen["rows"]] == ["Steady", "SaySteady", "Moody"]
    assert [e["reason"] for e in seen["errors"]] == ["the mood changed"]
    assert any("no longer defines what janito remembered" in w for w in seen["warnings"])
    assert not manifests(state)  # made again on the next load, which imports the module
    again = probe(site, state, toolsets=("moody",), env={"ACME_MOOD": "1"})
    assert again["before"] == ["acme_moody", "acme_moody.moody"]
    assert [e["reason"] for e in again["errors"]] == ["the mood changed"]


def test_optimisation_flags_keep_manifests_of_their_own(site: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    probe(site, state)
    stripped = probe(site, state, env={"PYTHONOPTIMIZE": "2"})  # docstrings gone
    assert "acme_listed.plain" in stripped["before"]  # the manifest of -O0 was not used
    assert not any("no longer defines" in w for w in stripped["warnings"])
    assert len(manifests(state)) == 4
    again = probe(site, state, env={"PYTHONOPTIMIZE": "2"})
    assert "acme_listed.plain" not in again["before"]
    assert without(again, *IMPORT_KEYS) == without(stripped, *IMPORT_KEYS)


def test_a_manifest_is_kept_only_when_its_times_were_old_when_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    write_distribution(site, "acme-listed", "1.0", toolsets={"listed": "acme_listed"},
                       files=LISTED)
    monkeypatch.syspath_prepend(str(site))
    spec = ToolsetSpec("listed", "acme-listed", "1.0", "acme_listed")
    measured = time.time_ns()
    key = _manifest.key_of(spec, _manifest.core_files())
    assert key is not None
    # However long the first load takes, a file changed in the tick it was measured in
    # would keep its times: the clock of the measure decides, not the clock of the write.
    assert _manifest.write(spec, key, measured, []) is False
    assert _manifest.read(spec, key) is None
    later = measured + int((_manifest.SETTLED_SECONDS + 1) * 1e9)
    assert _manifest.write(spec, key, later, [["acme_listed", False, []]]) is True
    kept = _manifest.read(spec, key)
    assert kept is not None and kept.modules == [["acme_listed", False, []]]
    (site / "acme_listed" / "plain.py").write_text("# changed\n")
    assert _manifest.key_of(spec, _manifest.core_files()) != key


def _janito(site: Path, tmp_path: Path) -> Janito:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return Janito(path=[site], cwd=workspace, config=tmp_path / "state",
                  env={"JANITO_TOOLSETS": "listed,clash"})


def test_janito_tools_says_the_same_from_a_manifest(site: Path, tmp_path: Path) -> None:
    janito = _janito(site, tmp_path)
    first = janito("tools", "--json", "-t", "listed", "-t", "clash")
    assert first.code == 0, first
    assert len(manifests(tmp_path / "state")) == 2
    second = janito("tools", "--json", "-t", "listed", "-t", "clash")
    assert second.code == 0, second
    assert second.json() == first.json()
    assert second.err == first.err
    errors = sorted((r["toolset"], r["reason"]) for r in second.json() if r["status"] == "error"
                    and r["name"] is None)
    assert [toolset for toolset, _ in errors] == ["clash", "listed"]
    assert "acme_listed.broken is broken" in errors[1][1]
    assert "acme_listed.broken is broken" in second.err
    strict = janito("tools", "--json", "--strict", "-t", "listed", "-t", "clash")
    assert strict.code == 1, strict


def test_toolsets_not_allowed_stay_out_with_manifests(site: Path, tmp_path: Path) -> None:
    janito = _janito(site, tmp_path)
    assert janito("tools", "--json", "-t", "listed", "-t", "clash").code == 0
    assert len(manifests(tmp_path / "state")) == 2
    only = janito("tools", "--json", "-t", "listed", env={"JANITO_TOOLSETS": "listed"})
    assert only.code == 0, only
    assert {r["toolset"] for r in only.json()} == {"listed"}
    assert not any(r["name"] is None and r["reason"].startswith("tool 'ReadThing'")
                   for r in only.json())  # no clash: the other toolset never loaded
    for command in (("tools", "--json"), ("run", "ReadThing", "--no-journal", "--args", "{}")):
        refused = janito(*command, "-t", "clash", env={"JANITO_TOOLSETS": "listed"})
        assert refused.code == 2, refused
        assert "JANITO_TOOLSETS does not include it" in refused.err
    nothing = janito("tools", "--json", env={"JANITO_TOOLSETS": ""})
    assert nothing.code == 0 and nothing.json() == [], nothing


def test_janito_run_reports_a_module_that_fails_on_first_use(site: Path, tmp_path: Path) -> None:
    janito = _janito(site, tmp_path)
    assert janito("tools", "--json", "-t", "listed").code == 0
    assert manifests(tmp_path / "state")
    ran = janito("run", "ReadThing", "-t", "listed", "--no-journal", "--args", '{"name": "n"}')
    assert ran.code == 0, ran
    assert ran.json() == {"success": True, "name": "n", "limit": 3}
    assert "acme_listed.broken is broken" in ran.err
    # --strict rests on nothing remembered: it says what a load without a manifest says
    strict = janito("tools", "--json", "--strict", "-t", "listed", env={"ACME_BREAK": "1"})
    fresh = janito("tools", "--json", "--strict", "-t", "listed",
                   env={"ACME_BREAK": "1", "JANITO_CONFIG_DIR": str(tmp_path / "fresh")})
    assert strict.code == fresh.code == 1, (strict, fresh)
    assert strict.json() == fresh.json()
    assert "EnvyThing" not in {r["name"] for r in strict.json()}
    assert "the environment broke this module" in strict.err
    assert janito("tools", "--json", "-t", "listed").code == 0  # the manifest made again
    assert manifests(tmp_path / "state")
    broke = janito("run", "EnvyThing", "-t", "listed", "--no-journal", "--args", "{}",
                   env={"ACME_BREAK": "1"})
    assert broke.code != 0, broke
    assert "the environment broke this module" in broke.out + broke.err


def test_one_manifest_whatever_folder_janito_starts_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    write_distribution(site, "acme-listed", "1.0", toolsets={"listed": "acme_listed"},
                       files=LISTED)
    monkeypatch.syspath_prepend(str(site))
    spec = ToolsetSpec("listed", "acme-listed", "1.0", "acme_listed")
    later = time.time_ns() + int((_manifest.SETTLED_SECONDS + 1) * 1e9)
    path = list(sys.path)
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        # python -m puts the current folder first; a host may put a Path or bytes there
        monkeypatch.setattr("sys.path", [str(tmp_path / folder), Path("x"), b"y", *path])
        key = _manifest.key_of(spec, _manifest.core_files())
        assert key is not None
        assert _manifest.write(spec, key, later, [[folder, False, []]]) is True
        assert _manifest.read(spec, key) is not None
    assert len(manifests(Path(os.environ["JANITO_CONFIG_DIR"]))) == 1


def test_no_manifest_is_made_from_modules_imported_before_the_load(site: Path,
                                                                  tmp_path: Path) -> None:
    code = '''
        import sys
        import acme_listed.plain  # imported before: its file may have changed since
        from janito_core import Registry

        Registry(autoload=("listed",)).loaded_toolsets()
    '''
    state = tmp_path / "state"
    done = run_python(code, path=[site], env={"JANITO_CONFIG_DIR": str(state)})
    assert done.returncode == 0, done.stderr
    assert manifests(state) == []
    probe(site, state, toolsets=("listed",))
    assert len(manifests(state)) == 1
