"""The Registry: lazy start, autoload, on-demand toolsets, lookups, privileges."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.distributions import probe, run_python, sources_of_testkit, write_distribution
from helpers.faults import ping, ping_files

from janito_core import (
    AUTOLOAD_TOOLSETS,
    Privileges,
    Registry,
    ToolsetNotAllowedError,
    ToolsetNotFoundError,
    Workspace,
)
from janito_core.dispatch import call_tool

# -- lazy start and autoload ---------------------------------------------------------------


def test_autoload_toolsets_are_files_and_system() -> None:
    assert AUTOLOAD_TOOLSETS == ("files", "system")
    assert Registry()._autoload == AUTOLOAD_TOOLSETS


def test_a_registry_does_nothing_until_first_use(sandbox: Path) -> None:
    write_distribution(sandbox, "acme-lazy", toolsets={"lazy": "acme_lazy"},
                       files=ping_files("acme_lazy", "LazyPing"))
    completed = run_python(
        """
        import json, sys
        from janito_core import Registry
        registry = Registry(autoload=("lazy",))
        before = {"toolset": "acme_lazy" in sys.modules,
                  "metadata": "importlib_metadata" in sys.modules, "repr": repr(registry)}
        specs = registry.toolsets()          # listing: reads entry points only
        listed = {"names": sorted(specs), "toolset": "acme_lazy" in sys.modules}
        names = registry.names()             # first real use: autoload happens
        after = {"names": names, "toolset": "acme_lazy" in sys.modules}
        print(json.dumps({"before": before, "listed": listed, "after": after}))
        """,
        path=[sandbox],
    )
    assert completed.returncode == 0, completed.stderr
    seen = json.loads(completed.stdout)
    assert seen["before"] == {"toolset": False, "metadata": False,
                              "repr": seen["before"]["repr"]}
    assert "not loaded yet" in seen["before"]["repr"]
    # the other toolsets installed beside janito-core (none in its own session) list too
    assert "lazy" in seen["listed"]["names"] and seen["listed"]["toolset"] is False
    assert seen["after"] == {"names": ["LazyPing"], "toolset": True}


def test_autoload_loads_files_and_system_and_nothing_else(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-files", toolsets={"files": "fake_files"},
                       files=ping_files("fake_files", "FilesPing"))
    write_distribution(sandbox, "janito-system", toolsets={"system": "fake_system"},
                       files=ping_files("fake_system", "SystemPing"))
    write_distribution(sandbox, "acme-extra", toolsets={"extra": "acme_extra"},
                       files=ping_files("acme_extra", "ExtraPing"))
    seen = probe([sandbox], autoload=None)
    assert seen.loaded() == ["FilesPing", "SystemPing"]
    assert set(seen["loaded_toolsets"]) == {"files", "system"}
    assert "acme_extra" not in seen["modules"]
    assert set(seen["toolsets"]) >= {"files", "system", "extra"}


def test_janito_toolsets_restricts_what_may_load(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-files", toolsets={"files": "fake_files"},
                       files=ping_files("fake_files", "FilesPing"))
    write_distribution(sandbox, "janito-system", toolsets={"system": "fake_system"},
                       files=ping_files("fake_system", "SystemPing"))
    write_distribution(sandbox, "acme-extra", toolsets={"extra": "acme_extra"},
                       files=ping_files("acme_extra", "ExtraPing"))
    seen = probe([sandbox], autoload=None, add=["extra", "files"],
                 env={"JANITO_TOOLSETS": "system, extra"})
    assert seen.loaded() == ["SystemPing", "ExtraPing"]
    assert seen["added"]["files"]["exception"] == "ToolsetNotAllowedError"
    assert "JANITO_TOOLSETS" in seen["added"]["files"]["message"]
    assert "fake_files" not in seen["modules"]


# -- add_toolset and lookups -------------------------------------------------------------


def test_add_toolset_loads_on_demand_and_returns_the_available_tools(registry: Registry) -> None:
    names = registry.names()
    assert {"ReadNote", "WriteNote", "RunThing", "Everything", "Nothing", "Typed"} <= set(names)
    again = registry.add_toolset("testkit")
    assert again == [n for n in names if registry.record(n).toolset == "testkit"]  # type: ignore[union-attr]
    assert registry.loaded_toolsets() == {"testkit": [r.name for r in registry.records()]}
    assert registry.load_errors == []


def test_add_toolset_twice_changes_nothing(registry: Registry) -> None:
    before = [(r.name, r.status) for r in registry.records()]
    registry.add_toolset("testkit")
    assert [(r.name, r.status) for r in registry.records()] == before
    assert registry.load_errors == []


def test_an_unknown_toolset_raises_with_suggestions(registry: Registry) -> None:
    with pytest.raises(ToolsetNotFoundError) as caught:
        registry.add_toolset("testkt")
    assert caught.value.suggestions == ["testkit"]
    assert "did you mean testkit" in str(caught.value)
    with pytest.raises(ToolsetNotFoundError) as caught:
        registry.add_toolset("zzzzzz")
    assert caught.value.suggestions == []


def test_a_toolset_outside_the_allowed_set_raises(testkit_dir: Path) -> None:
    registry = Registry(autoload=(), allowed={"files"})
    assert registry.is_allowed("files") and not registry.is_allowed("testkit")
    with pytest.raises(ToolsetNotAllowedError):
        registry.add_toolset("testkit")
    assert registry.names() == []


def test_toolset_specs_name_distribution_version_and_module(registry: Registry,
                                                            testkit_dir: Path) -> None:
    spec = registry.toolsets()["testkit"]
    assert spec.name == "testkit"
    assert spec.distribution == "janito-testkit"
    assert spec.version == "1.2.3"
    assert spec.module == "janito_testkit"
    assert spec.location == str(testkit_dir)


def test_lookups(registry: Registry) -> None:
    record = registry.record("WriteNote")
    assert record is not None
    assert (record.name, record.toolset, record.distribution, record.permissions, record.status) == (
        "WriteNote", "testkit", "janito-testkit", "w", "loaded")
    assert record.description == "Write a note into the workspace."
    assert record.as_row() == {
        "name": "WriteNote", "toolset": "testkit", "distribution": "janito-testkit",
        "permissions": "w", "description": "Write a note into the workspace.",
        "status": "loaded", "reason": None,
    }
    assert registry.record("NoSuchTool") is None
    assert registry.get("NoSuchTool") is None
    assert set(registry.tools()) == set(registry.names())


def test_permissions_lookups(registry: Registry) -> None:
    assert registry.get_tool_permissions("ReadNote") == "r"
    assert registry.get_tool_permissions("WriteNote") == "w"
    assert registry.get_tool_permissions("Everything") == "rwx"
    assert registry.get_tool_permissions("Nothing") == ""
    assert registry.get_tool_permissions("NoSuchTool") is None
    # A skipped tool still has permissions; it is not among the available ones.
    assert registry.get_tool_permissions("NeedsToken") == "r"
    every = registry.get_all_tool_permissions()
    assert every["ReadNote"] == "r" and every["RunThing"] == "x"
    assert "NeedsToken" not in every
    assert set(every) == set(registry.names())


def test_get_function_schema_is_the_openai_chat_shape(registry: Registry) -> None:
    schema = registry.get_function_schema("ReadNote")
    assert schema == {
        "type": "function",
        "function": {
            "name": "ReadNote",
            "description": "Read a note from the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"filepath": {
                    "type": "string",
                    "description": "The note's path, relative to the workspace.",
                }},
                "required": ["filepath"],
                "additionalProperties": False,
            },
        },
    }
    strict = registry.get_function_schema("ReadNote", strict=True)
    assert strict["function"]["strict"] is True
    with pytest.raises(KeyError):
        registry.get_function_schema("NeedsToken")
    with pytest.raises(KeyError):
        registry.get_function_schema("NoSuchTool")


def test_registries_are_independent(testkit_dir: Path, tmp_path: Path) -> None:
    one = Registry(autoload=(), allowed=None, privileges=Privileges.from_string("r"))
    two = Registry(autoload=(), allowed=None, workspace=Workspace(tmp_path))
    one.add_toolset("testkit")
    assert two.names() == []
    two.add_toolset("testkit")
    assert one.record("WriteNote").status == "denied"  # type: ignore[union-attr]
    assert two.record("WriteNote").status == "loaded"  # type: ignore[union-attr]
    assert one.get("Nothing") is not two.get("Nothing")


# -- module-level functions ----------------------------------------------------------------


def test_module_level_functions_use_one_default_registry(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-files", toolsets={"files": "fake_files"},
                       files=ping_files("fake_files", "FilesPing", permissions="r"))
    write_distribution(sandbox, "janito-system", toolsets={"system": "fake_system"},
                       files=ping_files("fake_system", "SystemPing", permissions="x"))
    write_distribution(sandbox, "janito-testkit", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    completed = run_python(
        """
        import json, sys
        from janito_core import registry as module
        import janito_core
        before = "fake_files" in sys.modules
        out = {
            "autoload": list(module.AUTOLOAD_TOOLSETS),
            "same": module.default_registry() is module.default_registry()
                    is janito_core.default_registry(),
            "before": before,
            "all": module.get_all_tool_permissions(),
            "one": module.get_tool_permissions("SystemPing"),
            "added": module.add_toolset("testkit")[:3],
            "schema": module.get_function_schema("FilesPing"),
            "after": module.get_tool_permissions("ReadNote"),
        }
        print(json.dumps(out))
        """,
        path=[sandbox],
    )
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout)
    assert out["autoload"] == ["files", "system"]
    assert out["same"] is True
    assert out["before"] is False
    assert out["all"] == {"FilesPing": "r", "SystemPing": "x"}
    assert out["one"] == "x"
    assert len(out["added"]) == 3
    assert out["schema"]["function"]["name"] == "FilesPing"
    assert out["after"] == "r"


# -- privileges ------------------------------------------------------------------------------


def test_no_flags_means_every_privilege() -> None:
    assert Privileges.from_flags() == Privileges() == Privileges(True, True, True)
    assert str(Privileges.from_flags()) == "rwx"
    assert Privileges.from_flags(read=True) == Privileges(True, False, False)
    assert Privileges.from_flags(write=True, execute=True) == Privileges(False, True, True)


def test_privileges_are_immutable() -> None:
    granted = Privileges()
    with pytest.raises(AttributeError):
        granted.read = False  # type: ignore[misc]


GRANTS = ["".join(c) for n in range(4) for c in itertools.combinations("rwx", n)]


@pytest.mark.parametrize("granted", GRANTS)
@pytest.mark.parametrize("needed", GRANTS)
def test_a_tool_needs_every_letter_of_its_permissions(granted: str, needed: str) -> None:
    privileges = Privileges.from_string(granted)
    assert privileges.allows(needed) is set(needed).issubset(granted)
    assert privileges.missing(needed) == "".join(c for c in needed if c not in granted)


def test_empty_permissions_always_load() -> None:
    for granted in GRANTS:
        assert Privileges.from_string(granted).allows("")


@pytest.mark.parametrize("granted", GRANTS)
def test_the_registry_gates_tools_by_privileges(testkit_dir: Path, granted: str) -> None:
    registry = Registry(autoload=(), allowed=None, privileges=Privileges.from_string(granted))
    registry.add_toolset("testkit")
    expected = {"Nothing": "", "ReadNote": "r", "WriteNote": "w", "RunThing": "x",
                "Everything": "rwx"}
    for name, needed in expected.items():
        record = registry.record(name)
        assert record is not None
        if set(needed) <= set(granted):
            assert record.status == "loaded", (name, granted)
            assert registry.get(name) is not None
        else:
            assert record.status == "denied", (name, granted)
            assert registry.get(name) is None
            missing = [m for m in needed if m not in granted]
            for letter in missing:
                assert f"(-{letter})" in (record.reason or "")
            assert registry.skipped()[name] == record.reason


def test_privileges_are_checked_again_at_call_time(registry: Registry, workspace: Path) -> None:
    arguments = {"filepath": "note.txt", "text": "one"}
    assert call_tool("WriteNote", arguments, registry=registry)["success"] is True
    registry.privileges = Privileges.from_string("r")
    denied = call_tool("WriteNote", arguments, registry=registry)
    assert denied["success"] is False
    assert denied["error_type"] == "permission_denied"
    assert "write (-w)" in denied["error"]
    assert registry.record("WriteNote").status == "denied"  # type: ignore[union-attr]
    assert "WriteNote" not in registry.get_all_tool_permissions()
    assert call_tool("ReadNote", {"filepath": "note.txt"}, registry=registry)["text"] == "one"
    registry.privileges = Privileges()
    assert call_tool("WriteNote", {"filepath": "note.txt", "text": "two"},
                     registry=registry)["success"] is True
    assert (workspace / "note.txt").read_text(encoding="utf-8") == "two"
    # Raising privileges does not revive a tool that should_load() skipped.
    assert registry.record("SaysNo").status == "skipped"  # type: ignore[union-attr]


# -- first use from many threads --------------------------------------------------------------


@pytest.fixture
def slow_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The acme-slow distribution on sys.path (see helpers/first_use.py)."""
    from helpers.first_use import forget_slow_toolset

    site = tmp_path / "slow-site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    forget_slow_toolset()
    sys.modules.pop("acme_slow_counter", None)


