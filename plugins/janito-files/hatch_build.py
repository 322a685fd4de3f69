"""Builds ``janito_files._speedups``, the compiled steps of the search and of the walk
(each file read and searched; each folder listed, and listed ahead on a thread of its own;
FindFiles' picking by a plain glob).

A wheel built where a C compiler and Python's headers exist carries the module and is
tagged ``cp310-abi3-<platform>``: built against Python 3.10's limited API, it loads on
3.10 and every later version. Without a compiler the build warns and makes the pure-Python
wheel, whose search runs the same steps in Python (the twins in ``janito_files._steps``):
the same answers, more slowly. Editable installs run
the Python steps. ``JANITO_FILES_NO_EXTENSIONS=1`` builds the pure-Python wheel on purpose: a
release publishes both, so pip finds a wheel wherever the compiled one does not fit
(docs/decisions/0014-janito-files-wheels.md).

docs/decisions/0013-compiled-search-steps.md and 0019-search-batches-and-threads.md give
the figures behind this.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "janito_files._speedups"
SOURCE = "janito_files/_speedups.c"


def compile_speedups(root: str, work: str) -> Path:
    """The built extension module (a file below ``work``); raises what the compiler raised."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    # The source itself defines Py_LIMITED_API (3.10).
    extension = Extension(MODULE, [str(Path(root, SOURCE))], py_limited_api=True,
                          extra_compile_args=["-pthread"], extra_link_args=["-pthread"])
    command = build_ext(Distribution({"name": "janito-files", "ext_modules": [extension]}))
    command.build_lib = str(Path(work, "lib"))
    command.build_temp = str(Path(work, "temp"))
    command.ensure_finalized()
    command.run()
    return Path(command.get_ext_fullpath(MODULE))


class SpeedupsBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        if os.environ.get("JANITO_FILES_NO_EXTENSIONS") == "1":
            return
        self._work = tempfile.mkdtemp(prefix="janito-files-build-")
        try:
            built = compile_speedups(self.root, self._work)
        except Exception as exc:  # no compiler, no headers: the pure-Python wheel
            self.app.display_warning(
                f"janito-files: {MODULE} was not compiled ({type(exc).__name__}: {exc}); "
                "the wheel is pure Python and SearchText runs its per-file steps in Python")
            return
        platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["pure_python"] = False
        build_data["tag"] = f"cp310-abi3-{platform}"
        build_data["force_include"][str(built)] = f"janito_files/{built.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work:
            shutil.rmtree(work, ignore_errors=True)
