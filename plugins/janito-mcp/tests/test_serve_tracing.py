"""A trace an MCP client carries in ``_meta`` goes on through the janito tool call's span."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from conftest import run_async
from mcp.client import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

EXPORTER = InMemorySpanExporter()


@pytest.fixture(autouse=True)
def sdk() -> None:
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)
    EXPORTER.clear()


def test_the_client_trace_is_the_parent_of_the_tool_span(workspace: Path) -> None:
    from janito_mcp._serve import JanitoServer

    from janito_core import Privileges, Registry, Workspace

    registry = Registry(privileges=Privileges(read=True, write=False, execute=False),
                        autoload=(), workspace=Workspace(workspace))
    registry.add_toolset("mcptest")
    served = JanitoServer(registry)
    sent: dict[str, Any] = {}
    trace_id, parent_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    meta = {"traceparent": f"00-{trace_id}-{parent_id}-01", "tracestate": "acme=t61rcWkgMzE"}

    async def main() -> None:
        async with Client(served.server) as client:
            result = await client.call_tool("EchoText", {"text": "ab"}, meta=meta)
            assert result.structured_content == {"success": True, "text": "ab", "times": 1}
            failed = await client.call_tool("RaiseError", {}, meta=meta)
            assert failed.is_error
            # with no _meta of its own the client sends the trace it is in
            with trace.get_tracer("agent").start_as_current_span("agent turn") as turn:
                sent["turn"] = turn.get_span_context()
                await client.call_tool("Ping", {})

    run_async(main)
    spans = EXPORTER.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}

    def ancestors(name: str) -> list[tuple[str, Any]]:
        """The span named ``name`` and the spans above it, as (name, kind), then the id of
        the remote parent above them all (None: the trace started in this process)."""
        [span] = [s for s in spans if s.name == name]
        found: list[tuple[str, Any]] = []
        while True:
            found.append((span.name, span.kind))
            parent = span.parent
            if parent is None:
                return [*found, None]
            if parent.span_id not in by_id:
                return [*found, f"{parent.span_id:016x}"]
            span = by_id[parent.span_id]

    # janito's span, under the SDK server's, whose parent is the traceparent in _meta
    assert ancestors("execute_tool EchoText") == [
        ("execute_tool EchoText", SpanKind.INTERNAL), ("tools/call EchoText", SpanKind.SERVER),
        parent_id]
    [echo] = [s for s in spans if s.name == "execute_tool EchoText"]
    assert f"{echo.context.trace_id:032x}" == trace_id
    assert dict(echo.context.trace_state) == {"acme": "t61rcWkgMzE"}
    attributes = dict(echo.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "EchoText"
    assert str(attributes["gen_ai.tool.call.id"]).startswith("mcp-")
    assert attributes["janito.tool.permissions"] == "r"
    assert echo.status.status_code is StatusCode.UNSET
    assert ancestors("execute_tool RaiseError")[1:] == [
        ("tools/call RaiseError", SpanKind.SERVER), parent_id]
    [broken] = [s for s in spans if s.name == "execute_tool RaiseError"]
    assert broken.status.status_code is StatusCode.ERROR
    assert dict(broken.attributes or {})["error.type"] == "tool_exception"
    [ping] = [s for s in spans if s.name == "execute_tool Ping"]
    assert ping.context.trace_id == sent["turn"].trace_id
    assert ancestors("execute_tool Ping")[1:] == [
        ("tools/call Ping", SpanKind.SERVER), ("agent turn", SpanKind.INTERNAL), None]
    # one janito span a call, none for the SDK's own requests (tools/list, discovery)
    assert sorted(s.name for s in spans if s.name.startswith("execute_tool")) == [
        "execute_tool EchoText", "execute_tool Ping", "execute_tool RaiseError"]
