"""setuptools integration: a ``build_py`` that lowers match statements on the way to the wheel.

Use it from pyproject.toml::

    [build-system]
    requires = ["setuptools>=64", "spam-transpile"]
    build-backend = "setuptools.build_meta"

    [tool.setuptools.cmdclass]
    build_py = "spam_transpile.integrations.setuptools.build_py"

    [tool.spam-transpile]          # optional
    target = "3.9"
    exclude = ["src/pkg/_native.py"]

or from setup.py (``setup(cmdclass={"build_py": build_py})``). Options come
from ``[tool.spam-transpile]`` in pyproject.toml, as for every other entry
point (the target defaults to the oldest Python ``requires-python``
allows), and can be overridden per command (``setup.cfg`` ``[build_py]``
section or the command line): ``transpile-target``, ``transpile-include``,
``transpile-exclude``. Like hatchling's hook, the command prints which
settings it used and ``lowered N of M modules for Python X``.

Only the copies in the build folder are rewritten: the sdist, which
setuptools assembles from the project tree, keeps the original sources, and
nothing is added to the distribution's metadata or dependencies.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Optional, Tuple

# setuptools ships no type information (types-setuptools would be a test-only
# dependency for two names).
from setuptools.command.build_py import (  # type: ignore[import-untyped]
    build_py as _setuptools_build_py,
)
from setuptools.errors import (  # type: ignore[import-untyped]
    BaseError as _SetuptoolsError,
)

from spam_transpile.integrations import (
    BuildError,
    build_settings,
    lower_file_bytes,
    summary,
)
from spam_transpile.files.write import write_atomic

__all__ = ["SetuptoolsBuildError", "build_py"]


class SetuptoolsBuildError(BuildError, _SetuptoolsError):  # type: ignore[misc]
    """A :class:`BuildError` that ``setup.py`` prints as ``error: path:line:col: ...``."""


class build_py(_setuptools_build_py):  # noqa: N801 (setuptools' own spelling)
    """``build_py`` that writes lowered modules into the build folder."""

    user_options = _setuptools_build_py.user_options + [
        (
            "transpile-target=",
            None,
            "oldest Python the built modules must run on "
            "[default: from [tool.spam-transpile] or requires-python]",
        ),
        ("transpile-include=", None, "globs of modules to lower [default: *.py]"),
        ("transpile-exclude=", None, "globs of modules to ship unchanged"),
    ]

    def initialize_options(self) -> None:
        super().initialize_options()
        self.transpile_target: Optional[str] = None
        self.transpile_include: Optional[Any] = None
        self.transpile_exclude: Optional[Any] = None

    def finalize_options(self) -> None:
        super().finalize_options()
        try:
            self._finalize_transpile_options()
        except BuildError as exc:
            raise SetuptoolsBuildError(exc.error) from None
        self._lowered = self._checked = 0

    def _finalize_transpile_options(self) -> None:
        command = {
            "target": self.transpile_target,
            "include": self.transpile_include,
            "exclude": self.transpile_exclude,
        }
        settings = build_settings(Path.cwd(), command=command)
        self._target, self._selector = settings.target, settings.selector
        self._origin = settings.origin

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            _info(f"spam-transpile: {self._origin}")
        super().run()
        if not getattr(self, "editable_mode", False):
            # The same line hatchling's hook prints.
            _info(summary(self._lowered, self._checked, self._target))

    def build_module(
        self, module: str, module_file: str, package: Any
    ) -> Tuple[str, bool]:
        outfile, copied = super().build_module(module, module_file, package)
        # Editable installs run the sources in place; there is no copy to lower.
        if not getattr(self, "editable_mode", False):
            try:
                self._lower(module_file, outfile)
            except BuildError as exc:
                raise SetuptoolsBuildError(exc.error) from None
        return outfile, copied

    def _lower(self, module_file: str, outfile: str) -> None:
        relative = _relative(module_file)
        if not self._selector.selects(relative):
            return
        self._checked += 1
        # Always lower from the source: an up-to-date copy may be skipped by
        # copy_file, and the output must never be lowered twice.
        output = lower_file_bytes(
            Path(module_file).read_bytes(), relative, self._target
        )
        if output is not None:
            self._lowered += 1
            mode = os.stat(module_file).st_mode & 0o7777
            write_atomic(Path(outfile), output, mode)


def _info(message: str) -> None:
    # setuptools (60+) sends distutils' log through the logging module and
    # sets its level from -q/-v: INFO shows in `python -m build` and setup.py
    # but not with -q. (Command.announce takes distutils levels in older
    # setuptools and logging levels in newer ones, so it is not used.)
    logging.getLogger("spam_transpile").info(message)


def _relative(path: str) -> str:
    # setuptools passes paths relative to the project root; errors and
    # globs use that form with forward slashes on every OS.
    if os.path.isabs(path):
        path = os.path.relpath(path)
    return path.replace(os.sep, "/")
