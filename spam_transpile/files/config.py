"""Settings from ``[tool.spam-transpile]`` in the nearest ``pyproject.toml``.

The file is looked for as black does: from the deepest folder that holds
all the given paths (the current folder for standard input) upwards, taking
the first ``pyproject.toml`` with a ``[tool.spam-transpile]`` table, and
stopping at the root of the repository (a folder with ``.git`` or ``.hg``).
Keys are the long command-line option names, dashes or underscores alike::

    [tool.spam-transpile]
    target = "3.8"
    extend-exclude = ["generated/**"]
    jobs = 4

Options given on the command line win over the file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    try:
        import tomli as tomllib
    except ImportError:  # a broken install; say so when a file must be read
        tomllib = None  # type: ignore[assignment]

SECTION = "spam-transpile"

#: option name (underscored) -> what it holds, for error messages
KNOWN_KEYS: Dict[str, str] = {
    "target": "a target version string",
    "layout": "a layout name",
    "include": "a list of glob patterns",
    "exclude": "a list of glob patterns",
    "extend_exclude": "a list of glob patterns",
    "force_exclude": "a list of glob patterns",
    "jobs": "an integer",
    "quiet": "a boolean",
    "verbose": "a boolean",
    "cache": "a boolean",
}


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file."""


def find_pyproject(
    paths: Iterable[str], *, cwd: Optional[Path] = None
) -> Optional[Path]:
    """The ``pyproject.toml`` that configures a run over ``paths``, if any."""
    start = _common_base(paths, cwd or Path.cwd())
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _has_section(candidate):
            return candidate
        if (directory / ".git").exists() or (directory / ".hg").is_dir():
            return None
    return None


def find_project_root(paths: Iterable[str], *, cwd: Optional[Path] = None) -> Path:
    """The folder anchored globs are relative to.

    The nearest folder above the paths with ``.git``, ``.hg`` or
    ``pyproject.toml``; failing that, the working directory when it holds
    all the paths, else the deepest folder that does.
    """
    here = (cwd or Path.cwd()).absolute()
    start = _common_base(paths, here)
    for directory in (start, *start.parents):
        if (directory / ".git").exists() or (directory / ".hg").is_dir():
            return directory
        if (directory / "pyproject.toml").is_file():
            return directory
    if start == here or here in start.parents:
        return here
    return start


def _common_base(paths: Iterable[str], cwd: Path) -> Path:
    folders = []
    for raw in paths:
        path = cwd if raw == "-" else Path(cwd, raw).absolute()
        folders.append(path if path.is_dir() else path.parent)
    if not folders:
        return cwd
    try:
        return Path(os.path.commonpath([str(folder) for folder in folders]))
    except ValueError:  # different drives on Windows
        return cwd


def _has_section(path: Path) -> bool:
    try:
        return SECTION in _load(path).get("tool", {})
    except ConfigError:
        # A broken pyproject.toml that might be ours must not be skipped silently.
        return True


def _load(path: Path) -> Dict[str, Any]:
    if tomllib is None:  # pragma: no cover - 3.9/3.10 without tomli
        raise ConfigError(
            f"{path}: cannot read TOML: install tomli (pip install tomli)"
        )
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def read_config(path: Path) -> Dict[str, Any]:
    """The ``[tool.spam-transpile]`` settings of ``path``, keys underscored.

    Raises ConfigError for unknown keys, so a typo is never silently ignored.
    """
    table = _load(path).get("tool", {}).get(SECTION, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    settings: Dict[str, Any] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in KNOWN_KEYS:
            known = ", ".join(sorted(k.replace("_", "-") for k in KNOWN_KEYS))
            raise ConfigError(
                f"{path}: unknown option {key!r} in [tool.{SECTION}] (known: {known})"
            )
        settings[name] = value
    return settings
