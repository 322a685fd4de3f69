"""Tool calls as OpenTelemetry spans and metrics, read back from the real SDK."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
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
from janito_core.dispatch import acall_tool, call_tool
from janito_core.policy import Policy, Rule

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


def registry(tmp_path: Path, policy: Policy | None = None) -> Registry:
    reg = Registry(workspace=Workspace(tmp_path), autoload=(), allowed=None, policy=policy,
                   reports="off")
    for cls in (Ping, Boom, Later):
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
first = call_tool("Ping", None, registry=registry)
tried = Block.tried
for _ in range(3):
    call_tool("Ping", None, registry=registry)
print(json.dumps({"result": first, "tried_first": tried, "tried_after": Block.tried - tried,
                  "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""


def test_without_opentelemetry_a_call_imports_nothing_and_tries_once() -> None:
    out = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    seen = json.loads(out)
    assert seen["result"] == {"success": True}
    assert seen["tried_first"] >= 1
    assert seen["tried_after"] == 0
    assert seen["loaded"] == []


def test_opentelemetry_is_not_imported_before_the_first_call() -> None:
    code = ("import sys, janito_core, janito_core.dispatch, janito_core.cli\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"
