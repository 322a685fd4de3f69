"""Tool calls as OpenTelemetry spans and metrics, read back from the real SDK."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from janito_core import BaseTool, Registry, Workspace, tool
from janito_core.cancellation import CancelToken
from janito_core.dispatch import acall_tool, aexecute_tool_calls, call_tool, execute_tool_calls
from janito_core.policy import ApprovalRequest, Policy, Rule

EXPORTER = InMemorySpanExporter()
READER = InMemoryMetricReader(preferred_temporality={
    Counter: AggregationTemporality.DELTA, Histogram: AggregationTemporality.DELTA})
_providers: list[Any] = []


@pytest.fixture(autouse=True)
def sdk() -> Iterator[None]:
    """The SDK installed once for the process (OpenTelemetry allows one global provider)."""
    if not _providers:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)
        meters = MeterProvider(metric_readers=[READER])
        metrics.set_meter_provider(meters)
        _providers.extend((provider, meters))
    EXPORTER.clear()
    READER.get_metrics_data()  # what earlier tests counted is read and dropped (delta)
    yield


@tool(permissions="r")
class Ping(BaseTool):
    """Answer at once.

    More words.
    """

    def run(self, count: int = 1) -> dict[str, Any]:
        """Answer at once.

        Args:
            count: How many.
        """
        return {"success": True, "count": count}


@tool(permissions="rw")
class Boom(BaseTool):
    """Raise."""

    def run(self) -> dict[str, Any]:
        """Raise."""
        raise RuntimeError("it broke")


@tool(permissions="r")
class Later(BaseTool):
    """Answer after a pause."""

    async def run(self) -> dict[str, Any]:
        """Answer after a pause."""
        await asyncio.sleep(0)
        inner = trace.get_current_span().get_span_context()
        return {"success": True, "span": f"{inner.span_id:016x}"}


@tool(permissions="r")
class Unsaid(BaseTool):
    """Fail without naming how."""

    def run(self) -> dict[str, Any]:
        """Fail without naming how."""
        return {"success": False}


@tool(permissions="r")
class Nap(BaseTool):
    """Sleep a fifth of a second on a worker thread."""

    def run(self, n: int = 0) -> dict[str, Any]:
        """Sleep a fifth of a second on a worker thread.

        Args:
            n: Which call of the turn this is.
        """
        time.sleep(0.2)
        return {"success": True, "n": n}


@tool(permissions="r")
class AsyncNap(BaseTool):
    """Sleep a fifth of a second on the event loop."""

    async def run(self, n: int = 0) -> dict[str, Any]:
        """Sleep a fifth of a second on the event loop.

        Args:
            n: Which call of the turn this is.
        """
        await asyncio.sleep(0.2)
        return {"success": True, "n": n}


@tool(permissions="r")
class Forever(BaseTool):
    """Wait until cancelled."""

    async def run(self) -> dict[str, Any]:
        """Wait until cancelled."""
        await asyncio.sleep(60)
        return {"success": True}


def registry(tmp_path: Path, policy: Policy | None = None,
             approver: Callable[[ApprovalRequest], Any] | None = None) -> Registry:
    reg = Registry(workspace=Workspace(tmp_path), autoload=(), allowed=None, policy=policy,
                   approver=approver, reports="off")
    for cls in (Ping, Boom, Later, Unsaid, Nap, AsyncNap, Forever):
        reg.add_tool(cls)
    return reg


def only_span() -> ReadableSpan:
    spans = EXPORTER.get_finished_spans()
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


def points() -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Metric name -> [(attributes, point)] since the last read."""
    found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    data = READER.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != "janito":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found.setdefault(metric.name, []).append((dict(point.attributes), point))
    return found


