"""``janito schema`` and ``janito run``, run for real (see test_cli.py for the set-up)."""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import Any, Literal, TypedDict

import pytest
from test_cli import Janito, Ran, Sites, build_sites, make_janito

from janito_core import Registry, tool
from janito_core.cli import tool_help


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    return build_sites(tmp_path_factory.mktemp("cli-run-sites"))


@pytest.fixture
def janito(testkit_dir: Path, workspace: Path, tmp_path: Path) -> Janito:
    return make_janito(testkit_dir, workspace, tmp_path)


# -- janito schema ------------------------------------------------------------------------


def test_schema_openai_is_the_default_and_covers_every_loaded_tool(janito: Janito) -> None:
    ran = janito("schema", "-t", "testkit", "-r")
    assert ran.code == 0, ran
    tools = ran.json()
    loaded = [r["name"] for r in janito("tools", "-t", "testkit", "-r", "--json").json()
              if r["status"] == "loaded"]
    assert [t["function"]["name"] for t in tools] == loaded
    assert "WriteNote" not in loaded  # denied tools have no schema to offer
    read_note = next(t for t in tools if t["function"]["name"] == "ReadNote")
    assert read_note == {"type": "function", "function": {
        "name": "ReadNote",
        "description": "Read a note from the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"filepath": {"type": "string",
                                        "description": "The note's path, relative to the workspace."}},
            "required": ["filepath"],
            "additionalProperties": False,
        },
    }}
    assert ran.err == ""  # without --strict, no strict-mode diagnostics


def test_schema_every_format(janito: Janito) -> None:
    formats = ("openai", "openai-responses", "anthropic", "gemini", "mcp")
    ran = janito.many({
        **{fmt: ["schema", "-t", "testkit", "ReadNote", "Nothing", "WriteNote", "--format", fmt]
           for fmt in formats},
        "run-thing": ["schema", "-t", "testkit", "RunThing", "--format", "mcp"],
    })
    shapes = {}
    for fmt in formats:
        assert ran[fmt].code == 0, ran[fmt]
        shapes[fmt] = ran[fmt].json()
    parameters = shapes["openai"][0]["function"]["parameters"]
    read, nothing, write = shapes["openai-responses"]
    assert read == {"type": "function", "name": "ReadNote",
                    "description": "Read a note from the workspace.",
                    "parameters": parameters, "strict": False}  # always explicit: it defaults on
    assert nothing["parameters"]["properties"] == {}
    read, nothing, write = shapes["anthropic"]
    assert read == {"name": "ReadNote", "description": "Read a note from the workspace.",
                    "input_schema": parameters}
    read, nothing, write = shapes["gemini"]
    assert read == {"name": "ReadNote", "description": "Read a note from the workspace.",
                    "parameters": {"type": "OBJECT", "properties": {"filepath": {
                        "type": "STRING", "description": "The note's path, relative to the workspace."}},
                        "required": ["filepath"]}}
    assert nothing == {"name": "Nothing", "description": "Needs no permission at all."}
    read, nothing, write = shapes["mcp"]
    assert read == {"name": "ReadNote", "description": "Read a note from the workspace.",
                    "inputSchema": parameters,
                    "annotations": {"readOnlyHint": True, "destructiveHint": False,
                                    "openWorldHint": False}}
    assert write["annotations"] == {"readOnlyHint": False, "destructiveHint": True,
                                    "openWorldHint": False}
    run_thing = ran["run-thing"].json()[0]
    assert run_thing["annotations"]["openWorldHint"] is True


def test_schema_strict_mode_and_its_fallback(janito: Janito) -> None:
    both = ["schema", "-t", "testkit", "ReadNote", "Typed", "--strict"]
    runs = janito.many({"openai": both, "openai-responses": [*both, "--format", "openai-responses"],
                        "anthropic": [*both, "--format", "anthropic"]})
    ran = runs["openai"]
    assert ran.code == 0, ran
    read, typed = ran.json()
    assert read["function"]["strict"] is True
    assert read["function"]["parameters"]["additionalProperties"] is False
    # Typed takes a free-form dict[str, int]: its ordinary schema, strict off, and why.
    assert typed["function"]["strict"] is False
    assert typed["function"]["parameters"]["properties"]["mapping"]["type"] == ["object", "null"]
    diagnostic = ("janito: Typed: no strict schema: parameter 'mapping': a free-form object "
                  "(dict[str, T]) cannot be expressed in strict mode; the non-strict schema is used")
    assert ran.err.splitlines() == [diagnostic]
    assert "janito:" not in ran.out

    assert [t["strict"] for t in runs["openai-responses"].json()] == [True, False]
    anthropic = runs["anthropic"].json()
    assert anthropic[0]["strict"] is True and "strict" not in anthropic[1]
    assert runs["anthropic"].err.splitlines() == [diagnostic]


