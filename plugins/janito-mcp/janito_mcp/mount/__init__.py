"""The ``mcp`` toolset: the tools of the MCP servers listed in ``mcp.json``.

Its public module ``servers`` is imported when the toolset loads: it holds one tool class
per remote tool, named ``<server>__<tool>``, and in ``janito_load_errors`` one line per
server that could not be started (or entry of the file that is broken), which janito
reports as a load error of janito-mcp each.
"""
