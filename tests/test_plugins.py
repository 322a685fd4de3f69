"""The pluggy side: hook specifications, marks, registration and blame."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from helpers.distributions import run_python, write_distribution

from janito_core import Registry, hookimpl
from janito_core import hookspecs as specs
from janito_core._marker import MARK, has_hooks
from janito_core.plugins import PROJECT, PluginHost


def test_the_project_and_its_hooks() -> None:
    import pluggy

    assert PROJECT == "janito"
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(specs)
    names = {name for name in dir(manager.hook) if name.startswith("janito_")}
    assert names == {"janito_report", "janito_tool_call", "janito_register_commands",
                     "janito_toolset_loaded"}
    assert manager.hook.janito_tool_call.spec.opts["firstresult"] is True
    assert manager.hook.janito_report.spec.opts["firstresult"] is False


def test_hookimpl_marks_without_pluggy() -> None:
    @hookimpl
    def janito_report(event: Any) -> None:
        pass

    @hookimpl(wrapper=True, tryfirst=True)
    def janito_tool_call(call: Any) -> Any:
        return (yield)

    assert getattr(janito_report, MARK) == {"wrapper": False, "hookwrapper": False,
                                            "optionalhook": False, "tryfirst": False,
                                            "trylast": False, "specname": None}
    assert getattr(janito_tool_call, MARK)["wrapper"] is True
    assert getattr(janito_tool_call, MARK)["tryfirst"] is True

    class Holder:
        pass

    holder = Holder()
    assert has_hooks(holder) is False
    holder.janito_report = janito_report  # type: ignore[attr-defined]
    assert has_hooks(holder) is True


def test_a_plugin_with_an_unknown_hook_is_refused_and_reported() -> None:
    host = PluginHost([])

    class Typo:
        @hookimpl
        def janito_reprot(self, event: Any) -> None:
            pass

    error = host.register(Typo(), "acme-typo:typo", "acme-typo")
    assert error is not None
    assert error.kind == "plugin" and error.distribution == "acme-typo"
    assert "janito_reprot" in error.reason
    assert host.manager.get_plugin("acme-typo:typo") is None
    assert error in host.errors


def test_a_plugin_with_a_bad_signature_is_refused() -> None:
    host = PluginHost([])

    class WrongArguments:
        @hookimpl
        def janito_report(self, event: Any, extra: Any) -> None:
            pass

    error = host.register(WrongArguments(), "acme-sig:sig", "acme-sig")
    assert error is not None and "was refused" in error.reason


def test_registering_twice_is_harmless() -> None:
    host = PluginHost([])

    class Quiet:
        @hookimpl
        def janito_report(self, event: Any) -> None:
            pass

    assert host.register(Quiet(), "acme:quiet", "acme") is None
    assert host.register(Quiet(), "acme:quiet", "acme") is None
    assert ("acme:quiet", "acme") in host.names()
    assert ("janito.stderr", "janito-core") in host.names()
    assert ("janito.runner", "janito-core") in host.names()


def test_plugins_can_add_subcommands() -> None:
    host = PluginHost([])

    class Commands:
        @hookimpl
        def janito_register_commands(self, subparsers: Any) -> None:
            parser = subparsers.add_parser("greet", help="say hello")
            parser.add_argument("who")
            parser.set_defaults(handler=lambda args: 0 if args.who == "world" else 1)

    class Broken:
        @hookimpl
        def janito_register_commands(self, subparsers: Any) -> None:
            raise RuntimeError("no commands today")

    host.register(Commands(), "acme-greet:greet", "acme-greet")
    parser = argparse.ArgumentParser(prog="janito")
    subparsers = parser.add_subparsers(dest="command")
    host.register_commands(subparsers)
    args = parser.parse_args(["greet", "world"])
    assert args.handler(args) == 0

    host.register(Broken(), "acme-broken:broken", "acme-broken")
    host.register_commands(argparse.ArgumentParser().add_subparsers())
    (error,) = [e for e in host.errors if e.kind == "hook"]
    assert error.distribution == "acme-broken"
    assert error.reason == ("plugin 'acme-broken:broken' raised in janito_register_commands: "
                            "RuntimeError: no commands today")


def test_a_plugin_cannot_take_a_command_that_exists(tmp_path: Path) -> None:
    """On every Python: argparse before 3.11 would let the second one win without a word."""
    host = PluginHost([])

    class Usurper:
        @hookimpl
        def janito_register_commands(self, subparsers: Any) -> None:
            subparsers.add_parser("tools", help="not janito's")

    class Alias:
        @hookimpl
        def janito_register_commands(self, subparsers: Any) -> None:
            subparsers.add_parser("mine", aliases=["policy"])

    host.register(Usurper(), "acme-tools:tools", "acme-tools")
    host.register(Alias(), "acme-alias:alias", "acme-alias")
    subparsers = argparse.ArgumentParser(prog="janito").add_subparsers(dest="command")
    builtin = subparsers.add_parser("tools")
    subparsers.add_parser("policy")
    host.register_commands(subparsers)
    assert subparsers.choices["tools"] is builtin and "mine" not in subparsers.choices
    reasons = sorted((e.distribution, e.reason) for e in host.errors if e.kind == "hook")
    assert reasons == [
        ("acme-alias", "plugin 'acme-alias:alias' raised in janito_register_commands: "
                       "PluginValidationError: the command 'policy' is taken already"),
        ("acme-tools", "plugin 'acme-tools:tools' raised in janito_register_commands: "
                       "PluginValidationError: the command 'tools' is taken already"),
    ]


def test_toolset_loaded_hook_sees_each_toolset(testkit_dir: Path) -> None:
    seen: list[tuple[str, list[str]]] = []

    class Watcher:
        @hookimpl
        def janito_toolset_loaded(self, registry: Registry, toolset: str,
                                  tools: list[str]) -> None:
            assert isinstance(registry, Registry)
            seen.append((toolset, tools))

    registry = Registry(autoload=(), allowed=None)
    registry.names()
    registry.plugins.register(Watcher(), "tests:watcher", None)
    loaded = registry.add_toolset("testkit")
    assert seen == [("testkit", loaded)]
    assert "SaysNo" not in loaded


def test_plugin_errors_reach_the_registry(registry: Registry) -> None:
    class Broken:
        @hookimpl
        def janito_report(self, event: Any) -> None:
            raise ValueError("renderer broke")

    registry.plugins.register(Broken(), "acme-broken:broken", "acme-broken")
    from janito_core.dispatch import call_tool

    assert call_tool("ChattyNone", {}, registry=registry)["success"] is True
    errors = [e for e in registry.load_errors if e.distribution == "acme-broken"]
    assert len(errors) == 1  # the same fault five times is reported once
    assert errors[0].as_row()["status"] == "error"


def test_hooks_cost_nothing_until_a_plugin_exists(sandbox: Path) -> None:
    write_distribution(sandbox, "acme-plain", toolsets={"plain": "acme_plain"}, files={
        "acme_plain/__init__.py": "",
        "acme_plain/echo.py": '''
            from janito_core import BaseTool, tool


            @tool()
            class Echo(BaseTool):
                """Echo."""

                def run(self, text: str) -> dict:
                    """Echo it.

                    Args:
                        text: What to echo.
                    """
                    self.report_progress("echoing")
                    return {"success": True, "text": text}
        ''',
    })
    completed = run_python(
        """
        import json, sys
        from janito_core import Registry
        from janito_core.dispatch import call_tool
        registry = Registry(autoload=("plain",))
        result = call_tool("Echo", {"text": "hi"}, registry=registry)
        print(json.dumps({"result": result, "pluggy": "pluggy" in sys.modules}))
        """,
        path=[sandbox],
    )
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout)
    assert out == {"result": {"success": True, "text": "hi"}, "pluggy": False}
    assert completed.stderr == "echoing\n"


def test_tryfirst_implementations_run_before_the_others(registry: Registry) -> None:
    calls: list[str] = []

    class First:
        @hookimpl(tryfirst=True)
        def janito_tool_call(self, call: Any) -> None:
            calls.append("first")

    class Plain:
        @hookimpl
        def janito_tool_call(self, call: Any) -> None:
            calls.append("plain")

    registry.plugins.register(First(), "tests:first", None)
    registry.plugins.register(Plain(), "tests:plain", None)
    from janito_core.dispatch import call_tool

    assert call_tool("Nothing", {}, registry=registry)["success"] is True
    assert calls == ["first", "plain"]


def test_trylast_implementations_still_run_before_the_tool(registry: Registry) -> None:
    calls: list[str] = []

    class Late:
        @hookimpl(trylast=True)
        def janito_tool_call(self, call: Any) -> None:
            calls.append("late")

    class Wrapper:
        @hookimpl(wrapper=True)
        def janito_tool_call(self, call: Any) -> Any:
            calls.append("before")
            result = yield
            calls.append(f"after {result['success']}")
            return result

    registry.plugins.register(Late(), "tests:late", None)
    registry.plugins.register(Wrapper(), "tests:wrapper", None)
    from janito_core.dispatch import call_tool

    assert call_tool("Nothing", {}, registry=registry)["success"] is True
    assert calls == ["before", "late", "after True"]


def test_a_wrapper_checks_privileges_when_called(registry: Registry) -> None:
    import pytest

    from janito_core import Privileges

    wrapper = registry.get("ChattyWrite")
    assert wrapper is not None
    registry.privileges = Privileges(read=False, write=False, execute=False)
    with pytest.raises(PermissionError):
        wrapper()


def test_hook_names_match_the_specifications() -> None:
    from janito_core.plugins import HOOK_NAMES

    assert {name for name in vars(specs) if name.startswith("janito_")} == HOOK_NAMES


def test_calls_made_while_plugins_register_on_another_thread_still_run(registry: Registry) -> None:
    """Registering a plugin moves the tool runner back to the end of the hook; a call made at
    that moment on another thread must still find a runner."""
    import sys
    import threading

    from janito_core.dispatch import call_tool

    class Audit:
        @hookimpl(trylast=True)
        def janito_tool_call(self, call: Any) -> None:
            return None

    registry.plugins.register(Audit(), "tests:audit-0", None)
    stop = threading.Event()
    failures: list[dict[str, Any]] = []

    def caller() -> None:
        while not stop.is_set():
            result = call_tool("Nothing", {}, registry=registry)
            if result.get("success") is not True:
                failures.append(result)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    callers = [threading.Thread(target=caller) for _ in range(3)]
    try:
        for thread in callers:
            thread.start()
        for index in range(1, 300):
            registry.plugins.register(Audit(), f"tests:audit-{index}", None)
    finally:
        stop.set()
        for thread in callers:
            thread.join()
        sys.setswitchinterval(interval)
    assert failures == []
    assert registry.plugins.manager.get_plugin("janito.runner.stand-in") is None
