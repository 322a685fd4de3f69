"""janito-files: the "files" toolset of janito.

Every tool resolves its paths through the registry's workspace, so nothing outside it is
read or written. Writes are atomic; listing and searching respect ``.gitignore``.
"""

from __future__ import annotations

__version__ = "0.1.0"
