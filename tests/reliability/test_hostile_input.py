"""Hostile model input: arbitrary JSON sent to every installed tool, in a temporary workspace.

Property-based (hypothesis, derandomised so every run sends the same inputs). For every
tool of every repository toolset (files, system, skills, gmail, onedrive; the last two
talk to the suite's loopback servers) the arguments are drawn from: values of the right
type, wrong types, huge strings, deep nesting (as objects and as JSON text), NaN and
infinities, lone surrogates and other awkward unicode, nulls, unknown fields, arguments
that are not an object, and malformed JSON text. Each input goes through ``call_tool``
(as a mapping, as JSON text or as bytes) or through ``execute_tool_calls`` in one of the
four provider shapes. Then:

- no exception escapes; every result is a JSON object (strict JSON: no NaN) with a boolean
  ``success``, and a failure has ``error`` and ``error_type``; every result, and every item
  ``execute_tool_calls`` returns, encodes as UTF-8 (no lone surrogate gets through);
- nothing outside the workspace changes: a sentinel tree next to it (and the current
  directory, which is outside it too) keeps every entry's kind, size, mtime, mode and
  content hash, and the sentinel's text never shows up in a result.

The tools that execute code (RunBashCode, RunPythonCode, RunPythonFile) never get code
they would run: with execute granted they get only arguments whose code (or file) field
is of a type validation refuses, and a hook that refuses any call reaching them guards
the claim; with execute withheld they get anything, and must be denied.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from janito_core import Registry, hookimpl
from janito_core.dispatch import call_tool, execute_tool_calls

EXAMPLES = int(os.environ.get("JANITO_RELIABILITY_EXAMPLES", "200"))
EXECUTE_TOOLS = ("RunBashCode", "RunPythonCode", "RunPythonFile")
CODE_FIELDS = {"RunBashCode": "code", "RunPythonCode": "code", "RunPythonFile": "file_path"}


def _collect_tools() -> list[tuple[str, str]]:
    """(tool, toolset) of every tool of every repository toolset, whatever its status."""
    registry = Registry(autoload=(), allowed=None)
    found = registry.toolsets()
    for name in rel.ALL_TOOLSETS:
        if name in found:
            registry.add_toolset(name)
    return [(r.name, r.toolset) for r in registry.records()]


ALL_TOOLS = _collect_tools()
FUZZED = [name for name, _ in ALL_TOOLS if name not in EXECUTE_TOOLS]
EXECUTORS = [name for name, _ in ALL_TOOLS if name in EXECUTE_TOOLS]

SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
    suppress_health_check=list(HealthCheck), print_blob=False,
)

# -- the values a model might send -------------------------------------------------------------

AWKWARD = [
    "", " ", ".", "..", "../", "../" * 64, "/", "//", "/etc/passwd", "/proc/self/environ",
    "~", "~/.ssh/id_rsa", "$HOME", "${HOME}", "%s%n%x", "\x00", "a\x00b", "probe.txt\x00.png",
    "C:\\Windows\\system32", "\\\\host\\share\\x", "*", "**/*", "[", "(", ")", "\\", "{", "}",
    "'", '"', "\n", "\r\n", "\t", "\u202e", "\ufeff", "\ud800", "a\udcffb", "é", "日本語", "🙂",
    "NaN", "null", "true", "-1", "1e309", "0x10", "9" * 5000, "-" * 3, "--help", "-rf",
    "https://example.com/", "http://127.0.0.1:9/", "file:///etc/passwd", "INBOX", "Trash",
    "probe.txt", "sub/", "sub/inner.txt", "link-out", "link-out/sentinel-secret.txt", "loop",
    "../outside/sentinel-secret.txt", ".janito/skills/demo/SKILL.md", "demo", "notes.md",
    "a" * 255, "a" * 256, "d/" * 2000,
]
HUGE = ["A" * 300_000, "é" * 100_000, "../" * 20_000, "\n" * 100_000, "x" * 4096 + "\x00"]
SPECIAL_INTS = [0, -1, 1, 2**31, 2**63, -(2**63), 10**30, 10**400]
SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 1e-308, 1e308, 0.5]


def nested_list(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
strings = st.one_of(text, st.sampled_from(AWKWARD), st.sampled_from(HUGE))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(SPECIAL_INTS),
                    st.floats(), st.sampled_from(SPECIAL_FLOATS), strings)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=10,
)
deep = st.one_of(st.sampled_from([50, 500, 3000]).map(nested_list),
                 st.sampled_from([50, 500, 3000]).map(nested_dict))
anything = st.one_of(json_values, deep, strings)

MALFORMED = [
    "{", '{"a":', "[1, 2", "{'a': 1}", "NaN", '{"a": NaN}', '{"a": Infinity}', "\x00",
    '{"a": 1} trailing', '{"a": "\\ud800"}', "{" * 100_000, "[" * 100_000 + "]" * 100_000,
    "", "   ", "null", "[]", "1", '"just a string"', '{"a": 1, "a": 2}', "\ufeff{}",
    '{"__proto__": {"polluted": true}}', "{}" * 1000,
]
malformed_text = st.one_of(st.sampled_from(MALFORMED), text)
# keys a model cannot mean, but JSON text can carry ("\\ud800"); dispatch names them back
SURROGATE_KEYS = ["\ud800", "a\udcffb", "\udfff\ud800", "path\udc80"]


def valid_for(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the type the schema asks for (but any content)."""
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if "anyOf" in prop:
        return st.one_of(*[valid_for(p) for p in prop["anyOf"]])
    kind = prop.get("type")
    if isinstance(kind, list):
        return st.one_of(*[valid_for({**prop, "type": k}) for k in kind])
    if kind == "string":
        return strings
    if kind == "integer":
        return st.one_of(st.integers(-5, 5000), st.sampled_from(SPECIAL_INTS),
                         st.integers().map(str))
    if kind == "number":
        return st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-5, 100),
                         st.sampled_from(SPECIAL_FLOATS))
    if kind == "boolean":
        return st.one_of(st.booleans(), st.sampled_from(["true", "false", "TRUE", " False "]))
    if kind == "array":
        items = valid_for(prop.get("items") or {})
        return st.one_of(st.lists(items, max_size=4), st.lists(items, max_size=3).map(
            lambda v: json.dumps(v, ensure_ascii=False)))
    if kind == "object":
        return st.dictionaries(st.text(max_size=8), json_values, max_size=4)
    if kind == "null":
        return st.none()
    return anything


