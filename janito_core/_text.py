"""A docstring's first line: what a tool's description is made of.

Apart from the schema machinery, so that listing tools (``ToolRecord.description``) does
not import it.
"""

from __future__ import annotations


def first_line(doc: str | None) -> str:
    """The first line of ``doc`` that is not blank, stripped; "" when there is none."""
    if not doc:
        return ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""