def test_schema_of_a_tool_that_is_not_loaded_is_a_usage_error(janito: Janito) -> None:
    cases = {"Nope": ["Nope"], "SaysNo": ["SaysNo"], "WriteNote": ["-r", "WriteNote"],
             "Nope, Other": ["ReadNote", "Nope", "Other"]}
    ran = janito.many({missing: ["schema", "-t", "testkit", *args] for missing, args in cases.items()})
    said = {
        "Nope": "Nope is not a loaded tool (see `janito tools`)",
        "SaysNo": "SaysNo is not available here: ",
        "WriteNote": "WriteNote is denied: it needs write (-w) permission, which is not granted",
        "Nope, Other": "Nope is not a loaded tool (see `janito tools`); "
                       "Other is not a loaded tool (see `janito tools`)",
    }
    for missing, done in ran.items():
        assert done.code == 2, done
        assert done.out == ""
        assert done.err.strip().startswith(f"janito: error: {said[missing]}"), done


def test_schema_and_run_of_a_tool_whose_toolset_is_not_loaded_say_how_to_load_it(
        janito: Janito) -> None:
    ran = janito.many({"schema": ["schema", "Typed"], "run": ["run", "Typed", "--count", "1"],
                       "help": ["run", "Typed", "--help"]})
    hint = "Typed belongs to toolset 'testkit' (janito-testkit), which is installed but not loaded"
    assert ran["schema"].code == 2 and f"{hint}: add -t testkit" in ran["schema"].err
    assert ran["help"].code == 2 and f"{hint}: add -t testkit" in ran["help"].err
    result = ran["run"].json()
    assert ran["run"].code == 1 and result["error_type"] == "unknown_tool"
    assert (result["toolset"], result["distribution"]) == ("testkit", "janito-testkit")
    assert "add -t testkit" in ran["run"].err  # a refusal says so on stderr too


def test_refusals_say_one_line_on_stderr(janito: Janito) -> None:
    ran = janito.many({
        "invalid": ["run", "-t", "testkit", "Typed", "--count", "many"],
        "denied": ["run", "-r", "-t", "testkit", "RunThing", "--command", "ls"],
    })
    for key, expected in {"invalid": "janito: invalid arguments for Typed: count: ",
                          "denied": "janito: RunThing needs execute (-x) permission"}.items():
        done = ran[key]
        assert done.code == 1, done
        assert done.err.startswith(expected) and done.err.count("\n") == 1, done
        assert done.json()["error"] in done.err


def test_run_help_shows_the_tools_parameters(janito: Janito) -> None:
    ran = janito("run", "-t", "testkit", "Typed", "--help")
    assert ran.code == 0, ran
    assert ran.out.startswith("usage: janito run Typed ")
    assert "  --count  (integer; required)\n      A required integer." in ran.out
    assert "  --mode  (one of \"fast\", \"slow\"; default \"fast\")" in ran.out
    assert "  --items  (array of integers, or null)" in ran.out


class _Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class _Point:
    x: float
    y: float = 0.0


class _Options(TypedDict, total=False):
    depth: int
    names: list[str] | None


def test_run_help_words_every_shape_one_way() -> None:
    """Each type reads one way: the items of an array are set apart from the array's own
    null, objects list their fields, enums their values."""

    @tool()
    def shapes(mixed: list[str | int | float | None] | None = None, maybe: int | None = None,
               ints: list[int] | None = None, mode: Literal["fast", "slow"] | None = None,
               color: _Color = _Color.RED, point: _Point | None = None,
               points: list[_Point] | None = None, counts: dict[str, int] | None = None,
               pair: tuple[int, str] | None = None, names: str | list[str] = "",
               anything: Any = None, options: _Options | None = None,
               letters: list[Literal["a", "b"]] | None = None, flag: bool = False) -> dict[str, Any]:
        """Take every shape."""
        return {"success": True}

    registry = Registry(autoload=())
    name = registry.add_tool(shapes).name
    words = {line.split("  (", 1)[0].strip(): line.split("  (", 1)[1]
             for line in tool_help(registry, name).splitlines() if line.startswith("  --")}
    assert words == {
        "--mixed": "array of (string, integer, number, or null), or null)",
        "--maybe": "integer or null)",
        "--ints": "array of integers, or null)",
        "--mode": 'one of "fast", "slow", or null)',
        "--color": 'one of "red", "blue"; default "red")',
        "--point": "object {x: number, y: number (optional)}, or null)",
        "--points": "array of objects {x: number, y: number (optional)}, or null)",
        "--counts": "object mapping names to integers, or null)",
        "--pair": "array [integer, string], or null; 2 items)",
        "--names": 'string, or array of strings; default "")',
        "--anything": "any value)",
        "--options": "object {depth: integer (optional), names: array of strings, or null "
                     "(optional)}, or null)",
        "--letters": 'array of (one of "a", "b"), or null)',
        "--flag": "boolean; default false)",
    }


