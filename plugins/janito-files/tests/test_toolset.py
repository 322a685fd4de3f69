"""The toolset as janito sees it: discovery, permissions, schemas, privileges."""

from __future__ import annotations

from typing import Any

from files_helpers import EXPECTED, fails

from janito_core import Registry, Workspace


def test_entry_point_advertises_the_files_toolset(janito: Any) -> None:
    registry = Registry(workspace=Workspace(janito.workspace), autoload=(), allowed=None)
    spec = registry.toolsets()["files"]
    assert spec.distribution == "janito-files"
    assert spec.module == "janito_files"


def test_every_tool_loads_with_least_privilege(files: Any) -> None:
    registry = files.registry
    assert registry.get_all_tool_permissions() == EXPECTED
    assert not registry.load_errors


def test_schemas_describe_every_parameter(files: Any) -> None:
    for name in EXPECTED:
        schema = files.registry.get_function_schema(name)["function"]
        assert schema["description"], name
        for field, spec in schema["parameters"]["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"


def test_original_parameter_names(files: Any) -> None:
    def params(name: str) -> list[str]:
        return list(files.registry.get_function_schema(name)["function"]["parameters"]
                    ["properties"])

    assert params("ReadFile")[:3] == ["filepath", "start_line", "max_lines"]
    assert params("CreateFile") == ["filepath", "content", "overwrite"]
    assert params("SearchText")[:4] == ["paths", "query", "use_regex", "case_sensitive"]
    assert "max_results" in params("SearchText")
    assert params("WordCount")[0] == "filepath"
    assert params("ReplaceTextInFile") == ["filepath", "search_text", "replacement_text",
                                          "replace_all"]
    assert params("MoveFile") == ["src_path", "dest_path", "overwrite"]
    assert params("DeleteFile") == ["filepath"]
    assert params("CreateDirectory") == ["path"]
    assert params("RemoveDirectory") == ["path", "recursive"]
    assert params("ListFiles")[:2] == ["paths", "max_depth"]
    assert params("FindFiles")[:3] == ["paths", "pattern", "max_depth"]
    assert params("ReadMultipleFiles")[0] == "paths"


def test_strict_schemas_are_available(files: Any) -> None:
    for name in EXPECTED:
        schema = files.registry.get_function_schema(name, strict=True)["function"]
        assert schema["parameters"]["type"] == "object"


def test_read_only_privileges_deny_the_write_tools(janito: Any) -> None:
    janito.load("files", privileges="r")
    (janito.workspace / "a.txt").write_text("hello\n")
    assert janito.call("ReadFile", filepath="a.txt")["success"] is True
    for name, permissions in EXPECTED.items():
        if "w" in permissions:
            result = janito.call(name, {})
            fails(result, "permission_denied")
    fails(janito.call("CreateFile", filepath="b.txt", content="x"), "permission_denied")
    assert not (janito.workspace / "b.txt").exists()
    assert (janito.workspace / "a.txt").read_text() == "hello\n"
