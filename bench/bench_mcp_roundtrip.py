"""MCP round trip per tool call, as janito-mcp measures it, against the SDK's own.

The measurement belongs to janito-mcp (plugins/janito-mcp/tests/measure_roundtrip.py,
which uses that suite's servers and its ``mcptest`` toolset); this script runs it with
this interpreter and passes its options on. Its baseline, measured in the same run, is
the SDK's client calling an SDK server over stdio with janito at neither end. There is
no target: issue 9 asks for the figure.

    python bench/bench_mcp_roundtrip.py [--calls 300] [--rounds 5]

Needs janito-mcp and its test extra installed; without them it says so and exits 0.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from _common import ROOT, load_note

SCRIPT = ROOT / "plugins" / "janito-mcp" / "tests" / "measure_roundtrip.py"


def main() -> int:
    missing = [m for m in ("janito_mcp", "mcp", "pytest") if importlib.util.find_spec(m) is None]
    if not SCRIPT.is_file() or missing:
        why = f"{SCRIPT.relative_to(ROOT)} is missing" if not SCRIPT.is_file() else (
            f"{', '.join(missing)} not installed (install janito-mcp[test])")
        print(f"bench_mcp_roundtrip: skipped, {why}")
        return 0
    print(f"MCP round trip per call; {load_note()}")
    done = subprocess.run([sys.executable, str(SCRIPT), *sys.argv[1:]], cwd=SCRIPT.parent.parent,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stdout + done.stderr)
        return done.returncode
    table = done.stdout.strip().splitlines()
    start = next((i for i, line in enumerate(table) if line.startswith("path")), 0)
    print("\n".join(table[start:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
