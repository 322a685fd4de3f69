"""Executing what a model asks for.

``call_tool(name, arguments)`` turns one tool call into a result dict and never raises
for anything the model or the tool did. Every result has ``success``; a failure has
``error`` (one sentence), ``error_type`` and, for bad arguments, ``details`` naming each
bad field. ``execute_tool_calls`` does the same for all the calls of one assistant turn
in the OpenAI chat, OpenAI responses, Anthropic or Gemini shape, running them at the same
time. ``acall_tool`` and ``aexecute_tool_calls`` are the same for a caller on an event
loop: ``async def run()`` tools are awaited there, the others run in threads.

The work is split by concern: the arguments (``_arguments``), one call (``_call``), the
policy's step in it (``_gate``), results (``_shape``) and whole turns (``_turn``); this
module is what callers import.
"""

from __future__ import annotations

from ._arguments import _validate
from ._call import ToolCall, acall_tool, call_tool
from ._shape import DEFAULT_MAX_RESULT_CHARS, MAX_DEPTH, normalise_result, truncate_result, utf8_text
from ._turn import MAX_CONCURRENCY, aexecute_tool_calls, execute_tool_calls
from .results import (
    APPROVAL_DECLINED,
    APPROVAL_REQUIRED,
    CANCELLED,
    DENIED_BY_POLICY,
    INVALID_ARGUMENTS,
    INVALID_JSON,
    INVALID_RESULT,
    NOT_JOURNALED,
    OUTSIDE_WORKSPACE,
    PERMISSION_DENIED,
    PLUGIN_ERROR,
    REFUSED,
    TIMEOUT,
    TOOL_EXCEPTION,
    UNAVAILABLE,
    UNKNOWN_TOOL,
    failure,
)

__all__ = [
    "APPROVAL_DECLINED", "APPROVAL_REQUIRED", "CANCELLED", "DEFAULT_MAX_RESULT_CHARS",
    "DENIED_BY_POLICY", "INVALID_ARGUMENTS", "INVALID_JSON", "INVALID_RESULT", "MAX_CONCURRENCY",
    "MAX_DEPTH", "NOT_JOURNALED", "OUTSIDE_WORKSPACE", "PERMISSION_DENIED", "PLUGIN_ERROR", "REFUSED", "TIMEOUT",
    "TOOL_EXCEPTION", "UNAVAILABLE", "UNKNOWN_TOOL", "ToolCall", "_validate", "acall_tool",
    "aexecute_tool_calls", "call_tool", "execute_tool_calls", "failure", "normalise_result",
    "truncate_result", "utf8_text",
]
