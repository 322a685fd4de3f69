"""``@tool`` on a plain function: the same schema, validation, privileges, reporting and
dispatch as a class tool, with the workspace, a reporter and the cancellation token asked
for by type and never shown to the model."""

from __future__ import annotations

import textwrap
import types
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest

from janito_core import (
    BaseTool,
    CancelToken,
    Privileges,
    Registry,
    Reporter,
    Workspace,
    call_tool,
    hookimpl,
    tool,
)
from janito_core._functions import pascal_case
from janito_core.decorator import tool_class
from janito_core.discovery import tool_classes
from janito_core.harness import run_main
from janito_core.reporter import ReportEvent


@tool(permissions="r")
def read_head(filepath: str, workspace: Workspace, reporter: Reporter,
              cancel_token: CancelToken | None = None, lines: int = 1) -> dict[str, Any]:
    """Read the first lines of a text file.

    Args:
        filepath: The file, relative to the workspace.
        workspace: Supplied by janito; documenting it is harmless.
        lines: How many lines.
    """
    reporter.report_start(f"reading {filepath}")
    text = workspace.read_bytes(filepath).decode()
    return {"success": True, "head": text.splitlines()[:lines],
            "token": None if cancel_token is None else cancel_token.reason}


@tool(permissions="w")
def write_text(path: str, text: str, workspace: Workspace) -> dict[str, Any]:
    """Write a text file."""
    workspace.write_file(path, text.encode(), overwrite=True)
    return {"success": True, "path": path}


@tool(name="Needs-Token")
def needs_token(token: CancelToken) -> dict[str, Any]:
    """Say whether the call was cancelled."""
    return {"success": True, "cancelled": token.cancelled, "kind": type(token).__name__}


def registry_with(tmp_path: Path, *tools: Any, privileges: str = "rwx") -> Registry:
    registry = Registry(workspace=Workspace(tmp_path), autoload=(),
                        privileges=Privileges.from_string(privileges), allowed=None)
    for obj in tools:
        registry.add_tool(obj)
    return registry


def test_the_name_is_the_function_name_in_pascal_case() -> None:
    assert pascal_case("get_current_time") == "GetCurrentTime"
    assert pascal_case("GetCurrentTime") == "GetCurrentTime"
    assert pascal_case("read_html") == "ReadHtml"
    assert pascal_case("getURL") == "GetURL"
    assert tool_class(read_head).__name__ == "ReadHead"
    assert tool_class(needs_token).__name__ == "Needs-Token"


def test_the_function_is_returned_unchanged_and_still_callable(tmp_path: Path) -> None:
    assert isinstance(read_head, types.FunctionType) and read_head.__name__ == "read_head"
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    events: list[str] = []

    class Collect:
        def report_start(self, message: str, end: str = "\n") -> None:
            events.append(message)

    result = read_head("a.txt", Workspace(tmp_path), Collect(), lines=2)  # type: ignore[arg-type]
    assert result["head"] == ["one", "two"] and events == ["reading a.txt"]


def test_the_schema_hides_what_janito_supplies(tmp_path: Path) -> None:
    registry = registry_with(tmp_path, read_head, write_text)
    schema = registry.schema("ReadHead")
    assert schema.description == "Read the first lines of a text file."
    assert schema.parameters == {
        "type": "object",
        "properties": {
            "filepath": {"type": "string", "description": "The file, relative to the workspace."},
            "lines": {"type": "integer", "description": "How many lines.", "default": 1},
        },
        "required": ["filepath"],
        "additionalProperties": False,
    }
    assert schema.diagnostics == ()
    assert registry.schema("WriteText").diagnostics == (
        "parameter 'path' is not documented in run()'s docstring",
        "parameter 'text' is not documented in run()'s docstring",
    )
    import inspect

    wrapper = registry.get("ReadHead")
    assert str(inspect.signature(wrapper)) == "(filepath: 'str', lines: 'int' = 1) -> 'dict[str, Any]'"
    assert wrapper.__name__ == "ReadHead"


