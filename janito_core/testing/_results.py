"""The conformance kit's check that a tool's answers match the result type it declares.

A tool whose ``run()`` is annotated to return a TypedDict or a pydantic model declares the
shape of its results (MCP's ``outputSchema``, the ``output_schema`` of its schema). Every
answer a model would receive, after dispatch (``success`` added, the size limit applied),
must match it: a success the declared shape, a failure janito's failure shape.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ..schema import result_branches


class ResultSchemas:
    """Checks answers against their tools' declared result schemas; compiled once per tool.

    Without ``jsonschema`` installed (the kit's ``test`` extra has it) nothing is checked.
    """

    def __init__(self) -> None:
        self._validators: dict[int, tuple[Any, Any] | None] = {}
        #: Whether answers are checked at all: jsonschema can be imported.
        self.checking = importlib.util.find_spec("jsonschema") is not None

    def problem(self, output_schema: dict[str, Any] | None, result: Any) -> str | None:
        """Where ``result`` breaks ``output_schema``, in one sentence; None when it matches
        or there is nothing to check."""
        if output_schema is None or not isinstance(result, dict):
            return None
        key = id(output_schema)
        if key not in self._validators:
            self._validators[key] = _validators(output_schema)
        pair = self._validators[key]
        if pair is None:
            return None
        succeeded = result.get("success") is True
        validator = pair[0] if succeeded else pair[1]
        import jsonschema

        error = jsonschema.exceptions.best_match(validator.iter_errors(result))
        if error is None:
            return None
        where = "".join(f"[{step!r}]" for step in error.absolute_path)
        kind = "a successful result" if succeeded else "a failure"
        return (f"{kind} does not match the declared result type: result{where}: "
                f"{shorten(error.message)}")


def _validators(output_schema: dict[str, Any]) -> tuple[Any, Any] | None:
    try:
        import jsonschema
    except ImportError:
        return None
    success, failed = result_branches(output_schema)
    return (jsonschema.Draft202012Validator(success), jsonschema.Draft202012Validator(failed))


def shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
