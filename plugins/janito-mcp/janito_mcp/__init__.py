"""janito-mcp: janito's tools over the Model Context Protocol, and MCP servers as janito tools.

``janito mcp serve`` exposes the loaded janito tools to any MCP client; the ``mcp``
toolset (``janito tools -t mcp``) mounts the MCP servers listed in ``mcp.json`` as
janito tools named ``<server>__<tool>``. Importing this package imports nothing from the
MCP SDK: the SDK loads only when serving or when the ``mcp`` toolset loads.
"""

# Nothing is imported here, not even ``__future__``: ``python -m janito_mcp`` imports this
# package while the working folder is still first on the import path (see ``__main__``).

__version__ = "0.1.0"

__all__ = ["__version__"]
