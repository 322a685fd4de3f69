"""One tool call through each framework integration, against the same tool written in that
framework, and against the janito tool served over MCP stdio.

    python bench/bench_integrations.py [--number 300] [--repeat 7]

The tool counts the letters of a short text. For each framework, the call goes the way
the framework makes it once the model has asked for it, and nothing more (no model, no
agent loop):

- pydantic-ai: the toolset's argument validator, then ``toolset.call_tool`` (a
  ``FunctionToolset`` of the function; ``JanitoToolset``);
- OpenAI Agents SDK: ``FunctionTool.on_invoke_tool`` with the arguments' JSON
  (``@function_tool``; ``janito_core.integrations.openai_agents.tools``);
- LangChain: ``tool.invoke`` with the model's tool call, which gives the ToolMessage
  (``@tool``; ``janito_core.integrations.langchain.tools``);
- llm: ``Response.execute_tool_calls`` with the call (``llm.Tool.function``;
  ``janito_core.integrations.llm.tools``).

The janito tool goes through dispatch: validation, privileges, normalising the result
(no policy and no journal, as a ``Registry()`` has by default). MCP stdio is the SDK's
client calling ``janito mcp serve`` in another process, per call. Target: the
integration takes at most 1.5 times the CPU of the native tool per call; MCP is given
for scale. A framework that is not installed is skipped, and said so.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import Timing, alternate_calls, exit_status, load_note, verdict

warnings.filterwarnings("ignore")

TARGET = 1.5
TEXT = "The quick brown fox jumps over the lazy dog"
ARGUMENTS = {"text": TEXT}

TOOL_SOURCE = '''
from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class CountLetters(BaseTool):
    """Count the letters of a text."""

    def run(self, text: str) -> dict[str, Any]:
        """Count the letters of a text.

        Args:
            text: The text to count the letters of.
        """
        return {"letters": sum(c.isalpha() for c in text)}
'''


def count_letters(text: str) -> dict[str, Any]:
    """Count the letters of a text.

    Args:
        text: The text to count the letters of.
    """
    return {"letters": sum(c.isalpha() for c in text)}


def janito_registry() -> Any:
    from janito_core import Registry

    registry = Registry(autoload=(), reports="off")
    registry.add_toolset("benchletters")
    return registry


def write_toolset(site: Path) -> None:
    """A distribution of toolset ``benchletters`` (CountLetters) installed into ``site``."""
    package = site / "janito_benchletters"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "count_letters.py").write_text(textwrap.dedent(TOOL_SOURCE), encoding="utf-8")
    info = site / "janito_benchletters-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: janito-benchletters\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[janito.toolsets]\nbenchletters = janito_benchletters\n", encoding="utf-8")


# ---------------------------------------------------------------------- one call per framework


def pydantic_ai_calls(registry: Any, loop: asyncio.AbstractEventLoop
                      ) -> dict[str, Callable[[], object]]:
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from janito_core.integrations.pydantic_ai import JanitoToolset

    context = RunContext(deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="c")
    native = FunctionToolset([count_letters])
    janito = JanitoToolset(registry)
    text = json.dumps(ARGUMENTS)

    def caller(toolset: Any, name: str) -> Callable[[], object]:
        tool = loop.run_until_complete(toolset.get_tools(context))[name]

        async def call() -> object:
            arguments = tool.args_validator.validate_json(text)
            return await toolset.call_tool(name, arguments, context, tool)

        return lambda: loop.run_until_complete(call())

    return {"native": caller(native, "count_letters"), "janito": caller(janito, "CountLetters")}


def openai_agents_calls(registry: Any, loop: asyncio.AbstractEventLoop
                        ) -> dict[str, Callable[[], object]]:
    from agents import function_tool
    from agents.tool_context import ToolContext

    from janito_core.integrations.openai_agents import tools

    text = json.dumps(ARGUMENTS)

    def caller(tool: Any) -> Callable[[], object]:
        context = ToolContext(context=None, tool_name=tool.name, tool_call_id="c",
                              tool_arguments=text)
        return lambda: loop.run_until_complete(tool.on_invoke_tool(context, text))

    return {"native": caller(function_tool(count_letters)), "janito": caller(tools(registry)[0])}


def langchain_calls(registry: Any, loop: asyncio.AbstractEventLoop
                    ) -> dict[str, Callable[[], object]]:
    from langchain_core.tools import tool as langchain_tool

    from janito_core.integrations.langchain import tools

    def caller(tool: Any) -> Callable[[], object]:
        call = {"name": tool.name, "args": ARGUMENTS, "id": "c", "type": "tool_call"}
        return lambda: tool.invoke(call)

    return {"native": caller(langchain_tool(count_letters)), "janito": caller(tools(registry)[0])}


def llm_calls(registry: Any, loop: asyncio.AbstractEventLoop) -> dict[str, Callable[[], object]]:
    import llm

    from janito_core.integrations.llm import tools

    response = llm.get_model("echo").prompt("count")

    def caller(tool: Any) -> Callable[[], object]:
        call = llm.ToolCall(name=tool.name, arguments=ARGUMENTS, tool_call_id="c")
        return lambda: response.execute_tool_calls(tool_calls_list=[call], tools=[tool])

    return {"native": caller(llm.Tool.function(count_letters)),
            "janito": caller(tools(registry)[0])}


FRAMEWORKS: dict[str, tuple[tuple[str, ...], Callable[..., dict[str, Callable[[], object]]]]] = {
    "pydantic-ai": (("pydantic_ai",), pydantic_ai_calls),
    "OpenAI Agents SDK": (("agents",), openai_agents_calls),
    "LangChain": (("langchain_core",), langchain_calls),
    "llm": (("llm", "llm_echo"), llm_calls),
}


# ------------------------------------------------------------------------------------ MCP


async def mcp_per_call(site: Path, config: Path, number: int, repeat: int) -> Timing:
    """Seconds per call of the SDK's client calling ``janito mcp serve`` over stdio (wall
    time, and the CPU of both processes: the client's and the server's)."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = dict(os.environ)
    env.update({"PYTHONPATH": os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")])),
                "JANITO_CONFIG_DIR": str(config), "NO_COLOR": "1",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"})
    server = StdioServerParameters(command=sys.executable,
                                   args=["-m", "janito_mcp", "serve", "-t", "benchletters"],
                                   cwd=str(config), env=env)
    walls, cpus = [], []
    # the server's notes on stderr are not read
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(server, errlog=quiet)) as client:
            for _ in range(20):
                await client.call_tool("CountLetters", ARGUMENTS)
            for _ in range(repeat):
                cpu = time.process_time() + _server_cpu()
                started = time.perf_counter()
                for _ in range(number):
                    await client.call_tool("CountLetters", ARGUMENTS)
                walls.append((time.perf_counter() - started) / number)
                cpus.append((time.process_time() + _server_cpu() - cpu) / number)
    import statistics

    return Timing(statistics.median(walls), statistics.median(cpus))


def _server_cpu() -> float:
    """CPU seconds of the ``janito_mcp serve`` process this one started (still running, so
    not among the children whose time ``getrusage`` gives: read from /proc)."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and b"janito_mcp" in command:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


# ----------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=300, help="calls per batch")
    parser.add_argument("--repeat", type=int, default=7, help="batches of each, interleaved")
    options = parser.parse_args()
    print(f"One tool call, per framework; {load_note()}")
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        site, config = Path(folder) / "site", Path(folder) / "config"
        config.mkdir()
        write_toolset(site)
        sys.path.insert(0, str(site))
        os.environ["JANITO_CONFIG_DIR"] = str(config)
        registry = janito_registry()
        loop = asyncio.new_event_loop()
        print(f"{'framework':<18} {'native µs':>10} {'janito µs':>10} {'ratio (CPU)':>12} "
              f"{'ratio (wall)':>13}  verdict")
        for name, (modules, calls) in FRAMEWORKS.items():
            missing = [m for m in modules if importlib.util.find_spec(m) is None]
            if missing:
                print(f"{name:<18} skipped: {', '.join(missing)} not installed")
                continue
            functions = calls(registry, loop)
            for function in functions.values():  # warm up: first calls build schemas
                for _ in range(50):
                    function()
            timings = alternate_calls(functions, options.number, options.repeat)
            native, janito = timings["native"], timings["janito"]
            ratio = janito.ratio(native)
            verdicts.append(verdict(ratio.cpu, TARGET))
            print(f"{name:<18} {native.cpu * 1e6:>10.0f} {janito.cpu * 1e6:>10.0f} "
                  f"{ratio.cpu:>11.2f}x {ratio.wall:>12.2f}x  {verdicts[-1]}")
        loop.close()
        if importlib.util.find_spec("janito_mcp") and importlib.util.find_spec("mcp"):
            mcp = asyncio.run(mcp_per_call(site, config, max(options.number // 3, 50),
                                           options.repeat))
            print(f"{'MCP stdio':<18} {'':>10} {mcp.cpu * 1e6:>10.0f}   "
                  f"(janito mcp serve and the SDK's client, both processes' CPU; "
                  f"{mcp.wall * 1e6:.0f} µs wall)")
        else:
            print("MCP stdio          skipped: janito-mcp not installed")
    return exit_status(*verdicts)


if __name__ == "__main__":
    sys.exit(main())
