"""janito-system: the "system" toolset of janito.

Run Python and shell code in the workspace, read the clock, fetch a web page as text,
and ask the person at the terminal a question. Each tool lives in its own module.
"""

from __future__ import annotations

__version__ = "0.1.0"
