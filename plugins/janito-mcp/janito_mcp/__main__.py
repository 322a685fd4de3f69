"""``python -m janito_mcp serve ...``: the ``janito mcp`` command without the ``janito`` command."""

from __future__ import annotations

import sys

from ._commands import main

if __name__ == "__main__":
    sys.exit(main())
