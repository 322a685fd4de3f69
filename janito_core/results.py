"""The shape of a failed result, and the error types janito itself uses.

Kept apart from dispatch so a tool module can build failures without importing the
dispatch machinery (and ``json``) when its toolset loads.
"""

from __future__ import annotations

from typing import Any, NewType

INVALID_JSON = "invalid_json"
INVALID_ARGUMENTS = "invalid_arguments"
UNKNOWN_TOOL = "unknown_tool"
UNAVAILABLE = "tool_unavailable"
PERMISSION_DENIED = "permission_denied"
TOOL_EXCEPTION = "tool_exception"
INVALID_RESULT = "invalid_result"
OUTSIDE_WORKSPACE = "outside_workspace"
PLUGIN_ERROR = "plugin_error"
REFUSED = "refused"
TIMEOUT = "timeout"
CANCELLED = "cancelled"
DENIED_BY_POLICY = "denied_by_policy"
APPROVAL_REQUIRED = "approval_required"
APPROVAL_DECLINED = "approval_declined"
NOT_JOURNALED = "not_journaled"


#: A failed result, as ``failure()`` builds it: ``success`` false, ``error``, ``error_type``
#: and whatever the tool adds. A tool that declares its result type returns ``Counted |
#: Failure``: ``Counted`` what a success holds, ``Failure`` what ``failure()`` built, whose
#: shape every output schema allows already. To a type checker it is a ``dict[str, Any]``
#: that only ``failure()`` makes; at run time, a plain dict.
Failure = NewType("Failure", dict[str, Any])


def failure(error: str, error_type: str, **extra: Any) -> Failure:
    """A failed result: ``success`` false, one-sentence ``error``, its ``error_type``."""
    return Failure({"success": False, "error": error, "error_type": error_type, **extra})


def counted(count: float, noun: str, plural: str | None = None) -> str:
    """``count`` with ``noun``, made plural unless the count is exactly one:
    ``counted(1, "byte")`` is "1 byte", ``counted(2.5, "second")`` "2.5 seconds",
    ``counted(3, "match", "matches")`` "3 matches"."""
    shown = f"{count:g}" if isinstance(count, float) else str(count)
    return f"{shown} {noun if count == 1 else plural or noun + 's'}"
