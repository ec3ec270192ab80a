"""Content-addressed cache of transpiled outputs, shared by the CLI and import hook.

An entry is keyed by the SHA-256 of (tool version, options, source bytes), so
an unchanged file under unchanged options is never transpiled twice, wherever
it lives. Entries sit in the user cache directory (``$SPAM_TRANSPILE_CACHE_DIR``,
else ``$XDG_CACHE_HOME/spam-transpile``, else ``~/.cache/spam-transpile``), in a
folder per tool version, and are written atomically, so concurrent workers
and interrupted runs never see half an entry.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Optional

from spam_transpile import __version__


def default_cache_dir() -> Path:
    explicit = os.environ.get("SPAM_TRANSPILE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return Path(base) / "spam-transpile"


class Cache:
    def __init__(self, options_key: str, directory: Optional[Path] = None) -> None:
        self.options_key = options_key
        self.directory = (directory or default_cache_dir()) / __version__

    def _path(self, source: bytes) -> Path:
        digest = hashlib.sha256()
        digest.update(__version__.encode())
        digest.update(b"\0")
        digest.update(self.options_key.encode())
        digest.update(b"\0")
        digest.update(source)
        name = digest.hexdigest()
        return self.directory / name[:2] / name

    def get(self, source: bytes) -> Optional[bytes]:
        try:
            return self._path(source).read_bytes()
        except OSError:
            return None

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