def field_values(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    valid = valid_for(prop)
    return st.one_of(valid, valid, valid, anything)


def arguments_for(schema: dict[str, Any], override: dict[str, st.SearchStrategy[Any]] | None = None,
                  *, objects_only: bool = False) -> st.SearchStrategy[Any]:
    """Whole arguments: objects of well-typed fields (any content), of sometimes mistyped
    fields, with unknown fields, and now and then anything at all or broken JSON text."""
    props = schema.get("properties", {})
    override = override or {}
    required_keys = [k for k in schema.get("required", []) if k in props]

    def objects(values: Callable[[dict[str, Any]], st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
        required = {k: override.get(k, values(props[k])) for k in required_keys}
        optional = {k: override.get(k, values(p)) for k, p in props.items() if k not in required}
        return st.fixed_dictionaries(required, optional=optional)

    typed = objects(valid_for)
    mixed = objects(field_values)
    extra = st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(SURROGATE_KEYS)),
                            json_values, min_size=1, max_size=2)
    with_extra = st.tuples(mixed, extra).map(lambda t: {**t[1], **t[0]})
    branches = {"typed": typed, "mixed": mixed, "extra": with_extra, "json": json_values,
                "deep": deep, "malformed": malformed_text}
    # explicit weights: hypothesis picks list items evenly, one_of branches less so
    kinds = ["typed"] * 6 + ["mixed"] * 3 + ["extra"]
    if not objects_only:
        kinds += ["json", "deep", "malformed"]
    return st.sampled_from(kinds).flatmap(lambda kind: branches[kind])


# failures the dispatcher answers before a tool runs
DISPATCH_ERRORS = {"invalid_json", "invalid_arguments", "unknown_tool", "tool_unavailable",
                   "permission_denied", "refused"}

ROUTES = ["call_tool:mapping", "call_tool:json", "call_tool:bytes", "openai-chat",
          "openai-responses", "anthropic", "gemini"]


def encode(arguments: Any) -> Any:
    """The JSON text of ``arguments`` (NaN stays the non-standard token a model might send)."""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except (ValueError, RecursionError):
        return arguments


def utf8(value: Any) -> Any:
    """``value`` after checking that its JSON text encodes as UTF-8."""
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    return value


def send(route: str, name: str, arguments: Any, registry: Registry) -> dict[str, Any]:
    """Send one call along ``route``; return the result dict the model would get."""
    if route == "call_tool:mapping":
        return call_tool(name, arguments, registry=registry)
    if route == "call_tool:json":
        return call_tool(name, encode(arguments), registry=registry)
    if route == "call_tool:bytes":
        raw = encode(arguments)
        data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        return call_tool(name, data, registry=registry)
    if route == "openai-chat":
        items = utf8(execute_tool_calls({"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": encode(arguments)}}
        ]}, registry=registry))
        assert len(items) == 1 and items[0]["role"] == "tool" and items[0]["tool_call_id"] == "call_1"
        return json.loads(items[0]["content"])
    if route == "openai-responses":
        items = utf8(execute_tool_calls([
            {"type": "reasoning", "id": "r1"},
            {"type": "function_call", "call_id": "fc_1", "name": name, "arguments": encode(arguments)},
        ], registry=registry))
        assert len(items) == 1 and items[0]["type"] == "function_call_output"
        assert items[0]["call_id"] == "fc_1"
        return json.loads(items[0]["output"])
    if route == "anthropic":
        items = utf8(execute_tool_calls({"role": "assistant", "content": [
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "tu_1", "name": name, "input": arguments},
        ]}, registry=registry))
        assert len(items) == 1 and items[0]["type"] == "tool_result"
        assert items[0]["tool_use_id"] == "tu_1"
        result = json.loads(items[0]["content"])
        assert items[0]["is_error"] is (not result.get("success", False))
        return result
    items = utf8(execute_tool_calls({"role": "model", "parts": [
        {"text": "calling"}, {"functionCall": {"name": name, "args": arguments}},
    ]}, registry=registry))
    assert len(items) == 1 and set(items[0]) == {"functionResponse"}
    response = items[0]["functionResponse"]
    assert response["name"] == name
    return response["response"]


