"""An MCP tool result as janito's result dict.

Apart from ``_client``, which calls the tools, and ``_remote``, which makes their janito
classes, so that neither has to import the other.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from janito_core import failure

if TYPE_CHECKING:
    from collections.abc import Callable


def _block(block: Any) -> dict[str, Any]:
    kind = str(getattr(block, "type", "unknown"))
    if kind == "resource":
        resource = block.resource
        out: dict[str, Any] = {"type": kind, "uri": str(resource.uri),
                               "mime_type": getattr(resource, "mime_type", None)}
        if getattr(resource, "text", None) is not None:
            out["text"] = resource.text
        else:
            out["bytes"] = len(getattr(resource, "blob", "") or "") * 3 // 4
        return out
    if kind in ("image", "audio"):
        return {"type": kind, "mime_type": getattr(block, "mime_type", None),
                "bytes": len(getattr(block, "data", "") or "") * 3 // 4}
    if kind == "resource_link":
        return {"type": kind, "uri": str(block.uri), "name": getattr(block, "name", None)}
    return {"type": kind}


def result_dict(result: Any, server: str, tool_name: str, local: str | None = None,
                clean: Callable[[str], str] | None = None, *,
                janito_peer: bool = False) -> dict[str, Any]:
    """janito's result for an MCP ``CallToolResult``.

    From another janito (``janito_peer``: the server called itself ``janito`` in the
    handshake) a structured result that already has janito's shape (``success`` and, on
    failure, ``error``/``error_type``) is returned as it is. Any other server's structured
    content is its ``result``, whatever keys it has: a third-party ``{"success": false,
    ...}`` still becomes janito's failure with ``error``, ``error_type``, ``server`` and
    ``tool``. ``clean`` removes secrets from an error text before it is shortened (the
    caller scrubs the rest).
    """
    structured = getattr(result, "structured_content", None)
    texts: list[str] = []
    others: list[dict[str, Any]] = []
    for block in getattr(result, "content", None) or []:
        if getattr(block, "type", None) == "text":
            texts.append(block.text)
        else:
            others.append(_block(block))
    text = "\n".join(texts)
    is_error = bool(getattr(result, "is_error", False))
    if janito_peer and _janito_shaped(structured):
        out = dict(structured)
        if is_error and out["success"]:
            out["success"] = False
            out.setdefault("error", text or f"{tool_name} reported an error")
            out.setdefault("error_type", "remote_error")
        return out
    where = {"server": server, "tool": local or tool_name}
    said_failure = isinstance(structured, dict) and structured.get("success") is False
    if is_error or said_failure:
        said = structured.get("error") if isinstance(structured, dict) else None
        if not isinstance(said, str) or not said.strip():
            said = structured.get("message") if isinstance(structured, dict) else None
        if not isinstance(said, str) or not said.strip():
            said = text
        shown = clean(said) if clean is not None else said
        message = " ".join(shown.split())[:2000] or f"{tool_name} reported an error without a message"
        extra: dict[str, Any] = {"content": others} if others else {}
        if structured is not None:
            extra["result"] = structured
        return failure(message, "remote_error", **where, **extra)
    out = {"success": True, **where}
    if structured is not None:
        out["result"] = structured
    if text and not (structured is not None and _same_json(text, structured)):
        out["text"] = text
    if others:
        out["content"] = others
    return out


def _janito_shaped(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("success"), bool):
        return False
    if value["success"]:
        return True
    return isinstance(value.get("error"), str) and isinstance(value.get("error_type"), str)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False
