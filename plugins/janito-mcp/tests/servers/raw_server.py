"""An MCP server on the SDK's low-level ``Server``, which sends results as they are built.

Its tools misbehave on purpose, in ways the SDK's high-level server would prevent: one
declares an ``outputSchema`` and then breaks it, one answers with structured content that
happens to carry a ``success`` key. Served over stdio.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

warnings.simplefilter("ignore")

COUNT_SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}},
                "required": ["count"]}

TOOLS = [
    types.Tool(name="count", description="Count things; breaks its own output schema when asked.",
               input_schema={"type": "object", "properties": {"broken": {"type": "boolean"}}},
               output_schema=COUNT_SCHEMA),
    types.Tool(name="quota", description="A third-party tool whose data has a success key.",
               input_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}}),
]


def _result(data: dict[str, Any], is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(data))],
                                structured_content=data, is_error=is_error)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "count":
        return _result({"count": "many"} if arguments.get("broken") else {"count": 3})
    if params.name == "quota":
        if arguments.get("ok"):
            return _result({"success": True, "remaining": 7})
        return _result({"success": False, "message": "monthly quota used up", "code": 42})
    return _result({"unknown": params.name}, True)


server = Server("raw", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
