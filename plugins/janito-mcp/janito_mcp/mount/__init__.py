"""The ``mcp`` toolset: the tools of the MCP servers listed in ``mcp.json``.

Its public modules are imported when the toolset loads: ``servers`` holds one tool class
per remote tool, named ``<server>__<tool>``; ``startup`` fails to import, naming each
server that could not be started, so janito reports it as a load error of janito-mcp.
"""
