"""What every OneDrive tool shares: the load gate, the client, and failure results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from janito_core import Failure, failure

if TYPE_CHECKING:
    from ._graph import GraphClient


def gate(cls: Any) -> bool:
    """The body of every OneDrive tool's ``should_load``."""
    from ._auth import not_ready_reason

    reason = not_ready_reason()
    if reason is None:
        return True
    return bool(cls.skip(reason))


def client() -> GraphClient:
    from ._auth import MsalTokenProvider
    from ._graph import GraphClient

    return GraphClient(MsalTokenProvider())


def invalid(message: str, **echo: Any) -> Failure:
    return failure(message, "invalid_arguments", **echo)


def guarded(tool: Any, body: Callable[[], dict[str, Any]], **echo: Any) -> dict[str, Any]:
    """Run ``body`` and turn every failure into a result that carries no credential."""
    from ._errors import OneDriveError, redact

    try:
        return body()
    except OneDriveError as exc:
        result = exc.result(**echo)
        _report_error(tool, result["error"])
        return result
    except Exception as exc:
        text = str(exc).strip()
        message = redact(f"unexpected {type(exc).__name__}" + (f": {text}" if text else ""))
        _report_error(tool, message)
        return failure(message, "tool_exception", **echo)


def _report_error(tool: Any, message: str) -> None:
    try:
        tool.report_error(message)
    except Exception:
        pass


def not_found(kind: str, path: str) -> str:
    return f"no OneDrive {kind} at '{path or '/'}'"
