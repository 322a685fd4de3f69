"""What the model reads of the options the three run tools share, written once.

RunBashCode, RunPythonCode and RunPythonFile take the same working folder, timeout and
output options (and the two Python tools the same interpreter option). Each is a type
alias here whose ``Annotated`` text is the parameter's description in the schema, so the
tools' signatures stay plain to read and cannot drift apart in what they tell the model.
A tool documents in its own ``Args:`` only the parameters that are its own.
"""

from __future__ import annotations

from typing import Annotated, Optional

from janito_core.constraints import Gt

#: A string without a NUL character, which no command line or source file can hold.
NO_NUL = r"^[^\x00]*$"

WorkingDirectory = Annotated[
    Optional[str],
    "Folder to run in, relative to the workspace root (default: the workspace root). It "
    "must lie inside the workspace.",
]
Timeout = Annotated[
    float,
    "Seconds to wait before the run is killed along with every process it started "
    "(default 60).",
    Gt(0),
]
CaptureOutput = Annotated[bool, "Return standard output (true) or discard it (false)."]
CaptureErrors = Annotated[bool, "Return standard error (true) or discard it (false)."]
PythonExecutable = Annotated[
    Optional[str],
    "Python interpreter to run with (default: the Python that runs janito).",
]
