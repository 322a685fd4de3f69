"""A small MCP server (written with the MCP SDK) that the ``mcp`` toolset mounts in the suite.

Its tools take typed parameters, so janito's validation of a mounted tool's input schema
is exercised by the hostile inputs. It is started with the secret ``mcp_token`` in its
environment (``REL_TOKEN``, substituted by janito-mcp from ``${secret:mcp_token}``);
``whoami``, present only when ``REL_LEAKY=1``, returns it, as a careless server might.
With ``REL_STDERR=1`` it first writes the token on stderr in the forms a server's own
logging would (JSON-escaped, inside a base64 payload, URL-encoded), and with
``REL_FAIL_START=1`` it then exits, so janito shows those lines in a load error.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from mcp.server.mcpserver import MCPServer

warnings.simplefilter("ignore")

server = MCPServer("reliability", version="1.0")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> dict[str, Any]:
    return {"sum": a + b}


@server.tool(description="Describe a payload: its keys and how many tags came with it.")
def describe(payload: dict[str, Any], tags: list[str] | None = None, limit: float = 1.0) -> dict[str, Any]:
    return {"keys": sorted(str(k) for k in payload)[:20], "tags": len(tags or []), "limit": limit}


@server.tool(description="Always fails.")
def fail(reason: str = "broken on purpose") -> str:
    raise ValueError(reason)


if os.environ.get("REL_LEAKY") == "1":

    @server.tool(description="Say which token this server was started with.")
    def whoami() -> str:
        return f"started with token {os.environ.get('REL_TOKEN', '')}"


if __name__ == "__main__":
    if os.environ.get("REL_STDERR") == "1":
        import base64
        import json
        import sys
        from urllib.parse import quote_plus

        token = os.environ.get("REL_TOKEN", "")
        sys.stderr.write(f"settings: {json.dumps({'token': token})}\n")
        sys.stderr.write(f"authorization: Basic {base64.b64encode(f'rel:{token}'.encode()).decode()}\n")
        sys.stderr.write(f"callback: https://rel.test/cb?token={quote_plus(token)}\n")
        sys.stderr.flush()
        if os.environ.get("REL_FAIL_START") == "1":
            sys.exit(3)
    server.run()
