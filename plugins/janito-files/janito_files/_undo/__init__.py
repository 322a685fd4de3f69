"""The "undo" toolset: a model's own calls put back, off unless the person adds it.

Undo is the person's tool (``janito undo``). A person who wants the model to take back
its own mistakes adds this toolset (``-t undo``, ``registry.add_toolset("undo")``); it is
never loaded by itself. What it undoes is only what the same caller (the same MCP
session, the same Python host, the same ``janito run``) recorded in the registry's
journal, never forced past a later change by anyone else.
"""
