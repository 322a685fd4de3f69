"""BaseTool, @tool, should_load() gating and the callable that stands for a tool class."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from janito_core import BaseTool, PermissionStringError, Registry, discover_toolsets, tool
from janito_core.decorator import tool as tool_from_module
from janito_core.privileges import validate_permissions

# -- @tool ------------------------------------------------------------------------------


@pytest.mark.parametrize("permissions", ["", "r", "w", "x", "rw", "rx", "wx", "rwx"])
def test_every_combination_of_r_w_x_is_accepted(permissions: str) -> None:
    @tool(permissions=permissions)
    class Sample(BaseTool):
        def run(self) -> dict[str, Any]:
            return {"success": True}

    assert Sample._is_tool is True  # type: ignore[attr-defined]
    assert Sample._tool_permissions == permissions


def test_permission_letters_are_stored_in_canonical_order() -> None:
    @tool(permissions="xwr")
    class Sample(BaseTool):
        def run(self) -> dict[str, Any]:
            return {"success": True}

    assert Sample._tool_permissions == "rwx"


@pytest.mark.parametrize("bad", ["q", "R", "read", "r w", "rr", "rwxr", "r,w", "*"])
def test_an_invalid_permission_string_fails_when_the_class_is_decorated(bad: str) -> None:
    # The error comes from tool(...) itself: the class body never needs to be reached.
    with pytest.raises(PermissionStringError) as caught:
        tool(permissions=bad)
    assert repr(bad) in str(caught.value)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("bad", [None, 1, ["r"], b"r"])
def test_a_permission_value_that_is_not_a_string_is_rejected(bad: Any) -> None:
    with pytest.raises(PermissionStringError):
        tool(permissions=bad)


def test_a_typo_fails_at_import_of_the_module_that_holds_the_tool() -> None:
    source = (
        "from janito_core import BaseTool, tool\n"
        "@tool(permissions='rq')\n"
        "class Broken(BaseTool):\n"
        "    def run(self):\n"
        "        return {'success': True}\n"
    )
    with pytest.raises(PermissionStringError, match="'q'"):
        exec(compile(source, "broken_tool.py", "exec"), {})


def test_tool_decorates_classes_with_a_run_method_only() -> None:
    with pytest.raises(TypeError):
        tool()(lambda: None)  # type: ignore[type-var]

    with pytest.raises(TypeError, match="run"):

        @tool()
        class NoRun:
            pass


def test_the_decorator_is_the_same_object_everywhere() -> None:
    assert tool is tool_from_module
    assert validate_permissions("wr") == "rw"


def test_base_tool_is_abstract() -> None:
    class Incomplete(BaseTool):
        pass

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


def test_an_undecorated_subclass_is_not_a_tool() -> None:
    class Helper(BaseTool):
        def run(self) -> dict[str, Any]:
            return {"success": True}

    assert "_is_tool" not in Helper.__dict__
    assert Helper._tool_permissions == ""


# -- should_load --------------------------------------------------------------------------


def test_should_load_defaults_to_true_with_no_reason() -> None:
    @tool()
    class Plain(BaseTool):
        def run(self) -> dict[str, Any]:
            return {"success": True}

    assert Plain.should_load() is True
    assert Plain._load_skip_reason is None


def test_skip_records_the_reason_and_returns_false() -> None:
    @tool()
    class NeedsThing(BaseTool):
        @classmethod
        def should_load(cls) -> bool:
            return cls.skip("the thing is not installed")

        def run(self) -> dict[str, Any]:
            return {"success": True}

    assert NeedsThing.should_load() is False
    assert NeedsThing._load_skip_reason == "the thing is not installed"
    # Setting the reason on one class leaves the base and other tools alone.
    assert BaseTool._load_skip_reason is None


def test_the_registry_reports_each_skip_reason(registry: Registry) -> None:
    skipped = registry.skipped()
    assert skipped["NeedsToken"] == "the testkit_token secret is not set"
    assert skipped["SaysNo"] == "should_load() returned False"
    assert skipped["LoadRaises"] == "should_load() raised OSError: probe device missing"
    for name in ("NeedsToken", "SaysNo", "LoadRaises"):
        record = registry.record(name)
        assert record is not None and record.status == "skipped"
        assert registry.get(name) is None
    assert registry.record("LoadRaises").failed is True  # type: ignore[union-attr]
    assert registry.record("SaysNo").failed is False  # type: ignore[union-attr]


def test_should_load_is_asked_again_by_each_new_registry(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert registry.record("NeedsToken").status == "skipped"  # type: ignore[union-attr]
    monkeypatch.setenv("JANITO_SECRET_TESTKIT_TOKEN", "s3cret")
    fresh = Registry(autoload=(), allowed=None)
    fresh.add_toolset("testkit")
    assert fresh.record("NeedsToken").status == "loaded"  # type: ignore[union-attr]
    assert "NeedsToken" not in fresh.skipped()


# -- wrapping -------------------------------------------------------------------------------


def test_the_wrapper_mirrors_the_class_and_run(registry: Registry) -> None:
    wrapper = registry.get("ReadNote")
    assert wrapper is not None
    cls = registry.record("ReadNote").cls  # type: ignore[union-attr]
    assert wrapper.__name__ == "ReadNote"
    assert wrapper.__qualname__ == cls.__qualname__
    assert wrapper.__module__ == "janito_testkit.notes"
    assert wrapper.__doc__ == cls.__doc__
    assert wrapper.__annotations__ == cls.run.__annotations__
    assert wrapper.__annotations__ is not cls.run.__annotations__
    signature = inspect.signature(wrapper)
    assert list(signature.parameters) == ["filepath"]
    assert "self" not in signature.parameters
    assert signature == inspect.signature(cls.run).replace(
        parameters=list(inspect.signature(cls.run).parameters.values())[1:]
    )
    assert wrapper._tool_permissions == "r"
    assert "ReadNote" in repr(wrapper)


def test_the_wrapper_signature_keeps_defaults_and_kinds(registry: Registry) -> None:
    signature = inspect.signature(registry.get("Typed"))  # type: ignore[arg-type]
    assert signature.parameters["count"].default is inspect.Parameter.empty
    assert signature.parameters["ratio"].default == 1.0
    assert signature.parameters["mode"].default == "fast"
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())


def test_calling_the_wrapper_instantiates_the_class_and_runs(
    registry: Registry, workspace: Path
) -> None:
    (workspace / "hello.txt").write_text("hi there", encoding="utf-8")
    wrapper = registry.get("ReadNote")
    assert wrapper is not None
    assert wrapper(filepath="hello.txt") == {"success": True, "filepath": "hello.txt",
                                             "text": "hi there"}
    assert wrapper("hello.txt")["text"] == "hi there"
    nothing = registry.get("Nothing")
    assert nothing is not None
    first, second = nothing(), nothing()
    assert first["instance"] != second["instance"] or first is not second
    assert first["root"] == str(workspace.resolve())


def test_one_wrapper_per_tool_per_registry(registry: Registry) -> None:
    assert registry.get("Typed") is registry.get("Typed")
    assert registry.tools()["Typed"] is registry.get("Typed")


def test_discover_toolsets_returns_class_names_to_callables(testkit_dir: Path) -> None:
    found = discover_toolsets(["testkit"])
    assert "ReadNote" in found and "Typed" in found
    assert all(name == wrapper.__name__ for name, wrapper in found.items())
    assert found["Typed"](count=2)["values"]["count"] == 2
    # Tools that cannot load here are not handed out.
    assert "SaysNo" not in found and "LoadRaises" not in found
    # Helpers in private modules (_shared.py) are never scanned.
    assert "HiddenHelperTool" not in found


def test_discover_toolsets_honours_privileges(testkit_dir: Path) -> None:
    from janito_core import Privileges

    found = discover_toolsets(["testkit"], privileges=Privileges.from_string("r"))
    assert "ReadNote" in found and "Nothing" in found
    assert "WriteNote" not in found and "RunThing" not in found and "Everything" not in found