def check_result(result: Any, name: str) -> dict[str, Any]:
    assert isinstance(result, dict), result
    assert isinstance(result.get("success"), bool), result
    text = json.dumps(result, allow_nan=False)  # strict JSON: raises on NaN or odd types
    utf8(result)
    if not result["success"]:
        assert isinstance(result.get("error"), str) and result["error"], result
        assert isinstance(result.get("error_type"), str) and result["error_type"], result
    assert rel.SENTINEL_TEXT not in text, f"{name} showed a file from outside the workspace"
    rel.swept(result, f"hostile {name}")
    return result


# -- the place the inputs land in ----------------------------------------------------------------


class Arena:
    """A workspace with content, a sentinel tree beside it, and the current directory."""

    def __init__(self, root: Path, config: Path) -> None:
        self.root = root
        self.workspace = root / "workspace"
        self.outside = rel.make_sentinel_tree(root / "outside")
        self.cwd = root / "cwd"
        self.cwd.mkdir(exist_ok=True)
        (self.cwd / "here.txt").write_text(f"{rel.SENTINEL_TEXT} in the current directory\n",
                                           encoding="utf-8")
        self.config = config
        config.mkdir(parents=True, exist_ok=True)
        self.seed()
        self.before = self.outside_state()

    def seed(self) -> None:
        ws = self.workspace
        ws.mkdir(parents=True, exist_ok=True)
        (ws / "probe.txt").write_text("alpha beta\ngamma\n", encoding="utf-8")
        (ws / "notes.md").write_text("# notes\nsome text\n", encoding="utf-8")
        (ws / "sub").mkdir(exist_ok=True)
        (ws / "sub" / "inner.txt").write_text("inner\n", encoding="utf-8")
        (ws / "script.py").write_text("print('hello')\n", encoding="utf-8")
        # a name that is not UTF-8: listings and searches must still answer in UTF-8
        with open(os.path.join(os.fsencode(ws), b"odd-\xff-name.txt"), "wb") as odd:
            odd.write(b"odd \xfe content\n")
        skill = ws / ".janito" / "skills" / "demo"
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\n"
                                        "Read references/guide.md.\n", encoding="utf-8")
        (skill / "references").mkdir(exist_ok=True)
        (skill / "references" / "guide.md").write_text("guide\n", encoding="utf-8")
        for link, target in (("link-out", self.outside), ("loop", ws / "loop")):
            if not os.path.lexists(ws / link):
                os.symlink(target, ws / link)

    def outside_state(self) -> dict[str, Any]:
        return rel.snapshot(self.root, skip=[self.workspace, self.config])

    def check(self) -> None:
        changes = rel.diff(self.before, self.outside_state())
        assert not changes, "changed outside the workspace:\n" + "\n".join(changes[:20])
        if not self.workspace.is_dir():  # a tool may delete what lies inside; start again
            self.seed()


