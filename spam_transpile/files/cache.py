"""Content-addressed cache of transpiled outputs, shared by the CLI and import hook.

An entry is keyed by the SHA-256 of (tool version, options, source bytes), so
an unchanged file under unchanged options is never transpiled twice, wherever
it lives; the tool version includes a digest of the tool's own code
(:func:`tool_fingerprint`), and the options everything else that decides
the result (:func:`options_key`).

Only what the source alone decides is stored: the keep-lines output, or an
error about the source (a syntax error, a pattern CPython refuses). What
the environment decides (a tool that is not installed, a recursion limit,
a bug of ours) is reported and forgotten, so the next run tries again. Entries sit in the user cache directory (``$SPAM_TRANSPILE_CACHE_DIR``,
else platformdirs' user cache folder: ``$XDG_CACHE_HOME/spam-transpile`` or
``~/.cache/spam-transpile`` on Linux), in a folder per tool version, and are
written atomically, so concurrent workers and interrupted runs never see
half an entry.

Every writer stores, and every reader understands, the same records, all
defined here: a source's lowered text or its error (:meth:`Cache.put_output`,
:meth:`Cache.put_error`, read back together by :meth:`Cache.lookup`), and
its warnings (:meth:`Cache.put_warnings`, :meth:`Cache.warnings`, under a
key no source can have). The CLI and the import hook share entries, so one
must never take the other's error record for source code.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple, Optional, Sequence, Tuple

from spam_transpile import __version__

APP_NAME = "spam-transpile"

# Error records start with a NUL, which no transpiled source can contain
# (sources with NUL bytes are refused before they are transpiled).
_ERROR_MARK = b"\0error\0"
# A source's warnings are keyed by the source plus this (NUL: no source).
_WARNINGS_KEY = b"\0warnings"

#: (message, line, column)
Where = Tuple[str, int, int]


def default_cache_dir() -> Path:
    explicit = os.environ.get("SPAM_TRANSPILE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    # Imported here: only runs that really use the default folder pay for it.
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME, appauthor=False))


def code_fingerprint(package: Path) -> str:
    """A digest of the ``.py`` files under ``package`` (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def tool_fingerprint() -> str:
    """The tool's version and a digest of its own code, which key every cache
    entry: installs from git (a pre-commit ``rev``, an editable install)
    share a version number, and output an older lowering wrote must never be
    served by a newer one."""
    try:
        return (
            f"{__version__}-{code_fingerprint(Path(__file__).resolve().parent.parent)}"
        )
    except OSError:  # code not in files (a zip): the version alone
        return __version__


def options_key(target: str) -> str:
    """What besides the source and the tool decides a record: the layout the
    cache holds (keep-lines: the readable layout is made from the source
    each time, by the installed black), the target, and the interpreter the
    tool runs on (CPython's own syntax errors are its version's, and
    without 3.10's standard tree the tool reads the source otherwise)."""
    python = "%d.%d" % sys.version_info[:2]
    return f"layout=keep-lines;target={target};python={python}"


class Entry(NamedTuple):
    """A cache record: the lowered text, or the error the source causes."""

    output: Optional[str] = None
    #: (message, line, column) of the error
    error: Optional[Tuple[str, int, int]] = None


class Cache:
    def __init__(self, options_key: str, directory: Optional[Path] = None) -> None:
        self.options_key = options_key
        # Worked out here, once: workers get it with the pickled cache.
        self.tool = tool_fingerprint()
        self.directory = (directory or default_cache_dir()) / self.tool

    def _path(self, source: bytes) -> Path:
        digest = hashlib.sha256()
        digest.update(self.tool.encode())
        digest.update(b"\0")
        digest.update(self.options_key.encode())
        digest.update(b"\0")
        digest.update(source)
        name = digest.hexdigest()
        return self.directory / name[:2] / name

    def get(self, source: bytes) -> Optional[bytes]:
        """The raw bytes stored under ``source`` (for records of one's own)."""
        try:
            return self._path(source).read_bytes()
        except OSError:
            return None

    def lookup(self, source: bytes) -> Optional[Entry]:
        """The record for ``source``; None when missing or damaged (redo the work)."""
        data = self.get(source)
        if data is None:
            return None
        if data.startswith(_ERROR_MARK):
            return _error_entry(data[len(_ERROR_MARK) :])
        try:
            return Entry(output=data.decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def put_output(self, source: bytes, output: str) -> None:
        # UTF-8 whatever the source's encoding: readers compile or re-encode text.
        self.put(source, output.encode("utf-8"))

    def put_error(self, source: bytes, message: str, line: int, column: int) -> None:
        record = json.dumps([message, line, column]).encode("utf-8")
        self.put(source, _ERROR_MARK + record)

    def put_warnings(self, source: bytes, warnings: Sequence[Where]) -> None:
        self.put(source + _WARNINGS_KEY, json.dumps(list(warnings)).encode("utf-8"))

    def warnings(self, source: bytes) -> Tuple[Where, ...]:
        """The warnings stored for ``source`` (none when missing or damaged)."""
        data = self.get(source + _WARNINGS_KEY)
        try:
            found = json.loads(data) if data else []
            return tuple((str(m), int(line), int(col)) for m, line, col in found)
        except (ValueError, TypeError):
            return ()

    def put(self, source: bytes, output: bytes) -> None:
        path = self._path(source)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(output)
            os.replace(tmp, path)
        except OSError:
            # A cache that cannot be written is a slower run, not a failure.
            pass


def _error_entry(record: bytes) -> Optional[Entry]:
    try:
        message, line, column = json.loads(record)
    except (ValueError, TypeError):
        return None
    if not (isinstance(message, str) and type(line) is int and type(column) is int):
        return None
    return Entry(error=(message, line, column))
