"""OpenTelemetry spans and metrics for tool calls, when ``opentelemetry-api`` is installed.

``load()`` is called on a process's first tool call and answers this module's ``Tracing``
(or None when the API is not importable, which is then never tried again). Each call
gets one ``execute_tool {name}`` span, named and described as the GenAI semantic
conventions say, with janito's own facts under ``janito.`` (docs/tracing.md lists them
and the text of the conventions they were checked against).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ._text import first_line
from .results import APPROVAL_REQUIRED

if TYPE_CHECKING:
    from .registry import ToolRecord

SCOPE = "janito"
#: ``error.type`` of a failure that names no ``error_type``: the conventions' own fallback.
OTHER = "_OTHER"
#: ``janito.policy.approval``: how the policy's ask about a call was settled.
APPROVED, DECLINED, PENDING = "approved", "declined", "pending"


class Tracing:
    """The tracer and the three instruments every traced call reports to."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        """The global providers' tracer and meter, unless others are given (benchmarks)."""
        from opentelemetry import context, metrics, trace

        version = _version()
        self.trace = trace
        self.metrics = metrics
        self.context = context
        # Where a call's Span sits in the OpenTelemetry context, beside the span itself,
        # so that the policy's step (``_gate``) finds the call it is settling.
        self.key = context.create_key("janito-call")
        # Until a provider is set the API hands out proxies, whose spans record nothing:
        # while neither global is set a call is not traced at all. The check reads the
        # API's two globals (get_tracer_provider() would read the environment each time).
        #: The two API modules whose globals say no provider is set yet, else None (a
        #: provider, once set, stays). call_tool reads them itself on every call.
        self.unset: tuple[Any, Any] | None = None
        if tracer_provider is None and meter_provider is None:
            self.unset = _globals()
        self.tracer = trace.get_tracer(SCOPE, version, tracer_provider)
        meter = metrics.get_meter(SCOPE, version or "", meter_provider)
        self.calls = meter.create_counter(
            "janito.tool.calls", unit="{call}", description="Tool calls, by tool and error type")
        self.failures = meter.create_counter(
            "janito.tool.call.failures", unit="{call}",
            description="Tool calls that answered success: false, by tool and error type")
        self.duration = meter.create_histogram(
            "janito.tool.call.duration", unit="s",
            description="Time from the call's arrival to its answer, by tool and error type")

    def start(self, name: Any) -> Span | None:
        """The call's span, now current; None while no provider is set."""
        unset = self.unset
        if unset is not None:
            if unset[0]._TRACER_PROVIDER is None and unset[1]._METER_PROVIDER is None:
                return None
            self.unset = None
        text = name if isinstance(name, str) else "(invalid)"
        span = self.tracer.start_span(
            f"execute_tool {text}", kind=self.trace.SpanKind.INTERNAL,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": text})
        return Span(self, span, text)

    def settled(self, decision: Any, call_id: str | None, approved: bool,
                answer: Any, approval_id: str) -> None:
        """Put how the policy's ask was settled on the span of the call it was about.

        Called by ``_gate`` on the thread (or task) that admits the call, where that
        call's span is current. A call whose span is not current here (an untraced call
        made inside a traced tool) leaves the enclosing span alone: the decision and the
        call id must be the very ones the span was prepared with.
        """
        current = self.context.get_value(self.key)
        if not isinstance(current, Span) or current.decision is not decision \
                or current.call_id != call_id:
            return
        span = current.span
        if not span.is_recording():
            return
        if approved:
            outcome = APPROVED
        elif isinstance(answer, dict) and answer.get("error_type") == APPROVAL_REQUIRED:
            outcome = PENDING
        else:
            outcome = DECLINED
        span.set_attribute("janito.policy.approval", outcome)
        span.set_attribute("janito.policy.approval_id", approval_id)


class Span:
    """One call's span, current in the context while the call runs."""

    __slots__ = ("_token", "call_id", "decision", "name", "span", "started", "tracing")

    def __init__(self, tracing: Tracing, span: Any, name: str) -> None:
        context = tracing.context
        self.tracing = tracing
        self.span = span
        self.name = name
        #: The policy's decision and the call's id, once prepared (``Tracing.settled``).
        self.decision: Any = None
        self.call_id: str | None = None
        self.started = time.perf_counter()
        self._token = context.attach(
            context.set_value(tracing.key, self, tracing.trace.set_span_in_context(span)))

    def prepared(self, record: ToolRecord, decision: Any, call_id: str | None) -> None:
        """What is known once the call passed its checks (the tool, the policy's word)."""
        self.decision = decision
        self.call_id = call_id
        span = self.span
        if not span.is_recording():
            return
        if call_id is not None:
            span.set_attribute("gen_ai.tool.call.id", call_id)
        # "function": the model names the call and its arguments, the host runs it
        span.set_attribute("gen_ai.tool.type", "function")
        description = first_line(record.cls.__doc__)
        if description:
            span.set_attribute("gen_ai.tool.description", description)
        span.set_attribute("janito.tool.permissions", record.permissions)
        if record.toolset:
            span.set_attribute("janito.toolset", record.toolset)
        if decision is not None:
            span.set_attribute("janito.policy.decision", decision.action)
            span.set_attribute("janito.policy.source", decision.source)
            if decision.rule is not None:
                span.set_attribute("janito.policy.rule", decision.rule.text)

    def finish(self, result: Any, call_id: str | None) -> None:
        """Record the answer, end the span and count the call."""
        self.tracing.context.detach(self._token)
        elapsed = time.perf_counter() - self.started
        span = self.span
        error_type = None
        named = None
        if isinstance(result, dict) and result.get("success") is False:
            named = result.get("error_type")
            error_type = str(named) if named else OTHER
        if span.is_recording():
            if call_id is not None:
                span.set_attribute("gen_ai.tool.call.id", call_id)
            if error_type is not None:
                span.set_attribute("error.type", error_type)
                if named:
                    span.set_attribute("janito.error_type", error_type)
                if error_type == "denied_by_policy":
                    span.set_attribute("janito.policy.decision", "deny")
                    rule = result.get("rule")
                    if isinstance(rule, str):
                        span.set_attribute("janito.policy.rule", rule)
                    source = result.get("source")
                    span.set_attribute("janito.policy.source",
                                       source if isinstance(source, str) else "mode")
                # The description is the result's sentence, never error.type again
                # (the conventions advise against repeating it there).
                said = result.get("error")
                span.set_status(self.tracing.trace.Status(
                    self.tracing.trace.StatusCode.ERROR,
                    said if isinstance(said, str) and said else None))
        span.end()
        self._count(elapsed, error_type)

    def failed(self, exc: BaseException) -> None:
        """End the span of a call that raised (a cancelled awaiting task), and count it:
        its span and its metrics carry the same ``error.type``."""
        self.tracing.context.detach(self._token)
        elapsed = time.perf_counter() - self.started
        span = self.span
        # The class's full name, as the conventions ask and the SDK's exception events do
        kind = type(exc)
        error_type = kind.__qualname__ if kind.__module__ in ("builtins", "") \
            else f"{kind.__module__}.{kind.__qualname__}"
        if span.is_recording():
            span.set_attribute("error.type", error_type)
            span.set_status(self.tracing.trace.Status(self.tracing.trace.StatusCode.ERROR,
                                                      str(exc) or None))
        span.end()
        self._count(elapsed, error_type)

    def _count(self, elapsed: float, error_type: str | None) -> None:
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": self.name}
        if error_type is not None:
            attributes["error.type"] = error_type
            self.tracing.failures.add(1, attributes)
        self.tracing.calls.add(1, attributes)
        self.tracing.duration.record(elapsed, attributes)


def _globals() -> tuple[Any, Any] | None:
    """The modules holding the API's global providers, when neither is set yet and no
    environment variable names one; None when that cannot be told (always trace)."""
    import os

    from opentelemetry import trace
    from opentelemetry.metrics import _internal

    if ("OTEL_PYTHON_TRACER_PROVIDER" in os.environ
            or "OTEL_PYTHON_METER_PROVIDER" in os.environ):
        return None
    if (getattr(trace, "_TRACER_PROVIDER", ...) is not None
            or getattr(_internal, "_METER_PROVIDER", ...) is not None):
        return None
    return trace, _internal


def _version() -> str | None:
    try:
        from importlib.metadata import version

        return version("janito-core")
    except Exception:
        return None


def load() -> Tracing | None:
    """The tracing of this process, or None when ``opentelemetry-api`` is not installed."""
    try:
        return Tracing()
    except ImportError:
        return None