def test_a_call_that_succeeds(tmp_path: Path) -> None:
    result = call_tool("Ping", '{"count": 2}', registry=registry(tmp_path), call_id="call_1")
    assert result == {"success": True, "count": 2}
    span = only_span()
    assert span.name == "execute_tool Ping"
    assert span.kind is SpanKind.INTERNAL
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Ping",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Answer at once.",
        "janito.tool.permissions": "r",
        "janito.toolset": "local",
    }
    assert span.status.status_code is StatusCode.UNSET
    found = points()
    labels = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Ping"}
    assert [(a, p.value) for a, p in found["janito.tool.calls"]] == [(labels, 1)]
    [(attributes, histogram)] = found["janito.tool.call.duration"]
    assert attributes == labels and histogram.count == 1 and 0 < histogram.sum < 5
    assert "janito.tool.call.failures" not in found


def test_a_tool_that_raises(tmp_path: Path) -> None:
    result = call_tool("Boom", None, registry=registry(tmp_path))
    assert result["error_type"] == "tool_exception"
    span = only_span()
    attributes = dict(span.attributes or {})
    assert "gen_ai.tool.call.id" not in attributes
    assert attributes["error.type"] == attributes["janito.error_type"] == "tool_exception"
    assert attributes["janito.tool.permissions"] == "rw"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == result["error"]
    found = points()
    labels = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Boom",
              "error.type": "tool_exception"}
    assert [(a, p.value) for a, p in found["janito.tool.call.failures"]] == [(labels, 1)]
    assert [(a, p.value) for a, p in found["janito.tool.calls"]] == [(labels, 1)]


@pytest.mark.parametrize(("name", "arguments", "error_type"), [
    ("Nope", None, "unknown_tool"),
    ("Ping", "{not json", "invalid_json"),
    ("Ping", '{"count": "many"}', "invalid_arguments"),
])
def test_a_call_refused_before_it_runs(tmp_path: Path, name: str, arguments: Any,
                                       error_type: str) -> None:
    result = call_tool(name, arguments, registry=registry(tmp_path), call_id="c9")
    assert result["error_type"] == error_type
    span = only_span()
    assert span.name == f"execute_tool {name}"
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": "c9", "error.type": error_type, "janito.error_type": error_type,
    }
    assert span.status.status_code is StatusCode.ERROR


def test_a_call_denied_by_the_policy(tmp_path: Path) -> None:
    policy = Policy(rules=[Rule(action="deny", tools=("Boom",), reason="no")])
    result = call_tool("Boom", None, registry=registry(tmp_path, policy))
    assert result["error_type"] == "denied_by_policy"
    span = only_span()
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "denied_by_policy"
    assert attributes["janito.policy.decision"] == "deny"
    assert attributes["janito.policy.rule"] == result["rule"]
    assert attributes["janito.policy.source"] == "python"
    assert "janito.tool.permissions" not in attributes  # refused before it was prepared
    assert span.status.status_code is StatusCode.ERROR


def test_a_call_the_policy_allows(tmp_path: Path) -> None:
    policy = Policy(rules=[Rule(action="allow", tools=("Ping",), reason="fine")])
    assert call_tool("Ping", None, registry=registry(tmp_path, policy))["success"]
    attributes = dict(only_span().attributes or {})
    assert attributes["janito.policy.decision"] == "allow"
    assert attributes["janito.policy.rule"] == "allow tools Ping: fine"
    assert attributes["janito.policy.source"] == "python"


def test_an_async_tool_runs_inside_its_span(tmp_path: Path) -> None:
    tracer = trace.get_tracer("test")

    async def main() -> dict[str, Any]:
        with tracer.start_as_current_span("turn"):
            return await acall_tool("Later", None, registry=registry(tmp_path), call_id="a1")

    result = asyncio.run(main())
    spans = {s.name: s for s in EXPORTER.get_finished_spans()}
    assert set(spans) == {"turn", "execute_tool Later"}
    span = spans["execute_tool Later"]
    assert span.parent is not None and span.parent.span_id == spans["turn"].context.span_id
    assert result["span"] == f"{span.context.span_id:016x}"  # current while the tool ran
    assert dict(span.attributes or {})["gen_ai.tool.call.id"] == "a1"
    assert span.status.status_code is StatusCode.UNSET


