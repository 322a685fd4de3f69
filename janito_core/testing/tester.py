"""ToolsetTester: an isolated registry, a workspace and a ``call`` that goes through dispatch."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..dispatch import call_tool
from ..privileges import Privileges
from ..registry import Registry
from ..workspace import Workspace
from ._results import ResultSchemas, shorten

if TYPE_CHECKING:
    from ..journal import Journal
    from .conformance import Report


class ToolsetTester:
    """What the ``janito`` fixture gives a test.

    ``load("files")`` builds a fresh registry with those toolsets (and only those), rooted
    in the temporary ``workspace``; ``add(tool, ...)`` registers tools defined in the test
    itself; ``call(name, ...)`` sends a call through dispatch as a model would, so
    validation, privileges and hooks all apply, and holds the answer to the result type
    the tool declares (``check_results``); ``check(toolset)`` runs the conformance check.
    """

    def __init__(self, workspace: Path, *, check_results: bool = True) -> None:
        self.workspace = workspace
        self.registry: Registry | None = None
        #: Whether ``call()`` fails, with an AssertionError saying where, on an answer that
        #: the result type its tool's ``run()`` declares (a TypedDict or a pydantic model)
        #: does not describe: each success held to that type, each failure to janito's.
        #: A test that means to look at such an answer sets it to False.
        self.check_results = check_results
        self._result_schemas = ResultSchemas()
        self._unchecked_said = False

    def load(self, *toolsets: str, privileges: str | Privileges | None = None,
             confined: bool = True, journal: bool = False) -> Registry:
        """A fresh registry of ``toolsets``; ``journal=True`` records every call and change
        in a journal of the test's own configuration folder (``self.journal``)."""
        if isinstance(privileges, str):
            privileges = Privileges.from_string(privileges)
        registry = Registry(
            privileges=privileges,
            workspace=Workspace(self.workspace, confined=confined),
            autoload=(),
            allowed=None,
            journal=journal,
        )
        for name in toolsets:
            registry.add_toolset(name)
        self.registry = registry
        return registry

    def add(self, *tools: Any, privileges: str | Privileges | None = None) -> Registry:
        """Register ``@tool`` classes or functions directly (no distribution needed), in the
        loaded registry or, before any ``load()``, in a fresh one with no toolset."""
        if self.registry is None:
            self.load(privileges=privileges)
        elif privileges is not None:
            raise TypeError("privileges are set by load(); add() only adds tools to its registry")
        assert self.registry is not None
        for obj in tools:
            self.registry.add_tool(obj, toolset="test", distribution="test")
        return self.registry

    def check(self, toolset: str, **options: Any) -> Report:
        """The conformance check of ``toolset`` (``check_toolset``), in this test's isolated
        configuration; raises ConformanceError listing the problems, else returns the report."""
        from .conformance import check_toolset

        return check_toolset(toolset, **options)

    def call(self, name: str, arguments: str | dict[str, Any] | None = None, /,
             **kwargs: Any) -> dict[str, Any]:
        """Call tool ``name`` with a JSON string, a mapping, or keyword arguments."""
        if self.registry is None:
            raise RuntimeError("call janito.load(<toolset>) before janito.call()")
        if arguments is None:
            arguments = kwargs
        elif kwargs:
            raise TypeError("pass the arguments either as one value or as keywords, not both")
        result = call_tool(name, arguments, registry=self.registry)
        if self.check_results:
            self._hold_to_declared_type(self.registry, name, result)
        return result

    def _hold_to_declared_type(self, registry: Registry, name: str,
                               result: dict[str, Any]) -> None:
        record = registry.record(name)
        if record is None or record.status != "loaded":
            return  # no such tool here: the answer is dispatch's failure, nothing declared
        declared = registry.schema(name).output_schema
        if declared is None:
            return
        if not self._result_schemas.checking:
            if not self._unchecked_said:
                self._unchecked_said = True
                warnings.warn(f"{name} declares its result type, but answers are not held to "
                              "it: install jsonschema (janito-core's test extra has it)",
                              stacklevel=3)
            return
        problem = self._result_schemas.problem(declared, result)
        if problem is not None:
            raise AssertionError(
                f"{name}: {problem}\n  answer: {shorten(repr(result), 2000)}\n  fix: make "
                "run()'s result type describe every result it returns (NotRequired for a key "
                "that is not always there); a test that means to see such an answer sets "
                "janito.check_results = False")

    @property
    def journal(self) -> Journal:
        """The journal of the loaded registry (``load(..., journal=True)``)."""
        journal = self.registry.journal if self.registry is not None else None
        if journal is None:
            raise RuntimeError("load the toolsets with journal=True to have a journal")
        return journal

    def path(self, relative: str) -> Path:
        """A path inside the workspace."""
        return self.workspace / relative
