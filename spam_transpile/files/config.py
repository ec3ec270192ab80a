"""The one configuration every entry point reads: ``[tool.spam-transpile]``.

The command line, the import hook (``python -m spam_transpile.run``), the
setuptools ``build_py`` and the hatchling hook all take their settings from
the ``[tool.spam-transpile]`` table of the project's ``pyproject.toml``
(hatch builds may override keys in ``[tool.hatch.build.hooks.spam-transpile]``).
The file is looked for as black does: from the deepest folder that holds
all the given paths upwards, taking the first ``pyproject.toml`` with that
table or a ``[project] requires-python``, and stopping at the root of the
repository (a folder with ``.git`` or ``.hg``). Keys are the long
command-line option names, dashes or underscores alike::

    [tool.spam-transpile]
    target = "3.8"
    extend-exclude = ["generated/**"]
    jobs = 4

Without a ``target``, the target is the oldest Python that ``[project]
requires-python`` allows, as black and ruff infer theirs. Errors name the
file, line and column of the offending key.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, NamedTuple, Optional, Tuple

from spam_transpile.settings import SUPPORTED_TARGETS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    try:
        import tomli as tomllib
    except ImportError:  # a broken install; say so when a file must be read
        tomllib = None  # type: ignore[assignment]

SECTION = "spam-transpile"
TABLE = f"tool.{SECTION}"
HATCH_TABLE = f"tool.hatch.build.hooks.{SECTION}"
DEFAULT_TARGET = "3.9"

#: option name (underscored) -> what it holds, for error messages
KNOWN_KEYS: Dict[str, str] = {
    "target": "a target version string",
    "layout": "a layout name",
    "include": "a list of glob patterns",
    "exclude": "a list of glob patterns",
    "extend_exclude": "a list of glob patterns",
    "force_exclude": "a list of glob patterns",
    "gitignore": "a boolean",
    "jobs": "an integer",
    "quiet": "a boolean",
    "verbose": "a boolean",
    "cache": "a boolean",
    # the readable layout's line length (files/line_length.py reads it)
    "line_length": "an integer",
}


class ConfigError(Exception):
    """A configuration that cannot be used, at ``path:line:col``."""

    def __init__(self, message: str, path: object, line: int = 1, column: int = 1):
        self.message = message
        self.path = str(path)
        self.line = line
        self.column = column
        super().__init__(self.format())

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: error: {self.message}"


class Project(NamedTuple):
    """What one ``pyproject.toml`` says about spam-transpile."""

    #: the file (None: no configuration found)
    path: Optional[Path]
    #: the ``[tool.spam-transpile]`` keys, underscored
    settings: Dict[str, Any]
    #: ``[project] requires-python``, if set
    requires_python: Optional[str]
    #: the file's text, to point errors at a key's line
    text: str = ""
    #: the tables the settings came from, for ``-v`` and build logs
    tables: Tuple[str, ...] = (TABLE,)

    def position(self, key: str, table: str = TABLE) -> Tuple[int, int]:
        return key_position(self.text, table, key)

    def error(self, message: str, key: str, table: str = TABLE) -> ConfigError:
        line, column = self.position(key, table)
        return ConfigError(message, self.path or "pyproject.toml", line, column)

    def describe(self) -> str:
        if self.path is None:
            return f"none (no pyproject.toml with [{TABLE}] or requires-python found)"
        return f"{self.path} " + " over ".join(f"[{t}]" for t in self.tables[::-1])


NO_PROJECT = Project(None, {}, None)


# --------------------------------------------------------------------------
# Finding and reading the file
# --------------------------------------------------------------------------


def find_pyproject(
    paths: Iterable[str], *, cwd: Optional[Path] = None
) -> Optional[Path]:
    """The ``pyproject.toml`` that configures a run over ``paths``, if any."""
    start = _common_base(paths, cwd or Path.cwd())
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _concerns_us(candidate):
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


def _concerns_us(path: Path) -> bool:
    try:
        data = _load(path)
    except ConfigError:
        # A broken pyproject.toml that might be ours must not be skipped silently.
        return True
    project = data.get("project")
    return SECTION in data.get("tool", {}) or (
        isinstance(project, dict) and "requires-python" in project
    )


def _read_text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8: {exc}", path) from None


def _parse(text: str, path: Path) -> Dict[str, Any]:
    if tomllib is None:  # pragma: no cover - 3.9/3.10 without tomli
        raise ConfigError("cannot read TOML: install tomli (pip install tomli)", path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says where only inside its message: "(at line 3, column 9)".
        where = re.search(r"line (\d+), column (\d+)", str(exc))
        line, column = (int(where[1]), int(where[2])) if where else (1, 1)
        raise ConfigError(f"invalid TOML: {exc}", path, line, column) from None


def _load(path: Path) -> Dict[str, Any]:
    return _parse(_read_text(path), path)


def load_project(path: Optional[Path]) -> Project:
    """Read ``path``; unknown keys and a non-table are errors at their line."""
    if path is None:
        return NO_PROJECT
    text = _read_text(path)
    data = _parse(text, path)
    project = Project(path, {}, _requires_python(data), text)
    table = data.get("tool", {}).get(SECTION, {})
    if not isinstance(table, dict):
        raise project.error(f"[{TABLE}] must be a table", "")
    return project._replace(settings=_known_settings(project, table, TABLE))


def _requires_python(data: Dict[str, Any]) -> Optional[str]:
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    value = project.get("requires-python")
    return value if isinstance(value, str) else None


def _known_settings(
    project: Project, table: Dict[str, Any], name: str
) -> Dict[str, Any]:
    settings: Dict[str, Any] = {}
    for key, value in table.items():
        option = key.replace("-", "_")
        if option not in KNOWN_KEYS:
            known = ", ".join(sorted(k.replace("_", "-") for k in KNOWN_KEYS))
            raise project.error(
                f"unknown option {key!r} in [{name}] (known: {known})", key, name
            )
        settings[option] = value
    return settings


def read_config(path: Path) -> Dict[str, Any]:
    """The ``[tool.spam-transpile]`` settings of ``path``, keys underscored."""
    return load_project(path).settings


def with_overrides(
    project: Project, table: Dict[str, Any], name: str, allowed: Iterable[str]
) -> Project:
    """``project`` with the keys of another table (the hatch hook's) on top."""
    allowed = set(allowed)
    extra = {k: v for k, v in table.items() if k.replace("-", "_") in allowed}
    if not extra:
        return project
    settings = dict(project.settings)
    settings.update(_known_settings(project, extra, name))
    return project._replace(settings=settings, tables=(*project.tables, name))


# --------------------------------------------------------------------------
# Where a key is, for messages
# --------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*=""")


def key_position(text: str, table: str, key: str) -> Tuple[int, int]:
    """(line, column) of ``key`` in ``[table]`` of a TOML text, else of the header.

    tomllib keeps no positions; a line scan finds the usual spellings
    (``key = ...`` under a ``[table]`` header), and anything cleverer falls
    back to the table's header or the first line.
    """
    wanted = {key, key.replace("_", "-"), key.replace("-", "_")}
    header_line, inside = 0, False
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            inside = _table_name(header[1]) == table
            header_line = number if inside else header_line
            continue
        found = _KEY.match(line) if inside else None
        if found and (found[1] or found[2] or found[3]) in wanted:
            return number, len(line) - len(line.lstrip()) + 1
    return (header_line or 1), 1


def _table_name(raw: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in raw.split("."))


# --------------------------------------------------------------------------
# The target: explicit, or inferred from requires-python
# --------------------------------------------------------------------------


class Target(NamedTuple):
    version: str
    #: why this target, for ``-v`` and build logs
    reason: str


def resolve_target(
    project: Project,
    *,
    explicit: Optional[str] = None,
    explicit_from: str = "",
    table: str = TABLE,
) -> Target:
    """The target for ``project``: given, configured, or from requires-python.

    A configured target newer than what requires-python allows is an error
    (the lowered code would be installed where it cannot run); a target
    given explicitly (``explicit``, from a command line) is the user's
    choice and only has to be supported.
    """
    if explicit is not None:
        return Target(_supported(explicit, project, None), explicit_from)
    oldest = oldest_allowed(project)
    configured = project.settings.get("target")
    if configured is not None:
        key_table = _table_setting(project, "target", table)
        version = _supported(str(configured), project, key_table)
        if oldest is not None and _tuple(version) > oldest:
            raise project.error(_too_new(version, oldest, project), "target", key_table)
        return Target(version, f"{project.path} [{key_table}] target")
    if oldest is None:
        return Target(DEFAULT_TARGET, "the default")
    return Target(_inferred(oldest, project), f"requires-python {_rp(project)}")


def _table_setting(project: Project, key: str, table: str) -> str:
    # The override table (the hatch hook's) is named only if it set the key.
    if table != TABLE and _has_key(project.text, table, key):
        return table
    return TABLE


def _has_key(text: str, table: str, key: str) -> bool:
    line, _ = key_position(text, table, key)
    lines = text.splitlines()
    return 0 < line <= len(lines) and _KEY.match(lines[line - 1]) is not None


def _supported(version: str, project: Project, table: Optional[str]) -> str:
    if version in SUPPORTED_TARGETS:
        return version
    message = f"unknown target {version!r} (supported: {', '.join(SUPPORTED_TARGETS)})"
    if table is None:
        raise ConfigError(message, "--target")
    raise project.error(message, "target", table)


def _inferred(oldest: Tuple[int, int], project: Project) -> str:
    if oldest < _tuple(SUPPORTED_TARGETS[0]):
        raise project.error(
            f"requires-python {_rp(project)} allows Python "
            f"{oldest[0]}.{oldest[1]}, but lowered code runs on "
            f"{SUPPORTED_TARGETS[0]} at the oldest; raise requires-python",
            "requires-python",
            "project",
        )
    newest = SUPPORTED_TARGETS[-1]
    return newest if oldest > _tuple(newest) else f"{oldest[0]}.{oldest[1]}"


def _too_new(version: str, oldest: Tuple[int, int], project: Project) -> str:
    allowed = f"{oldest[0]}.{oldest[1]}"
    return (
        f"target {version} is newer than Python {allowed}, which requires-python "
        f"{_rp(project)} allows: the lowered code would be installed there and "
        f'fail; set target = "{allowed}" (or leave it out) or raise requires-python'
    )


def _rp(project: Project) -> str:
    return repr(project.requires_python)


def _tuple(version: str) -> Tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def oldest_allowed(project: Project) -> Optional[Tuple[int, int]]:
    """The oldest Python 3 ``(3, minor)`` that requires-python allows, if set."""
    if project.requires_python is None:
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        spec = SpecifierSet(project.requires_python)
    except InvalidSpecifier as exc:
        raise project.error(
            f"invalid requires-python: {exc}", "requires-python", "project"
        ) from None
    for minor in range(0, 40):
        # Any release of 3.minor counts (">=3.7.2" allows 3.7).
        releases = (f"3.{minor}.{micro}" for micro in range(0, 40))
        if any(spec.contains(release, prereleases=True) for release in releases):
            return 3, minor
    raise project.error(
        f"requires-python {_rp(project)} allows no Python 3 release",
        "requires-python",
        "project",
    )


#: the keys a build reads; the command-line-only ones do not concern it
BUILD_KEYS = ("target", "include", "exclude", "extend_exclude", "force_exclude")