def test_an_async_call_refused(tmp_path: Path) -> None:
    result = asyncio.run(acall_tool("Nope", None, registry=registry(tmp_path)))
    assert result["error_type"] == "unknown_tool"
    assert dict(only_span().attributes or {})["error.type"] == "unknown_tool"


def test_a_failure_that_names_no_error_type(tmp_path: Path) -> None:
    assert call_tool("Unsaid", None, registry=registry(tmp_path)) == {"success": False}
    span = only_span()
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "_OTHER"  # the conventions' fallback value
    assert "janito.error_type" not in attributes  # the result named none
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None  # no sentence, and error.type is not repeated
    labels = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Unsaid",
              "error.type": "_OTHER"}
    found = points()
    assert [(a, p.value) for a, p in found["janito.tool.call.failures"]] == [(labels, 1)]
    assert [a for a, _ in found["janito.tool.call.duration"]] == [labels]


def test_a_cancelled_async_call_has_its_span_and_is_counted(tmp_path: Path) -> None:
    async def main() -> None:
        task = asyncio.ensure_future(acall_tool("Forever", None, registry=registry(tmp_path),
                                                call_id="f1"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    span = only_span()
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "asyncio.exceptions.CancelledError"  # its full name
    assert attributes["gen_ai.tool.call.id"] == "f1"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None  # CancelledError() says nothing more
    labels = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Forever",
              "error.type": "asyncio.exceptions.CancelledError"}
    found = points()
    assert [(a, p.value) for a, p in found["janito.tool.calls"]] == [(labels, 1)]
    assert [(a, p.value) for a, p in found["janito.tool.call.failures"]] == [(labels, 1)]
    [(attributes, histogram)] = found["janito.tool.call.duration"]
    assert attributes == labels and histogram.count == 1


@pytest.mark.parametrize("entry", ["threads", "event loop"])
def test_a_concurrent_turn_is_one_span_per_call_under_the_callers_span(
        tmp_path: Path, entry: str) -> None:
    reg = registry(tmp_path)
    name = "Nap" if entry == "threads" else "AsyncNap"
    turn = [{"id": f"call_{n}", "type": "function",
             "function": {"name": name, "arguments": json.dumps({"n": n})}} for n in range(3)]
    tracer = trace.get_tracer("test")
    if entry == "threads":
        with tracer.start_as_current_span("turn"):
            replies = execute_tool_calls(turn, registry=reg)
    else:
        async def main() -> list[dict[str, Any]]:
            with tracer.start_as_current_span("turn"):
                return await aexecute_tool_calls(turn, registry=reg)

        replies = asyncio.run(main())
    assert [json.loads(r["content"])["n"] for r in replies] == [0, 1, 2]
    spans = EXPORTER.get_finished_spans()
    [parent] = [s for s in spans if s.name == "turn"]
    calls = sorted((s for s in spans if s.name == f"execute_tool {name}"),
                   key=lambda s: dict(s.attributes or {})["gen_ai.tool.call.id"])
    assert [dict(s.attributes or {})["gen_ai.tool.call.id"] for s in calls] == \
        ["call_0", "call_1", "call_2"]
    for span in calls:
        assert span.parent is not None
        assert span.parent.span_id == parent.context.span_id
        assert span.context.trace_id == parent.context.trace_id
        assert span.status.status_code is StatusCode.UNSET
    assert len({s.context.span_id for s in calls}) == 3
    # All three were running at one moment: the last to start began before the first
    # to end had ended (each sleeps 0.2 s; the times are the exporter's, in ns).
    assert max(s.start_time or 0 for s in calls) < min(s.end_time or 0 for s in calls)


ASK_PING = Policy(rules=[Rule(action="ask", tools=("Ping",), reason="look first")])


def asked(reg: Registry, answer: Any, seen: list[ApprovalRequest]) -> None:
    """Make ``reg``'s approver answer ``answer``, keeping what it was asked in ``seen``."""
    def approver(request: ApprovalRequest) -> Any:
        seen.append(request)
        return answer

    reg.approver = approver


def ask_attributes(span: ReadableSpan) -> dict[str, Any]:
    return {k: v for k, v in (span.attributes or {}).items() if k.startswith("janito.policy.")}


def test_an_ask_a_person_approves(tmp_path: Path) -> None:
    reg = registry(tmp_path, ASK_PING)
    seen: list[ApprovalRequest] = []
    asked(reg, True, seen)
    assert call_tool("Ping", '{"count": 3}', registry=reg, call_id="c1")["success"]
    span = only_span()
    assert ask_attributes(span) == {
        "janito.policy.decision": "ask",
        "janito.policy.rule": "ask tools Ping: look first",
        "janito.policy.source": "python",
        "janito.policy.approval": "approved",
        "janito.policy.approval_id": seen[0].id,
    }
    assert seen[0].id.startswith("ap_")
    assert "error.type" not in (span.attributes or {})
    assert span.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize("answer", [False, "not now"])
def test_an_ask_a_person_declines(tmp_path: Path, answer: Any) -> None:
    reg = registry(tmp_path, ASK_PING)
    seen: list[ApprovalRequest] = []
    asked(reg, answer, seen)
    result = call_tool("Ping", None, registry=reg, call_id="c2")
    assert result["error_type"] == "approval_declined"
    span = only_span()
    attributes = dict(span.attributes or {})
    assert attributes["janito.policy.decision"] == "ask"
    assert attributes["janito.policy.approval"] == "declined"
    assert attributes["janito.policy.approval_id"] == seen[0].id == result["approval"]["id"]
    assert attributes["error.type"] == attributes["janito.error_type"] == "approval_declined"
    assert span.status.status_code is StatusCode.ERROR


def test_an_approver_that_fails_counts_as_a_no(tmp_path: Path) -> None:
    def approver(request: ApprovalRequest) -> Any:
        raise OSError("no terminal")

    reg = registry(tmp_path, ASK_PING, approver)
    result = call_tool("Ping", None, registry=reg)
    assert result["error_type"] == "approval_declined"
    attributes = dict(only_span().attributes or {})
    assert attributes["janito.policy.approval"] == "declined"
    assert attributes["janito.policy.approval_id"] == result["approval"]["id"]


def test_an_ask_left_to_a_person_then_brought_back_approved(tmp_path: Path) -> None:
    reg = registry(tmp_path, ASK_PING)  # no approver: the decision comes back later
    first = call_tool("Ping", '{"count": 4}', registry=reg, call_id="c3")
    assert first["error_type"] == "approval_required"
    approval = first["approval"]["id"]
    span = only_span()
    attributes = dict(span.attributes or {})
    assert attributes["janito.policy.decision"] == "ask"
    assert attributes["janito.policy.approval"] == "pending"
    assert attributes["janito.policy.approval_id"] == approval
    assert attributes["error.type"] == "approval_required"
    EXPORTER.clear()
    again = call_tool("Ping", '{"count": 4}', registry=reg, call_id="c3",
                      approvals={approval: True})
    assert again == {"success": True, "count": 4}
    span = only_span()
    attributes = dict(span.attributes or {})
    assert attributes["janito.policy.approval"] == "approved"
    assert attributes["janito.policy.approval_id"] == approval  # the same ask, settled
    assert "error.type" not in attributes
    EXPORTER.clear()
    # a decision is used once: brought again, the call is asked again
    third = call_tool("Ping", '{"count": 4}', registry=reg, call_id="c3",
                      approvals={approval: True})
    assert third["error_type"] == "approval_required"
    assert dict(only_span().attributes or {})["janito.policy.approval"] == "pending"


def test_a_decision_brought_as_a_no(tmp_path: Path) -> None:
    reg = registry(tmp_path, ASK_PING)
    approval = call_tool("Ping", None, registry=reg, call_id="c4")["approval"]["id"]
    EXPORTER.clear()
    result = call_tool("Ping", None, registry=reg, call_id="c4", approvals={approval: False})
    assert result["error_type"] == "approval_declined"
    attributes = dict(only_span().attributes or {})
    assert attributes["janito.policy.approval"] == "declined"
    assert attributes["janito.policy.approval_id"] == approval


def test_always_approved_calls_say_so_each_time(tmp_path: Path) -> None:
    reg = registry(tmp_path, ASK_PING)
    seen: list[ApprovalRequest] = []
    asked(reg, "always", seen)
    for count in (1, 2):
        assert call_tool("Ping", json.dumps({"count": count}), registry=reg)["success"]
    spans = EXPORTER.get_finished_spans()
    assert len(seen) == 1  # the second call was not asked
    assert [dict(s.attributes or {})["janito.policy.approval"] for s in spans] == \
        ["approved", "approved"]
    ids = [dict(s.attributes or {})["janito.policy.approval_id"] for s in spans]
    assert ids[0] == seen[0].id and ids[1] != ids[0]  # each call is its own ask


def test_an_async_ask_approved_by_a_coroutine(tmp_path: Path) -> None:
    seen: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        seen.append(request)
        await asyncio.sleep(0)
        return True

    reg = registry(tmp_path, ASK_PING, approver)
    result = asyncio.run(acall_tool("Ping", None, registry=reg, call_id="c5"))
    assert result["success"]
    attributes = dict(only_span().attributes or {})
    assert attributes["janito.policy.approval"] == "approved"
    assert attributes["janito.policy.approval_id"] == seen[0].id


def test_an_async_ask_declined_by_a_plain_approver(tmp_path: Path) -> None:
    reg = registry(tmp_path, ASK_PING)
    seen: list[ApprovalRequest] = []
    asked(reg, False, seen)
    result = asyncio.run(acall_tool("Ping", None, registry=reg))
    assert result["error_type"] == "approval_declined"
    attributes = dict(only_span().attributes or {})
    assert attributes["janito.policy.approval"] == "declined"
    assert attributes["janito.policy.approval_id"] == seen[0].id


def test_an_ask_never_settled_has_no_outcome(tmp_path: Path) -> None:
    reg = registry(tmp_path, ASK_PING)
    seen: list[ApprovalRequest] = []
    asked(reg, True, seen)
    token = CancelToken()
    token.cancel("the person left")
    result = call_tool("Ping", None, registry=reg, cancel_token=token)
    assert result["error_type"] == "cancelled"
    assert seen == []  # cancelled before anyone was asked
    assert ask_attributes(only_span()) == {
        "janito.policy.decision": "ask", "janito.policy.rule": "ask tools Ping: look first",
        "janito.policy.source": "python"}


def test_a_call_the_policy_allows_has_no_ask(tmp_path: Path) -> None:
    policy = Policy(rules=[Rule(action="allow", tools=("Ping",), reason="fine")],
                    mode="ask")
    assert call_tool("Ping", None, registry=registry(tmp_path, policy))["success"]
    assert ask_attributes(only_span()) == {
        "janito.policy.decision": "allow", "janito.policy.rule": "allow tools Ping: fine",
        "janito.policy.source": "python"}


@tool(permissions="r")
class Delegate(BaseTool):
    """Run a turn of two asked calls on a registry of its own."""

    inner: Registry | None = None

    def run(self) -> dict[str, Any]:
        """Run a turn of two asked calls on a registry of its own."""
        assert Delegate.inner is not None
        turn = [{"id": f"inner_{n}", "type": "function",
                 "function": {"name": "Ping", "arguments": json.dumps({"count": n})}}
                for n in range(2)]
        replies = execute_tool_calls(turn, registry=Delegate.inner)
        return {"success": True, "inner": [json.loads(r["content"]) for r in replies]}


def test_an_inner_ask_stays_off_the_enclosing_span(tmp_path: Path) -> None:
    # Delegate's turn runs on its own registry, whose calls are traced (decided by the
    # outer call), on worker threads whose context holds Delegate's span.
    reg = registry(tmp_path, Policy(rules=[Rule(action="ask", tools=("Delegate", "Ping"))]))
    reg.add_tool(Delegate)
    seen: list[ApprovalRequest] = []
    asked(reg, True, seen)
    Delegate.inner = reg
    try:
        result = call_tool("Delegate", None, registry=reg, call_id="outer")
    finally:
        Delegate.inner = None
    assert [r["success"] for r in result["inner"]] == [True, True]
    assert sorted(r.tool for r in seen) == ["Delegate", "Ping", "Ping"]
    [span] = [s for s in EXPORTER.get_finished_spans() if s.name == "execute_tool Delegate"]
    attributes = dict(span.attributes or {})
    # its own ask, not overwritten by the two asked while it ran
    assert attributes["janito.policy.approval"] == "approved"
    assert attributes["janito.policy.approval_id"] == seen[0].id
    assert seen[0].tool == "Delegate"


#: The scripts below run in an interpreter of their own: a registry of one tool, Ping.
PING = """
from janito_core import BaseTool, Registry, tool
from janito_core.dispatch import call_tool

@tool(permissions="r")
class Ping(BaseTool):
    '''Answer.'''
    def run(self):
        '''Answer.'''
        return {"success": True}

registry = Registry(autoload=())
registry.add_tool(Ping)
"""

BLOCKED = r"""
import importlib.abc, json, sys

class Block(importlib.abc.MetaPathFinder):
    tried = 0
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            Block.tried += 1
            raise ImportError(f"no {name} here")
        return None

sys.meta_path.insert(0, Block())
""" + PING + r"""
first = call_tool("Ping", None, registry=registry)
tried = Block.tried
for _ in range(3):
    call_tool("Ping", None, registry=registry)
print(json.dumps({"result": first, "tried_first": tried, "tried_after": Block.tried - tried,
                  "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""


def test_without_opentelemetry_a_call_imports_nothing_and_tries_nothing() -> None:
    # Nothing imported OpenTelemetry, so no provider can be set: calls do not look for it.
    out = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    seen = json.loads(out)
    assert seen["result"] == {"success": True}
    assert seen["tried_first"] == 0
    assert seen["tried_after"] == 0
    assert seen["loaded"] == []


LATE = """
import json, sys
""" + PING + """
call_tool("Ping", None, registry=registry)
before = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
call_tool("Ping", None, registry=registry)
print(json.dumps({"before": before,
                  "spans": [span.name for span in exporter.get_finished_spans()]}))
"""


def test_a_provider_set_after_the_first_call_traces_the_next_ones() -> None:
    out = subprocess.run([sys.executable, "-c", LATE], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    seen = json.loads(out)
    assert seen["before"] == []
    assert seen["spans"] == ["execute_tool Ping"]


IMPORTED_EARLY = """
import json, sys
from opentelemetry import trace
""" + PING + """
for _ in range(3):  # the first admits Ping; the next two take the short way, untraced
    call_tool("Ping", None, registry=registry)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
call_tool("Ping", None, registry=registry)
print(json.dumps({"spans": [span.name for span in exporter.get_finished_spans()]}))
"""


def test_with_opentelemetry_imported_a_provider_set_late_traces_the_next_call() -> None:
    """OpenTelemetry imported by someone else and no provider yet: calls are not traced,
    and the first call after a provider is set is."""
    out = subprocess.run([sys.executable, "-c", IMPORTED_EARLY], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert json.loads(out)["spans"] == ["execute_tool Ping"]


def test_opentelemetry_is_not_imported_before_the_first_call() -> None:
    code = ("import sys, janito_core, janito_core.dispatch, janito_core.cli\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"
