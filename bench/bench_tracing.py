"""What tracing costs a call: call_tool with OpenTelemetry absent, with the API and no
provider, and with the SDK's providers, interleaved in one process.

"absent" is measured by telling dispatch the API is not installed (what the first call
decides when it is not); the others need ``opentelemetry-api`` and ``opentelemetry-sdk``.
The SDK case exports each span to an in-memory exporter through the simple processor
and records the three metrics, so it is an upper bound for a batching exporter.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from _common import alternate_calls, load_note

from janito_core import BaseTool, Registry, tool
from janito_core._telemetry import Tracing
from janito_core.dispatch import call_tool


@tool(permissions="r")
class Ping(BaseTool):
    """Answer at once."""

    def run(self) -> dict[str, Any]:
        """Answer at once."""
        return {"success": True}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    registry = Registry(autoload=())
    registry.add_tool(Ping)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    modes: dict[str, Any] = {"absent": False, "API, no provider": Tracing(),
                             "SDK provider": Tracing(provider, meters)}
    ping = Ping()

    def calling(mode: Any) -> Any:
        def once() -> None:
            registry.tracing = mode
            call_tool("Ping", "{}", registry=registry, call_id="c1")
            if len(exporter._finished_spans) > 1000:
                exporter.clear()
        return once

    timings = {"Ping.run()": lambda: ping.run()}
    timings.update({f"call_tool, {name}": calling(mode) for name, mode in modes.items()})
    medians = alternate_calls(timings, args.number, args.repeat)
    print(f"tracing, medians of {args.repeat} interleaved repeats of {args.number} calls; "
          f"{load_note()}")
    absent = medians["call_tool, absent"]
    for name, value in medians.items():
        extra = "" if name == "Ping.run()" else f"  (+{(value.cpu - absent.cpu) * 1e6:.2f} µs CPU)"
        print(f"  {name:<30} {value.wall * 1e6:7.2f} µs wall {value.cpu * 1e6:7.2f} µs CPU{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
