"""Raises ImportError naming every configured MCP server that could not be mounted.

janito records a module that fails to import as a load error of the toolset's
distribution, with the message; the servers that did start keep their tools.
"""

from __future__ import annotations

from .._mount import mounted

_problems = mounted().problems
if _problems:
    raise ImportError("; ".join(_problems))

