"""What the build integrations share: file selection by globs, and one file's lowering.

The hatchling hook (:mod:`spam_transpile.integrations.hatch_build`) and the
setuptools command (:mod:`spam_transpile.integrations.setuptools`) both decide which files
to lower with the same ``include``/``exclude`` globs, matched against the
file's path relative to the project root, and both lower a file the same
way, so a project gets the same wheel from either backend.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Sequence

from spam_transpile.errors import TranspileError
from spam_transpile.pipeline import transpile
from spam_transpile.settings import parse_target
from spam_transpile.files.write import decode_source, encode_output

__all__ = [
    "BuildError",
    "DEFAULT_INCLUDE",
    "DEFAULT_TARGET",
    "FileSelector",
    "lower_file_bytes",
    "may_hold_match",
]

DEFAULT_TARGET = "3.9"

# A match statement starts a logical line with the soft keyword ``match``.
# Files without one are shipped untouched, without even being parsed, so a
# file using syntax the parser does not know yet cannot break a build.
_MAY_MATCH = re.compile(rb"^[ \t]*match\b", re.MULTILINE)
DEFAULT_INCLUDE = ("**/*.py",)


def _glob_to_regex(pattern: str) -> str:
    """Translate one glob to a regex over ``/``-separated relative paths.

    ``**`` spans any number of directories, ``*`` and ``?`` stay inside one
    path segment; a pattern without ``/`` matches a file name in any
    directory, as in ``.gitignore`` files and hatchling's own globs.
    """
    pattern = pattern.strip().lstrip("/")
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    if pattern.endswith("/"):
        # A directory pattern selects everything below it.
        pattern += "**"
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


class FileSelector:
    """Which project files get lowered: matched by ``include``, not by ``exclude``."""

    def __init__(
        self,
        include: Optional[Iterable[str]] = None,
        exclude: Optional[Iterable[str]] = None,
    ) -> None:
        self.include = _compile(DEFAULT_INCLUDE if include is None else include)
        self.exclude = _compile(exclude or ())

    def selects(self, relative_path: str) -> bool:
        path = relative_path.replace("\\", "/")
        while path.startswith("./"):
            path = path[2:]
        if not path.endswith(".py"):
            # Only Python sources are lowered; stubs and data pass through.
            return False
        return bool(self.include.fullmatch(path)) and not self.exclude.fullmatch(path)


def _compile(patterns: Iterable[str]) -> "re.Pattern[str]":
    parts = [_glob_to_regex(p) for p in patterns if p.strip()]
    # An empty alternation must match nothing, not the empty string.
    return re.compile("|".join(f"(?:{p})" for p in parts) if parts else "(?!)")


def check_target(target: str, *, where: str) -> str:
    """Validate a configured target early, naming the configuration that set it."""
    try:
        parse_target(target, filename=where)
    except TranspileError as exc:
        raise BuildError(exc) from None
    return target


class BuildError(Exception):
    """A build stopped by a module that cannot be lowered.

    Its message is the error's ``path:line:col: error: message`` form.
    Build front ends print the exception's message, and a ``SyntaxError``
    prints only its bare ``msg``, so the build raises this instead.
    """

    def __init__(self, error: TranspileError) -> None:
        super().__init__(error.format())
        self.error = error


def may_hold_match(raw: bytes) -> bool:
    """Cheap pre-scan of a source's bytes: False means no match statement."""
    return _MAY_MATCH.search(raw) is not None


def lower_file_bytes(raw: bytes, display_name: str, target: str) -> Optional[bytes]:
    """The lowered file, in the source's own encoding; None when nothing changes.

    Raises :class:`BuildError` naming ``display_name``, line and column.
    """
    if not may_hold_match(raw):
        return None
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
