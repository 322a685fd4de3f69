"""A tiny toolset served over MCP by janito-mcp's tests."""
