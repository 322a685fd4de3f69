"""The toolset as janito sees it: discovery, permissions, schemas, privileges."""

from __future__ import annotations

from typing import Any

import pytest
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


def test_janito_4_50_parameter_names(files: Any) -> None:
    """The signatures janito 4.50 declares, in its order; janito's own extras come after."""
    def params(name: str) -> list[str]:
        return list(files.registry.get_function_schema(name)["function"]["parameters"]
                    ["properties"])

    assert params("ReadFile")[:3] == ["filepath", "start_line", "max_lines"]
    assert params("CreateFile") == ["filepath", "content", "overwrite"]
    assert params("SearchText")[:8] == ["paths", "query", "case_sensitive", "max_depth",
                                        "max_results", "count_only", "respect_gitignore",
                                        "exclude"]
    assert params("SearchRegex")[:8] == ["paths", "pattern", "case_sensitive", "max_depth",
                                         "max_results", "count_only", "respect_gitignore",
                                         "exclude"]
    assert params("WordCount")[0] == "filepath"
    assert params("ReplaceTextInFile") == ["filepath", "old_str", "new_str", "replace_all"]
    assert params("MoveFile") == ["source", "destination", "overwrite", "create_dirs",
                                  "preserve_metadata"]
    assert params("DeleteFile") == ["filepath", "force"]
    assert params("CreateDirectory") == ["directory", "parents", "exist_ok"]
    assert params("RemoveDirectory") == ["directory", "recursive", "force"]
    assert params("ListFiles")[:5] == ["directory", "pattern", "recursive", "max_depth",
                                       "respect_gitignore"]
    assert params("FindFiles")[:12] == ["paths", "pattern", "exclude", "file_type", "min_size",
                                        "max_size", "modified_within_days", "older_than_days",
                                        "max_depth", "max_results", "sort_by",
                                        "respect_gitignore"]
    assert params("ReadMultipleFiles")[0] == "filepaths"


@pytest.mark.parametrize(("tool", "arguments", "old", "new"), [
    ("ReplaceTextInFile", {"filepath": "a.txt", "search_text": "a", "replacement_text": "b"},
     "search_text", "old_str"),
    ("ReplaceTextInFile", {"filepath": "a.txt", "search_text": "a", "replacement_text": "b"},
     "replacement_text", "new_str"),
    ("MoveFile", {"src_path": "a.txt", "dest_path": "b.txt"}, "src_path", "source"),
    ("MoveFile", {"src_path": "a.txt", "dest_path": "b.txt"}, "dest_path", "destination"),
    ("ListFiles", {"paths": ".", "max_depth": 0}, "paths", "directory"),
    ("ListFiles", {"directory": ".", "include_gitignored": True}, "include_gitignored",
     "respect_gitignore"),
    ("FindFiles", {"paths": ".", "include_gitignored": True}, "include_gitignored",
     "respect_gitignore"),
    ("CreateDirectory", {"path": "d"}, "path", "directory"),
    ("RemoveDirectory", {"path": "d"}, "path", "directory"),
    ("ReadMultipleFiles", {"paths": ["a.txt"]}, "paths", "filepaths"),
    ("SearchText", {"paths": ".", "query": "a", "use_regex": True}, "use_regex", "SearchRegex"),
    ("SearchRegex", {"paths": ".", "query": "a"}, "query", "pattern"),
])
def test_an_old_parameter_name_is_refused_with_its_new_name(
        files: Any, tool: str, arguments: dict[str, Any], old: str, new: str) -> None:
    (files.workspace / "a.txt").write_text("a\n")
    before = sorted(p.name for p in files.workspace.iterdir())
    result = fails(files.call(tool, arguments), "invalid_arguments")
    details = {d["field"]: d["error"] for d in result["details"]}
    assert details[old].startswith("unknown field: ") and new in details[old], details
    assert sorted(p.name for p in files.workspace.iterdir()) == before  # nothing was done


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


@pytest.mark.parametrize("tool, arguments, field", [
    ("WordCount", {"filepath": "a.txt", "max_bytes": 0}, "max_bytes"),
    ("ListFiles", {"directory": " "}, "directory"),
    ("SearchText", {"paths": ["", " "], "query": "x"}, "paths"),
    ("SearchRegex", {"paths": ["a.txt", ""], "pattern": "x"}, "paths"),
    ("FindFiles", {"paths": [" "]}, "paths"),
    ("ReadMultipleFiles", {"filepaths": ["\t"]}, "filepaths"),
])
def test_rules_the_tools_enforce_are_declared_and_refused_by_dispatch(
        files: Any, tool: str, arguments: dict[str, Any], field: str) -> None:
    """A value the tool cannot use is refused before run(), with details, because the
    schema says so: blank paths in a list, a blank folder, max_bytes below 1."""
    result = fails(files.call(tool, arguments), "invalid_arguments")
    assert result["details"] and result["details"][0]["field"].split("[")[0] == field, result
