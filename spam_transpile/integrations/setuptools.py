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
from ``[tool.spam-transpile]`` in pyproject.toml and can be overridden per
command (``setup.cfg`` ``[build_py]`` section or the command line):
``transpile-target``, ``transpile-include``, ``transpile-exclude``.

Only the copies in the build folder are rewritten: the sdist, which
setuptools assembles from the project tree, keeps the original sources, and
nothing is added to the distribution's metadata or dependencies.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from setuptools.command.build_py import build_py as _setuptools_build_py
from setuptools.errors import BaseError as _SetuptoolsError

from spam_transpile.errors import TranspileError
from spam_transpile.integrations import (
    DEFAULT_TARGET,
    BuildError,
    FileSelector,
    as_list,
    check_target,
    lower_file_bytes,
)
from spam_transpile.files.write import write_atomic

__all__ = ["SetuptoolsBuildError", "build_py"]

PYPROJECT_TABLE = "spam-transpile"


class SetuptoolsBuildError(BuildError, _SetuptoolsError):  # type: ignore[misc]
    """A :class:`BuildError` that ``setup.py`` prints as ``error: path:line:col: ...``."""


class build_py(_setuptools_build_py):  # noqa: N801 (setuptools' own spelling)
    """``build_py`` that writes lowered modules into the build folder."""

    user_options = _setuptools_build_py.user_options + [
        (
            "transpile-target=",
            None,
            f"oldest Python the built modules must run on [default: {DEFAULT_TARGET}]",
        ),
        ("transpile-include=", None, "globs of modules to lower [default: **/*.py]"),
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

    def _finalize_transpile_options(self) -> None:
        table = _pyproject_options(Path.cwd() / "pyproject.toml")
        target = self.transpile_target or table.get("target", DEFAULT_TARGET)
        self._target = check_target(str(target), where=_where(self.transpile_target))
        include = self.transpile_include
        if include is None:
            include = table.get("include")
        exclude = self.transpile_exclude
        if exclude is None:
            exclude = table.get("exclude")
        self._selector = FileSelector(
            None if include is None else as_list(include, option="include"),
            as_list(exclude, option="exclude"),
        )

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
        # Always lower from the source: an up-to-date copy may be skipped by
        # copy_file, and the output must never be lowered twice.
        output = lower_file_bytes(
            Path(module_file).read_bytes(), relative, self._target
        )
        if output is not None:
            mode = os.stat(module_file).st_mode & 0o7777
            write_atomic(Path(outfile), output, mode)


def _where(from_command: Optional[str]) -> str:
    if from_command is not None:
        return "build_py --transpile-target"
    return f"pyproject.toml [tool.{PYPROJECT_TABLE}]"


def _relative(path: str) -> str:
    # setuptools passes paths relative to the project root; errors and
    # globs use that form with forward slashes on every OS.
    if os.path.isabs(path):
        path = os.path.relpath(path)
    return path.replace(os.sep, "/")


def _pyproject_options(pyproject: Path) -> Dict[str, Any]:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return {}
    if f"[tool.{PYPROJECT_TABLE}]" not in text:
        return {}
    data = _load_toml(text, str(pyproject))
    table = data.get("tool", {}).get(PYPROJECT_TABLE, {})
    if not isinstance(table, dict):
        raise BuildError(
            TranspileError(
                f"[tool.{PYPROJECT_TABLE}] must be a table", filename=str(pyproject)
            )
        )
    unknown = sorted(set(table) - {"target", "include", "exclude"})
    if unknown:
        raise BuildError(
            TranspileError(
                f"unknown option(s) in [tool.{PYPROJECT_TABLE}]: {', '.join(unknown)}",
                filename=str(pyproject),
            )
        )
    return table


def _load_toml(text: str, filename: str) -> Dict[str, Any]:
    loads = _toml_loads()
    try:
        return loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise BuildError(
            TranspileError(f"cannot parse: {exc}", filename=filename)
        ) from None


def _toml_loads() -> Any:
    try:
        import tomllib  # Python 3.11+

        return tomllib.loads
    except ImportError:
        pass
    try:
        import tomli  # setuptools itself needs it before 3.11

        return tomli.loads
    except ImportError:
        pass
    raise BuildError(
        TranspileError(
            "reading [tool.spam-transpile] needs Python 3.11+ or the tomli package "
            "in the build environment",
            filename="pyproject.toml",
        )
    )