def test_first_use_from_many_threads_loads_once(slow_site: Path) -> None:
    from helpers.first_use import first_use_rounds, write_slow_toolset

    write_slow_toolset(slow_site)
    problems = first_use_rounds(lambda: Registry(autoload=("slow",), allowed=None),
                                rounds=4, threads=8)
    assert problems == []


def test_add_toolset_from_many_threads_loads_once(slow_site: Path) -> None:
    from helpers.first_use import first_use_rounds, write_slow_toolset

    write_slow_toolset(slow_site)
    problems = first_use_rounds(lambda: Registry(autoload=(), allowed=None),
                                rounds=4, threads=8, only_add=True)
    assert problems == []


def test_a_call_hook_plugin_is_in_place_for_every_thread_of_a_first_use(slow_site: Path) -> None:
    from helpers.first_use import first_use_rounds, write_guard_plugin, write_slow_toolset

    write_slow_toolset(slow_site, hooks=False)  # nothing creates the plugin manager early
    write_guard_plugin(slow_site)
    problems = first_use_rounds(lambda: Registry(autoload=("slow",), allowed=None),
                                rounds=4, threads=8, guarded=True)
    assert problems == []


def test_a_hook_may_use_the_registry_while_it_loads(testkit_dir: Path, sandbox: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading holds the registry's lock; a hook run by the load calls back on the same
    thread and must neither wait for itself nor load anything twice."""
    write_distribution(sandbox, "acme-caller", toolsets={"caller": "acme_caller"}, files={
        "acme_caller/__init__.py": '''
            from janito_core import hookimpl

            SEEN = []


            @hookimpl
            def janito_toolset_loaded(registry, toolset, tools):
                if toolset == "caller":
                    SEEN.append(("names", sorted(registry.names())))
                    SEEN.append(("again", registry.add_toolset("caller")))
                    SEEN.append(("testkit", len(registry.add_toolset("testkit")) > 0))
        ''',
        "acme_caller/caller_ping.py": ping("CallerPing", permissions=""),
    })
    monkeypatch.syspath_prepend(str(sandbox))
    registry = Registry(autoload=("caller", "testkit"), allowed=None)
    names = registry.names()
    import acme_caller  # type: ignore[import-not-found]

    assert acme_caller.SEEN == [("names", ["CallerPing"]), ("again", ["CallerPing"]),
                                ("testkit", True)]
    assert names[0] == "CallerPing" and "ReadNote" in names
    assert registry.load_errors == []  # testkit, loaded by the hook, is not loaded twice
    sys.modules.pop("acme_caller", None)
    sys.modules.pop("acme_caller.caller_ping", None)
