"""What ``janito mcp serve`` declares is what it serves, and nothing more.

Without the skills toolset nothing serves resources or prompts: neither capability is
declared, and a client that asks anyway is answered JSON-RPC's "method not found"
(-32601), which the 2026-07-28 revision names for a capability not declared. (With
``-t skills`` resources are served: tests/integration/test_mcp_skills.py.)
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import HttpServer, run_async
from mcp.client import Client
from mcp.shared.exceptions import MCPError


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_no_resources_or_prompts_are_declared_or_served(mode: str,
                                                        http_server: HttpServer) -> None:
    import mcp_types

    async def main() -> tuple[Any, dict[str, int]]:
        codes: dict[str, int] = {}
        async with Client(http_server.url, mode=mode) as client:
            capabilities = client.server_capabilities
            for name, ask in (
                    ("resources/list", client.list_resources),
                    ("resources/templates/list", client.list_resource_templates),
                    ("resources/read", lambda: client.read_resource("skill://x/SKILL.md")),
                    ("prompts/list", client.list_prompts),
                    ("prompts/get", lambda: client.get_prompt("x"))):
                with pytest.raises(MCPError) as refused:
                    await ask()
                codes[name] = refused.value.code
            assert (await client.list_tools()).tools  # the session is still good
        return capabilities, codes

    capabilities, codes = run_async(main)
    assert capabilities.tools is not None
    assert capabilities.resources is None and capabilities.prompts is None
    assert set(codes.values()) == {mcp_types.METHOD_NOT_FOUND}, codes
