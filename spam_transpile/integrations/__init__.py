"""What the build integrations share: settings, file selection, one file's lowering.

The hatchling hook (:mod:`spam_transpile.integrations.hatch_build`) and the
setuptools command (:mod:`spam_transpile.integrations.setuptools`) read the
same ``[tool.spam-transpile]`` table as the command line
(:func:`build_settings`), decide which files to lower with the same
gitignore-style ``include``/``exclude`` globs (pathspec), matched against
the file's path relative to the project root, and lower a file the same
way, so a project gets the same wheel from either backend.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, Iterable, NamedTuple, Optional, Sequence

import pathspec

from spam_transpile.errors import TranspileError
from spam_transpile.files.config import (
    BUILD_KEYS,
    DEFAULT_TARGET,
    ConfigError,
    Project,
    load_project,
    resolve_target,
    with_overrides,
)
from spam_transpile.files.write import decode_source, encode_output
from spam_transpile.syntax.prescan import may_hold_match

__all__ = [
    "BuildError",
    "BuildSettings",
    "DEFAULT_INCLUDE",
    "DEFAULT_TARGET",
    "FileSelector",
    "build_settings",
    "lower_file_bytes",
    "may_hold_match",
    "summary",
]

DEFAULT_INCLUDE = ("*.py",)


class FileSelector:
    """Which project files get lowered: matched by ``include``, not by ``exclude``.

    Patterns follow ``.gitignore`` rules (pathspec): without a ``/`` a
    pattern matches a name at any depth, with one it is anchored at the
    project root, ``**`` spans folders and a trailing ``/`` means a folder.
    """

    def __init__(
        self,
        include: Optional[Iterable[str]] = None,
        exclude: Optional[Iterable[str]] = None,
    ) -> None:
        self.include = _spec(DEFAULT_INCLUDE if include is None else include)
        self.exclude = _spec(exclude or ())

    def selects(self, relative_path: str) -> bool:
        path = relative_path.replace("\\", "/")
        while path.startswith("./"):
            path = path[2:]
        if not path.endswith(".py"):
            # Only Python sources are lowered; stubs and data pass through.
            return False
        return self.include.match_file(path) and not self.exclude.match_file(path)


def _spec(patterns: Iterable[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(p for p in patterns if p.strip())


class BuildError(Exception):
    """A build stopped by a module that cannot be lowered, or by its settings.

    Its message is the error's ``path:line:col: error: message`` form.
    Build front ends print the exception's message, and a ``SyntaxError``
    prints only its bare ``msg``, so the build raises this instead.
    """

    def __init__(self, error: "TranspileError | ConfigError") -> None:
        super().__init__(error.format())
        self.error = error


class BuildSettings(NamedTuple):
    target: str
    selector: FileSelector
    #: which file and tables were read, and why this target (for the build log)
    origin: str


def build_settings(
    root: Path,
    *,
    override: Optional[Dict[str, Any]] = None,
    override_table: str = "",
    command: Optional[Dict[str, Any]] = None,
) -> BuildSettings:
    """The settings of a build of the project at ``root``.

    ``[tool.spam-transpile]`` of its pyproject.toml, under the keys of
    ``override`` (the hatch hook's table), under ``command`` (setuptools
    command options, which name their own source). Raises BuildError.
    """
    pyproject = root / "pyproject.toml"
    try:
        project = load_project(pyproject if pyproject.is_file() else None)
        if override:
            project = with_overrides(project, override, override_table, BUILD_KEYS)
        explicit = (command or {}).get("target")
        target = resolve_target(
            project,
            explicit=explicit,
            explicit_from="build_py --transpile-target",
            table=override_table or "tool.spam-transpile",
        )
        selector = _selector(project, command or {})
    except ConfigError as exc:
        raise BuildError(exc) from None
    origin = (
        f"settings: {project.describe()}; target {target.version} from {target.reason}"
    )
    return BuildSettings(target.version, selector, origin)


def _selector(project: Project, command: Dict[str, Any]) -> FileSelector:
    settings = dict(project.settings)
    settings.update({k: v for k, v in command.items() if v is not None})
    include = settings.get("include")
    exclude = [
        *_globs(project, settings, "exclude"),
        *_globs(project, settings, "extend_exclude"),
        *_globs(project, settings, "force_exclude"),
    ]
    return FileSelector(
        None if include is None else _globs(project, settings, "include"), exclude
    )


def _globs(project: Project, settings: Dict[str, Any], key: str) -> Sequence[str]:
    try:
        return as_list(settings.get(key), option=key.replace("_", "-"))
    except TypeError as exc:
        raise project.error(str(exc), key) from None


def summary(lowered: int, checked: int, target: str) -> str:
    """The line every build integration prints."""
    return f"spam-transpile: lowered {lowered} of {checked} modules for Python {target}"


def lower_file_bytes(raw: bytes, display_name: str, target: str) -> Optional[bytes]:
    """The lowered file, in the source's own encoding; None when nothing changes.

    Raises :class:`BuildError` naming ``display_name``, line and column.
    """
    # Files without a match statement are shipped untouched, without even
    # being parsed, so a file using syntax the parser does not know yet
    # cannot break a build.
    if not may_hold_match(raw):
        return None
    # Imported here: the import hook imports this package and needs LibCST
    # only once a module has a match statement.
    from spam_transpile.pipeline import transpile

    try:
        source = decode_source(raw, display_name)
        result = transpile(source.text, target=target, filename=display_name)
    except TranspileError as exc:
        raise BuildError(exc) from None
    if result == source.text:
        return None
    return encode_output(result, source.encoding)


def as_list(value: object, *, option: str) -> Sequence[str]:
    """A configured glob list: a list of strings, or one string of them split on whitespace/commas."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in re.split(r"[\s,]+", value) if part]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"option {option!r} must be a list of glob strings, got {value!r}")
