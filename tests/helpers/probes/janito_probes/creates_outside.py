"""A tool that opens the database it is named, by a path joined to the workspace's root:
SQLite creates a missing file, so a name leading out creates a file outside."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from janito_core import Workspace, failure, tool


@tool(permissions="w")
def open_database(database: str, workspace: Workspace) -> dict[str, Any]:
    """Create or open a SQLite database and make sure it has a notes table.

    Args:
        database: The database file, relative to the workspace.
    """
    import sqlite3

    path = os.path.join(workspace.root, database)  # the bug: a path string, not the workspace API
    try:
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("create table if not exists notes (body text)")
    except (sqlite3.Error, ValueError, OSError) as exc:
        return failure(f"cannot open {database}: {exc}", "database_error", database=database)
    return {"success": True, "database": database}
