"""``python -m janito_mcp serve ...``: the ``janito mcp`` command without the ``janito`` command.

``python -m`` puts the working folder (the workspace a client may write into) first on the
import path. It is taken off before anything else is imported, so a ``difflib.py`` a
client wrote with a file tool can never run inside the server. This cannot use
``janito_core.harness.forget_working_folder``: importing janito_core imports standard
modules, which would already come from the working folder. The package's ``__init__``
imports nothing for the same reason.
"""

import os
import sys

if not getattr(sys.flags, "safe_path", False) and sys.path:
    try:
        _here = os.getcwd()
    except OSError:
        _here = None
    if sys.path[0] == "" or (_here is not None
                             and os.path.realpath(sys.path[0]) == os.path.realpath(_here)):
        del sys.path[0]

from janito_mcp._commands import main

if __name__ == "__main__":
    sys.exit(main())