@pytest.fixture
def arena(tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Arena:
    place = Arena(tmp_path, isolated)
    monkeypatch.chdir(place.cwd)
    return place


def registry_for(arena: Arena, privileges: str = "rwx") -> Registry:
    registry = rel.make_registry(arena.workspace, privileges)
    if "AskUser" in registry.names():
        pytest.skip("AskUser loaded: standard input is a terminal, it would wait for a person")
    return registry


def fuzz(registry: Registry, name: str, arena: Arena, strategy: st.SearchStrategy[Any],
         check: Callable[[dict[str, Any], str], None] | None = None, label: str = "") -> None:
    @SETTINGS
    @given(arguments=strategy, route=st.sampled_from(ROUTES))
    def run(arguments: Any, route: str) -> None:
        result = check_result(send(route, name, arguments, registry), name)
        if check is not None:
            check(result, route)
        arena.check()
        rel.count("hostile inputs sent")
        if result["success"] or result["error_type"] not in DISPATCH_ERRORS:
            rel.count("hostile inputs: reached the tool")
        rel.count(f"hostile inputs: route {route}")

    run()
    rel.count(f"hostile inputs: tools fuzzed{label}")


# -- the tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FUZZED)
def test_hostile_arguments(name: str, arena: Arena) -> None:
    registry = registry_for(arena)
    record = registry.record(name)
    assert record is not None
    schema = registry.schema(name).parameters if record.status == "loaded" else {}
    fuzz(registry, name, arena, arguments_for(schema))


def test_tools_without_credentials_still_answer(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without credentials the gmail and onedrive tools are skipped; a model that calls them
    anyway gets a structured answer, whatever it sends."""
    for name in list(os.environ):
        if name.startswith("JANITO_SECRET_"):
            monkeypatch.delenv(name)
    registry = registry_for(arena)
    skipped = [r.name for r in registry.records() if r.toolset in ("gmail", "onedrive")]
    assert skipped and all(registry.record(n).status == "skipped" for n in skipped), skipped

    def check(result: dict[str, Any], route: str) -> None:
        assert result["success"] is False
        assert result["error_type"] in ("tool_unavailable", "invalid_json", "invalid_arguments"), result

    @settings(SETTINGS, max_examples=max(10, EXAMPLES // 10) * len(skipped))
    @given(name=st.sampled_from(skipped), arguments=arguments_for({}), route=st.sampled_from(ROUTES))
    def run(name: str, arguments: Any, route: str) -> None:
        check(check_result(send(route, name, arguments, registry), name), route)
        arena.check()
        rel.count("hostile inputs sent")
        rel.count("hostile inputs: skipped tools (no credentials)")

    run()


class ExecutionGuard:
    """Refuses, and remembers, any call of an executing tool that passed validation."""

    def __init__(self) -> None:
        self.reached: list[tuple[str, Any]] = []

    @hookimpl(tryfirst=True)
    def janito_tool_call(self, call: Any) -> dict[str, Any] | None:
        if call.name in EXECUTE_TOOLS:
            self.reached.append((call.name, call.arguments))
            return call.refuse("the reliability suite never runs generated code")
        return None


def not_a_string() -> st.SearchStrategy[Any]:
    """Values that validation must refuse for a string field (numbers would be coerced)."""
    return st.one_of(st.none(), st.booleans(), st.lists(json_values, max_size=3),
                     st.dictionaries(st.text(max_size=6), json_values, max_size=3), deep)


@pytest.mark.parametrize("name", EXECUTORS)
def test_executing_tools_refuse_mistyped_code(name: str, arena: Arena) -> None:
    """Execute granted: the code field is never a string, so nothing may run."""
    registry = registry_for(arena)
    guard = ExecutionGuard()
    registry.plugins.register(guard, "reliability-execution-guard", None)
    schema = registry.schema(name).parameters
    field = CODE_FIELDS[name]
    present = arguments_for(schema, {field: not_a_string()}, objects_only=True)
    absent = arguments_for({**schema, "required": [k for k in schema.get("required", []) if k != field],
                            "properties": {k: v for k, v in schema["properties"].items() if k != field}},
                           objects_only=True)
    strategy = st.one_of(present, absent, malformed_text, json_values.filter(lambda v: not isinstance(v, dict)))

    def check(result: dict[str, Any], route: str) -> None:
        assert result["success"] is False
        assert result["error_type"] in ("invalid_arguments", "invalid_json"), result

    fuzz(registry, name, arena, strategy, check, label=" (execute, mistyped)")
    assert guard.reached == []


@pytest.mark.parametrize("name", EXECUTORS)
def test_executing_tools_are_denied_without_execute(name: str, arena: Arena) -> None:
    """Execute withheld: any arguments at all, and the tool must be denied."""
    registry = registry_for(arena, "rw")
    guard = ExecutionGuard()
    registry.plugins.register(guard, "reliability-execution-guard", None)
    schema = rel.make_registry(arena.workspace).schema(name).parameters

    def check(result: dict[str, Any], route: str) -> None:
        assert result["success"] is False
        assert result["error_type"] in ("permission_denied", "invalid_json", "invalid_arguments"), result
        if result["error_type"] == "invalid_arguments":
            assert result["details"][0]["field"] == "(arguments)", result

    fuzz(registry, name, arena, arguments_for(schema), check, label=" (execute, denied)")
    assert guard.reached == []


def test_unknown_and_odd_tool_names(arena: Arena) -> None:
    """The tool name itself is model input too."""
    registry = registry_for(arena)
    names = st.one_of(json_values, st.sampled_from(["", "readfile", "ReadFile ", "Read\x00File",
                                                    "../ReadFile", "__init__", "BaseTool"]))

    @SETTINGS
    @given(name=names, arguments=json_values)
    def run(name: Any, arguments: Any) -> None:
        result = check_result(call_tool(name, arguments, registry=registry), "(name)")
        if name not in registry.names():
            assert result["success"] is False
        rel.count("hostile inputs sent")
        rel.count("hostile inputs: odd tool names")

    run()
    arena.check()


def test_mounted_mcp_tools(arena: Arena) -> None:
    """The ``mcp`` toolset, mounting the suite's SDK server: its tools get the same inputs."""
    pytest.importorskip("janito_mcp")
    pytest.importorskip("mcp.server.mcpserver")
    config = arena.config / "mcp.json"
    config.write_text(json.dumps({"servers": {"rel": {
        "command": sys.executable, "args": [str(Path(__file__).with_name("rel_mcp_server.py"))],
        "env": {"REL_TOKEN": "${secret:mcp_token}"}, "permissions": "r", "timeout": 20,
    }}}), encoding="utf-8")
    with rel.environment({"JANITO_MCP_CONFIG": str(config)}):
        registry = registry_for(arena)
        registry.add_toolset("mcp")
    mounted = [r.name for r in registry.records() if r.toolset == "mcp" and r.status == "loaded"]
    problems = [e.reason for e in registry.load_errors if e.toolset == "mcp"]
    if not mounted and problems:
        pytest.skip(f"the mcp toolset mounted nothing here: {problems[0]}")
    assert {"rel__echo", "rel__add", "rel__describe", "rel__fail"} <= set(mounted), (mounted, problems)
    assert call_tool("rel__add", {"a": 2, "b": "3"}, registry=registry)["success"] is True
    for name in sorted(mounted):
        fuzz(registry, name, arena, arguments_for(registry.schema(name).parameters),
             label=" (mounted MCP)")


def test_a_catastrophic_regex_does_not_hang_search_regex(tmp_path: Path) -> None:
    """A model can send a regular expression that backtracks exponentially."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    env = rel.base_env(tmp_path / "config")
    arguments = json.dumps({"paths": ["."], "pattern": "^(a+)+$"})
    # Unbounded, this match runs for hours; bounded, the search gives up after its own time
    # limit (5 s). The 90 s here only tells the two apart: a loaded machine may take many
    # seconds to start janito, and must not fail a search that did give up.
    try:
        done = rel.run_janito(["run", "SearchRegex", "--args", arguments], env=env, cwd=workspace,
                              timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("SearchRegex with the regex ^(a+)+$ on a line of 40 'a' and '!' did not "
                    "answer within 90 s (catastrophic backtracking, no time limit)")
    result = rel.json_of(done)
    assert result.get("success") is True or result.get("error_type") == "regex_timeout", result
    rel.count("hostile inputs sent")


CLI_TOOLS = ("ReadFile", "ListFiles", "SearchText", "CreateFile", "ReplaceTextInFile",
             "RunBashCode", "LoadSkill")


def test_janito_run_with_hostile_arguments(arena: Arena) -> None:
    """The same kind of input through the real command: exit 1 with UTF-8 JSON on stdout, or
    exit 2 with one line on stderr; never a traceback."""
    env = rel.base_env(arena.config, {"PYTHONIOENCODING": "utf-8"})  # strict: no silent escape
    deep_array = "[" * 100_000
    deep_object = '{"a":' * 20_000 + "1" + "}" * 20_000  # one argument holds at most 128 KiB
    cases: dict[str, tuple[list[str], int]] = {}
    for tool in CLI_TOOLS:
        base = ["run", "-t", "skills", "--workspace", str(arena.workspace), tool]
        cases[f"{tool} surrogate key"] = ([*base, "--args", '{"\\ud800": 1, "path\\udcff": "x"}'], 1)
        cases[f"{tool} surrogate value"] = ([*base, "--args", '{"filepath": "\\udcff", "paths": "\\ud800"}'], 1)
        cases[f"{tool} option key"] = ([*base, "--file\udcffpath", "x"], 1)
        cases[f"{tool} deep array"] = ([*base, "--args", deep_array], 2)
        cases[f"{tool} deep object"] = ([*base, "--args", deep_object], 2)
    cases["tool name"] = (["run", "Read\udcffFile", "--args", '{"\\ud800": 1}'], 1)
    keys = list(cases)
    done = rel.run_many([cases[k][0] for k in keys], env=env, cwd=arena.cwd)
    for key, ran in zip(keys, done, strict=True):
        expected = cases[key][1]
        assert ran.returncode == expected, (key, ran.returncode, ran.stdout[-2000:], ran.stderr[-2000:])
        assert "Traceback" not in ran.stderr, (key, ran.stderr[-3000:])
        if expected == 2:
            assert ran.stdout == "" and "nested too deeply" in ran.stderr, (key, ran.stderr)
        else:
            assert "\ufffd" not in ran.stdout, (key, ran.stdout)  # the bytes were UTF-8
            result = check_result(rel.json_of(ran), key)
            assert result["success"] is False, (key, result)
        rel.count("hostile inputs sent")
        rel.count("hostile inputs: janito run")
    arena.check()