def test_a_call_goes_through_dispatch_with_the_registry_s_workspace(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    registry = registry_with(tmp_path, read_head, write_text, needs_token)
    assert call_tool("ReadHead", '{"filepath": "a.txt", "lines": 2}', registry=registry) == {
        "success": True, "head": ["one", "two"], "token": None}
    assert registry.get("ReadHead")("a.txt") == {"success": True, "head": ["one"], "token": None}
    bad = call_tool("ReadHead", {"filepath": "a.txt", "lines": "many", "workspace": "/"},
                    registry=registry)
    assert bad["error_type"] == "invalid_arguments"
    assert {d["field"] for d in bad["details"]} == {"lines", "workspace"}
    outside = call_tool("ReadHead", {"filepath": "../x"}, registry=registry)
    assert outside["error_type"] == "outside_workspace"
    assert call_tool("WriteText", {"path": "b.txt", "text": "hi"}, registry=registry)["success"]
    assert (tmp_path / "b.txt").read_text() == "hi"


def test_the_cancellation_token_is_the_call_s(tmp_path: Path) -> None:
    registry = registry_with(tmp_path, read_head, needs_token)
    (tmp_path / "a.txt").write_text("x\n")
    token = CancelToken()
    result = call_tool("ReadHead", {"filepath": "a.txt"}, registry=registry, cancel_token=token)
    assert result["token"] is None and result["success"]
    token.cancel("stop")
    assert call_tool("Needs-Token", {}, registry=registry)["cancelled"] is False  # never None
    assert call_tool("Needs-Token", {}, registry=registry)["kind"] == "CancelToken"


def test_privileges_apply_as_to_classes(tmp_path: Path) -> None:
    registry = registry_with(tmp_path, read_head, write_text, privileges="r")
    assert registry.names() == ["ReadHead"]
    denied = call_tool("WriteText", {"path": "b.txt", "text": "hi"}, registry=registry)
    assert denied["error_type"] == "permission_denied"
    assert registry.get_tool_permissions("WriteText") == "w"


def test_reports_carry_the_tool_name_and_its_colour(tmp_path: Path) -> None:
    events: list[ReportEvent] = []

    class Listener:
        @hookimpl
        def janito_report(self, event: ReportEvent) -> None:
            events.append(event)

    registry = registry_with(tmp_path, read_head)
    registry.plugins.register(Listener(), "listener", None)
    (tmp_path / "a.txt").write_text("x\n")
    call_tool("ReadHead", {"filepath": "a.txt"}, registry=registry)
    assert [(e.kind, e.message, e.tool, e.color) for e in events] == [
        ("start", "reading a.txt", "ReadHead", "\033[32m")]


def test_annotations_imported_only_for_type_checking_are_recognised(tmp_path: Path) -> None:
    source = textwrap.dedent('''
        from __future__ import annotations
        from typing import TYPE_CHECKING, Any, Optional
        from janito_core import tool
        if TYPE_CHECKING:
            from janito_core import CancelToken, Reporter, Workspace
            import janito_core

        @tool(permissions="r")
        def look(name: str, ws: Workspace, r: "janito_core.Reporter",
                 t: Optional[CancelToken] = None) -> dict[str, Any]:
            """Look.

            Args:
                name: A name.
            """
            return {"success": True, "root": ws.root, "r": type(r).__name__, "t": t}
    ''')
    module = types.ModuleType("lookmod")
    exec(compile(source, "lookmod.py", "exec"), module.__dict__)
    cls = tool_class(module.look)
    assert dict(cls._injected) == {"ws": ("workspace", False), "r": ("reporter", False),  # type: ignore[attr-defined]
                                   "t": ("cancel_token", True)}
    registry = registry_with(tmp_path, module.look)
    assert call_tool("Look", {"name": "n"}, registry=registry) == {
        "success": True, "root": str(tmp_path.resolve()), "r": "Reporter", "t": None}


def test_resolved_annotations_are_recognised_whatever_their_spelling() -> None:
    def plain(a: Workspace, b: Optional[Reporter], c: Annotated[CancelToken, "x"],
              d: str) -> dict[str, Any]:
        """Plain."""
        return {"success": True}

    plain.__annotations__ = {"a": Workspace, "b": Optional[Reporter],
                             "c": Annotated[CancelToken, "x"], "d": str,
                             "return": dict[str, Any]}
    cls = tool_class(tool()(plain))
    assert dict(cls._injected) == {"a": ("workspace", False), "b": ("reporter", True),  # type: ignore[attr-defined]
                                   "c": ("cancel_token", False)}


def test_a_module_may_hold_functions_and_classes(tmp_path: Path) -> None:
    source = textwrap.dedent('''
        from typing import Any
        from janito_core import BaseTool, tool

        @tool(permissions="r")
        def first_tool() -> dict[str, Any]:
            """First."""
            return {"success": True}

        @tool(permissions="r")
        class SecondTool(BaseTool):
            """Second."""
            def run(self) -> dict[str, Any]:
                return {"success": True}

        def helper() -> None:
            """Not a tool."""

        alias = first_tool
    ''')
    module = types.ModuleType("mixed")
    exec(compile(source, "mixed.py", "exec"), module.__dict__)
    module.borrowed = read_head  # defined elsewhere: not this module's tool
    assert [c.__name__ for c in tool_classes(module)] == ["FirstTool", "SecondTool"]


def test_the_decorator_refuses_what_cannot_be_a_tool() -> None:
    with pytest.raises(TypeError, match="lambda"):
        tool()(lambda: None)

    async def stream() -> Any:
        yield {"success": True}

    def pieces() -> Any:
        yield {"success": True}

    with pytest.raises(TypeError, match="generator"):
        tool()(stream)
    with pytest.raises(TypeError, match="generator"):
        tool()(pieces)
    with pytest.raises(ValueError, match="cannot be a tool name"):
        tool(name="has space")(write_text)
    with pytest.raises(TypeError, match="name"):

        @tool(name="Other")
        class Named(BaseTool):
            def run(self) -> dict[str, Any]:
                return {"success": True}

    with pytest.raises(TypeError, match="classes and functions"):
        tool()(print)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="not decorated"):
        tool_class(lambda: None)


def test_the_harness_runs_a_function_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    code = run_main(read_head, ["a.txt", "--lines", "2", "--json", "--workspace", str(tmp_path)])
    assert code == 0
    assert '"head": [\n    "one",\n    "two"\n  ]' in capsys.readouterr().out