# -- janito run: results and exit status --------------------------------------------------


def test_run_success_both_ways(janito: Janito) -> None:
    (janito.cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    as_json = janito("run", "-t", "testkit", "ReadNote", "--args", '{"filepath": "a.txt"}')
    as_options = janito("run", "ReadNote", "--filepath", "a.txt", "-t", "testkit")
    for ran in (as_json, as_options):
        assert ran.code == 0, ran
        assert ran.json() == {"success": True, "filepath": "a.txt", "text": "alpha\n"}
        assert ran.err == ""
    assert as_json.out == as_options.out
    no_arguments = janito("run", "-t", "testkit", "ReturnsNoSuccess")
    assert no_arguments.code == 0, no_arguments
    assert no_arguments.json() == {"success": True, "answer": 42}


def test_progress_goes_to_stderr_never_stdout(janito: Janito) -> None:
    ran = janito("run", "-t", "testkit", "ChattyRead")
    assert ran.code == 0, ran
    assert json.loads(ran.out) == {"success": True}
    for text in ("starting", "halfway", "finished", "careful", "failed once"):
        assert text in ran.err
        assert text not in ran.out


def test_what_a_toolset_prints_never_reaches_stdout(janito: Janito, sites: Sites) -> None:
    ran = janito.many({"run": ["run", "-t", "forms", "Loud"], "tools": ["tools", "-t", "forms", "--json"],
                       "toolsets": ["toolsets", "-t", "forms", "--json"],
                       "schema": ["schema", "-t", "forms", "Loud"]}, path=[sites.forms])
    assert ran["run"].code == 0, ran["run"]
    assert json.loads(ran["run"].out) == {"success": True}
    assert "Loud talks on stdout while running" in ran["run"].err
    for command, done in ran.items():
        assert done.code == 0, done
        json.loads(done.out)
        if command in ("run", "schema"):  # the others may list Loud without importing it
            assert "acme_forms.loud talks on stdout while imported" in done.err


def test_a_bad_arguments_json_is_a_usage_error(janito: Janito) -> None:
    texts = ['{"filepath": ', "", "nan-sense", "{'single': 'quotes'}"]
    ran = janito.many({text: ["run", "-t", "testkit", "ReadNote", "--args", text] for text in texts})
    for done in ran.values():
        assert done.code == 2, done
        assert done.out == ""
        assert done.err.startswith("janito: error: --args is not valid JSON")


def _failed(ran: Ran, error_type: str) -> dict[str, Any]:
    """The result of a failed run: exit 1, the JSON result alone on stdout."""
    assert ran.code == 1, ran
    result: dict[str, Any] = ran.json()
    assert result["success"] is False, ran
    assert result["error_type"] == error_type, ran
    assert isinstance(result["error"], str) and result["error"], ran
    return result


def test_every_failure_kind_exits_1_with_the_result_on_stdout(janito: Janito) -> None:
    ran = janito.many({key: ["run", "-t", "testkit", *args] for key, args in {
        "array": ["Typed", "--args", "[1, 2]"],
        "fields": ["Typed", "--args", '{"count": "5x", "bogus": 1, "mode": "warp"}'],
        "option": ["Typed", "--count", "5x"],
        "missing": ["Typed"],
        "unknown": ["Nothng"],
        "unavailable": ["SaysNo"],
        "denied": ["-r", "WriteNote", "--filepath", "n.txt", "--text", "x"],
        "denied-all": ["-w", "-x", "Everything"],
        "outside": ["ReadNote", "--filepath", "../../etc/passwd"],
        "escapes": ["Escapes"],
        "workspace-error": ["NeedsWorkspaceError"],
        "raises": ["Raises", "--message", "the disk is on fire"],
        "exits": ["Exits"],
        "list": ["ReturnsList"],
        "bad-success": ["ReturnsBadSuccess"],
        "set": ["ReturnsObject", "--kind", "set"],
        "not-found": ["ReadNote", "--filepath", "absent.txt"],
    }.items()})

    result = _failed(ran["array"], "invalid_arguments")
    assert result["details"] == [{"field": "(arguments)", "error": "expected an object, got an array"}]
    result = _failed(ran["fields"], "invalid_arguments")
    assert {d["field"] for d in result["details"]} == {"count", "bogus", "mode"}
    result = _failed(ran["option"], "invalid_arguments")
    assert [d["field"] for d in result["details"]] == ["count"]
    result = _failed(ran["missing"], "invalid_arguments")
    assert result["details"] == [{"field": "count", "error": "missing required field"}]

    result = _failed(ran["unknown"], "unknown_tool")
    assert result["suggestions"] == ["Nothing"]
    assert "did you mean Nothing?" in result["error"]

    result = _failed(ran["unavailable"], "tool_unavailable")
    assert "should_load() returned False" in result["error"]

    result = _failed(ran["denied"], "permission_denied")
    assert result["error"] == "WriteNote needs write (-w) permission, which is not granted"
    assert not (janito.cwd / "n.txt").exists()
    _failed(ran["denied-all"], "permission_denied")

    result = _failed(ran["outside"], "outside_workspace")
    assert result["filepath"] == "../../etc/passwd"
    _failed(ran["escapes"], "outside_workspace")
    _failed(ran["workspace-error"], "outside_workspace")

    result = _failed(ran["raises"], "tool_exception")
    assert result["error"] == "Raises raised ValueError: the disk is on fire"
    assert "Traceback" not in ran["raises"].err + ran["raises"].out
    result = _failed(ran["exits"], "tool_exception")
    assert "SystemExit" in result["error"]

    _failed(ran["list"], "invalid_result")
    _failed(ran["bad-success"], "invalid_result")
    result = _failed(ran["set"], "invalid_result")
    assert "result['data']['rows'][1]['value'] is a set" in result["error"]

    result = _failed(ran["not-found"], "not_found")
    assert result["filepath"] == "absent.txt"


def test_hook_plugins_refuse_and_fail_through_run(janito: Janito, sites: Sites) -> None:
    run = ["run", "-t", "testkit"]
    ran = janito.many({"refused": [*run, "RunThing", "--command", "ls"],
                       "crashed": [*run, "ChattyNone"], "allowed": [*run, "Nothing"]},
                      path=[sites.guard])
    result = _failed(ran["refused"], "refused")
    assert result["error"] == "the guard does not allow commands"
    result = _failed(ran["crashed"], "plugin_error")
    assert "the guard crashed" in result["error"] and "acme-guard" in result["error"]
    assert "starting" not in ran["crashed"].err  # the tool itself never ran
    assert ran["allowed"].code == 0, ran["allowed"]
    # JANITO_PLUGINS leaves the guard out.
    alone = janito(*run, "RunThing", "--command", "ls", path=[sites.guard],
                   env={"JANITO_PLUGINS": "someone-else"})
    assert alone.code == 0 and alone.json() == {"success": True, "command": "ls"}, alone


def test_large_results_are_cut(janito: Janito) -> None:
    ran = janito("run", "-t", "testkit", "Huge", "--chars", "150000")
    assert ran.code == 0, ran
    result = ran.json()
    assert result["truncated"] is True and result["tail"] == "kept"
    assert "[... truncated: " in result["text"] and len(result["text"]) < 150000


# -- janito run: the --name value form ----------------------------------------------------


def test_options_become_arguments(janito: Janito, sites: Sites) -> None:
    cases = {
        "repeated": ["--max-lines", "5", "--paths", "a", "--paths", "b c", "--verbose"],
        "equals": ["--max-lines=7", "--paths", '["x", "y"]', "--paths", "z", "--text="],
        "flag-then-option": ["--verbose", "--text", "after a flag"],
        "last-wins": ["--verbose", "false", "--text", "first", "--text", "last"],
        "negative": ["--text", "-5", "--max-lines", "-2"],
        "dash-value": ["--text=-x"],
        "union-repeated": ["--names", "a", "--names", "b c"],
        "union-json": ["--names", '["x", "y"]', "--names=z"],
        "union-once": ["--names", "only"],
    }
    ran = janito.many({key: ["run", "-t", "forms", "Echo", *options] for key, options in cases.items()},
                      path=[sites.forms])
    for done in ran.values():
        assert done.code == 0, done
    got = {key: done.json()["received"] for key, done in ran.items()}
    assert got["repeated"]["max_lines"] == 5 and got["repeated"]["verbose"] is True
    assert got["repeated"]["paths"] == ["a", "b c"]
    assert got["equals"]["max_lines"] == 7 and got["equals"]["text"] == ""
    assert got["equals"]["paths"] == ["x", "y", "z"]
    assert got["flag-then-option"]["verbose"] is True
    assert got["flag-then-option"]["text"] == "after a flag"
    assert got["last-wins"]["verbose"] is False and got["last-wins"]["text"] == "last"
    assert got["negative"]["text"] == "-5" and got["negative"]["max_lines"] == -2
    assert got["dash-value"]["text"] == "-x"
    # a "string or list" parameter (anyOf with an array member) takes lists the same way
    assert got["union-repeated"]["names"] == ["a", "b c"]
    assert got["union-json"]["names"] == ["x", "y", "z"]
    assert got["union-once"]["names"] == ["only"]


def test_a_value_that_looks_like_an_option_stays_a_value(janito: Janito, sites: Sites) -> None:
    """``--text -x`` sends the text "-x"; it grants no privilege and loads no toolset."""
    ran = janito("run", "-t", "forms", "-t", "testkit", "Echo", "--text", "-x", "--work", "-r",
                 path=[sites.forms])
    assert ran.code == 0, ran
    assert ran.json()["received"]["text"] == "-x"
    assert ran.json()["received"]["work"] == "-r"
    # -r alone was asked for: the value "-x" must not have granted execute.
    denied = janito("run", "-r", "-t", "testkit", "RunThing", "--command", "-x")
    assert denied.code == 1, denied
    assert denied.json()["error_type"] == "permission_denied"


def test_parameters_named_like_a_prefix_of_an_option(janito: Janito, sites: Sites) -> None:
    """``--tool`` is the tool's parameter, not an abbreviation of ``--toolset``."""
    ran = janito("run", "-t", "forms", "Echo", "--tool", "hammer", "--work", "bench", "--ar", "x",
                 path=[sites.forms])
    assert ran.code == 0, ran
    assert ran.json()["received"] == {
        "max_lines": 1, "paths": None, "verbose": False, "text": "",
        "tool": "hammer", "work": "bench", "ar": "x", "names": "",
    }


def test_run_usage_errors(janito: Janito) -> None:
    cases = {
        "not both": ["ReadNote", "--args", '{"filepath": "a"}', "--filepath", "a"],
        "unexpected argument 'a.txt'": ["ReadNote", "a.txt"],
        "unexpected argument '-q'": ["ReadNote", "-q"],
        "unexpected argument 'x'": ["ReadNote", "--", "x"],
    }
    ran = janito.many({fragment: ["run", "-t", "testkit", *args] for fragment, args in cases.items()})
    for fragment, done in ran.items():
        assert done.code == 2, done
        assert done.out == ""
        assert fragment in done.err, done
    no_tool = janito("run")
    assert no_tool.code == 2 and "TOOL" in no_tool.err and no_tool.out == ""


# -- hostile input: lone surrogates and deep nesting ------------------------------------------
# The command runs with PYTHONIOENCODING=utf-8 (strict): a lone surrogate that reached stdout
# unescaped would stop it with UnicodeEncodeError.

ODD_TOOL = '''
from typing import Annotated, Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class OddNames(BaseTool):
    """List names that are not UTF-8, as a folder listing would."""

    # Not in a docstring: Python 3.13 cannot compile a docstring holding a lone surrogate.
    def run(self, prefix: Annotated[str, "Put before each name \\ud800."] = "") -> dict[str, Any]:
        return {"success": True, "names": [prefix + "a\\udcffb.txt"], "k\\ud800": 1}


@tool(permissions="r")
class OddSkipped(BaseTool):
    """Never loads here."""

    @classmethod
    def should_load(cls) -> bool:
        return cls.skip("the folder \\udcff is missing")

    def run(self) -> dict[str, Any]:
        return {"success": True}
'''


@pytest.fixture(scope="module")
def odd_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers.distributions import write_distribution

    root = tmp_path_factory.mktemp("odd-site")
    write_distribution(root, "acme-odd", toolsets={"odd": "acme_odd"},
                       files={"acme_odd/__init__.py": "", "acme_odd/odd_names.py": ODD_TOOL})
    return root


def _utf8_json(ran: Ran) -> Any:
    assert "Traceback" not in ran.err, ran
    assert "\ufffd" not in ran.out, ran  # the output decoded as UTF-8 without a replacement
    return ran.json()


def test_run_with_a_lone_surrogate_in_a_key_or_a_value(janito: Janito) -> None:
    ran = janito.many({
        "key": ["run", "-t", "testkit", "Typed", "--args", '{"count": 1, "\\ud800": 1}'],
        "value": ["run", "-t", "testkit", "Typed", "--args", '{"count": 1, "name": "\\udcff"}'],
        "option key": ["run", "-t", "testkit", "Typed", "--count", "1", "--n\udcffame", "x"],
        "option value": ["run", "-t", "testkit", "Typed", "--count", "1", "--name", "x\udcff"],
        "tool name": ["run", "-t", "testkit", "Ty\udcffped", "--args", "{}"],
    })
    for key, done in ran.items():
        assert done.code == (0 if "value" in key else 1), done
        assert "Traceback" not in done.err, done
    for key in ("key", "option key", "tool name"):
        _utf8_json(ran[key])
    assert _failed(ran["key"], "invalid_arguments")["details"] == [
        {"field": "\\ud800", "error": "unknown field"}]
    assert _failed(ran["option key"], "invalid_arguments")["details"][0]["field"] == "n\\udcffame"
    # a string value is taken with each unpaired surrogate replaced by U+FFFD
    assert ran["value"].json()["values"]["name"] == "\ufffd"
    assert ran["option value"].json()["values"]["name"] == "x\ufffd"
    assert "Ty\\udcffped" in _failed(ran["tool name"], "unknown_tool")["error"]


def test_run_with_json_nested_100000_deep_is_a_usage_error(janito: Janito) -> None:
    deep = {
        "array": "[" * 100_000,
        "object": '{"a":' * 20_000 + "1" + "}" * 20_000,  # an argument holds at most 128 KiB
        "inside": '{"count": 1, "items": ' + "[" * 100_000 + "}",
    }
    ran = janito.many({
        **{key: ["run", "-t", "testkit", "Typed", "--args", text] for key, text in deep.items()},
        "option": ["run", "-t", "testkit", "Typed", "--count", "1", "--items", "[" * 100_000],
    })
    for key, done in ran.items():
        assert done.code == 2, (key, done)
        assert done.out == "", (key, done)
        assert "nested too deeply" in done.err and "Traceback" not in done.err, (key, done)


def test_results_and_listings_with_lone_surrogates(janito: Janito, odd_site: Path) -> None:
    ran = janito.many({
        "run": ["run", "-t", "odd", "OddNames", "--prefix", "p"],
        "tools json": ["tools", "-t", "odd", "--json"],
        "tools": ["tools", "-t", "odd"],
        **{f"schema {fmt}": ["schema", "-t", "odd", "OddNames", "--format", fmt]
           for fmt in ("openai", "openai-responses", "anthropic", "gemini", "mcp")},
    }, path=[odd_site])
    for key, done in ran.items():
        assert done.code == 0, (key, done)
        assert "Traceback" not in done.err and "\ufffd" not in done.out, (key, done)
    assert _utf8_json(ran["run"]) == {"success": True, "names": ["pa\\udcffb.txt"], "k\\ud800": 1}
    # The command's own JSON keeps a lone surrogate as its \u escape: the same string.
    (row,) = [r for r in _utf8_json(ran["tools json"]) if r["name"] == "OddSkipped"]
    assert row["reason"] == "the folder \udcff is missing"
    assert "\\udcff" in ran["tools json"].out
    assert "the folder \\udcff is missing" in ran["tools"].out
    (schema,) = _utf8_json(ran["schema openai"])
    assert schema["function"]["parameters"]["properties"]["prefix"]["description"] == (
        "Put before each name \ud800.")
    for fmt in ("openai-responses", "anthropic", "gemini", "mcp"):
        _utf8_json(ran[f"schema {fmt}"])


def test_json_output_on_an_ascii_stdout(janito: Janito, odd_site: Path) -> None:
    ran = janito("tools", "-t", "odd", "--json", path=[odd_site], env={"PYTHONIOENCODING": "ascii"})
    assert ran.code == 0, ran
    assert ran.out.isascii()
    assert any(r["reason"] == "the folder \udcff is missing" for r in ran.json())
    table = janito("tools", "-t", "odd", path=[odd_site], env={"PYTHONIOENCODING": "ascii"})
    assert table.code == 0, table
    assert "the folder \\udcff is missing" in table.out
