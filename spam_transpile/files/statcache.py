"""Remember what a run did to each file, by stat, so a rerun need not open it.

The content cache (:mod:`spam_transpile.files.cache`) saves the transpiler, but a
rerun still reads, hashes and scans every source and compares every output.
Like black's cache, this one remembers per source (by absolute path) the
stat it had when it was read and, with ``-o``, the output's stat as written,
with what the file is (transpiled with N match statements, plain Python
without any, copied) and the warnings. When both stats are unchanged, the rerun counts
the file as before without reading either.

A stat is a fingerprint of (mtime_ns, ctime_ns, size, inode, mode): any
write changes the ctime (which, unlike the mtime, cannot be set back), an
editor's save-by-rename or a retargeted symbolic link changes the inode,
and a ``chmod`` the mode, which outputs copy. Pitfalls handled here:

* racy sources: a file changed after it was read, within the same timestamp
  tick, keeps its stat. So a source is remembered only if it was last
  changed well before the run began (:data:`RACY_MARGIN_NS`, enough for
  file systems with one- or two-second timestamps); the next run settles it.
* outputs are remembered as written: the run itself just wrote them, and
  waiting for them to age would make every rerun after a build slow. An
  output edited later has a new stat; one deleted has none.
* failures are never remembered, so they are reported on every run.

One file per (tool version, options that change the outcome, the
interpreter's version and, for the readable layout, black's) in the cache
directory, loaded once and written once per run, atomically; a damaged or
unreadable file is an empty cache, and a cache that cannot be written only
makes the next run slower. Concurrent runs may drop each other's entries
(the last one to write wins) but never add a wrong one: every entry is
checked against the files' stats when used.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from spam_transpile.files.cache import default_cache_dir, tool_fingerprint

#: bump when the file's layout changes; other layouts read as empty
#: (2: "plain" for Python files without a match statement; 3: the files
#: whose declarations a readable output relies on)
FORMAT = 3
#: a source changed less than this before the run began is not remembered
RACY_MARGIN_NS = 2_000_000_000

# What a file is, not what the run did to it: a rerun decides what to call it
# (a transpiled file whose output is still there is "unchanged").
TRANSPILED, PLAIN, COPIED = "transpiled", "plain", "copied"
OUTCOMES = (TRANSPILED, PLAIN, COPIED)

#: (message, line, column) of an unreachable-case warning
CaseWarning = Tuple[str, int, int]


def _black_version() -> str:
    """The installed black's version: it lays out the readable layout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("black")
    except PackageNotFoundError:
        return ""


def fingerprint(info: os.stat_result) -> List[int]:
    # A list, not a tuple: it is compared with what JSON gives back.
    return [
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_size,
        info.st_ino,
        info.st_mode,
    ]


class Hit(NamedTuple):
    """What the previous run reported for a file whose stats are unchanged."""

    outcome: str
    matches: int
    warnings: Tuple[CaseWarning, ...]


class StatCache:
    """One stat-cache file: loaded once, consulted per file, saved once."""

    def __init__(self, path: Path, started_ns: Optional[int] = None) -> None:
        self.path = path
        #: when the run began, before it looked at any file
        self.started_ns = time.time_ns() if started_ns is None else started_ns
        self._entries: Dict[str, Any] = {}
        #: path -> digest ("" absent), read once per run: the files of a
        #: project share the modules and settings they rely on
        self._digests: Dict[str, str] = {}
        self._dirty = False

    @classmethod
    def for_run(
        cls,
        *,
        action: str,
        target: str,
        layout: str,
        output: Optional[Path],
        started_ns: Optional[int] = None,
        directory: Optional[Path] = None,
    ) -> "StatCache":
        """The stat cache of runs with these options (one file per set)."""
        # Each output tree has its own file, so runs into two trees do not
        # keep replacing each other's entries.
        where = os.path.abspath(output) if output is not None else None
        tool = tool_fingerprint()
        python = "%d.%d" % sys.version_info[:2]
        formatter = _black_version() if layout == "readable" else ""
        options = json.dumps([tool, action, target, layout, where, python, formatter])
        digest = hashlib.sha256(options.encode("utf-8")).hexdigest()[:32]
        folder = (directory or default_cache_dir()) / tool
        return cls(folder / f"stat-{digest}.json", started_ns)

    # -- reading ----------------------------------------------------------

    def load(self) -> None:
        """Read the file once; anything unreadable or malformed is an empty cache."""
        try:
            with open(self.path, "rb") as handle:
                data = json.loads(handle.read())
        except (OSError, ValueError, RecursionError):
            return
        if isinstance(data, dict) and data.get("format") == FORMAT:
            entries = data.get("entries")
            if isinstance(entries, dict):
                self._entries = entries

    def lookup(
        self,
        key: str,
        source: os.stat_result,
        *,
        python: bool,
        destination: Optional[str],
    ) -> Optional[Hit]:
        """The previous outcome, if the source and its output are as they were then."""
        entry = self._entries.get(key)
        if not isinstance(entry, list) or len(entry) != 7:
            return None
        if entry[0] != fingerprint(source):
            return None
        if entry[1] != destination:
            return None  # the same source mirrored elsewhere (other paths given)
        if destination is not None and entry[2] != _stat(destination):
            return None  # output deleted, edited or replaced
        hit = _hit(entry[3], entry[4], entry[5])
        if hit is None or (hit.outcome == COPIED) == python:
            return None  # damaged, or --include now classes the file otherwise
        if not _unchanged(entry[6], self._digests):
            return None  # a module whose declarations the output relies on
        return hit

    # -- writing ----------------------------------------------------------

    def record(
        self,
        key: str,
        source: Optional[os.stat_result],
        *,
        destination: Optional[str],
        outcome: str,
        matches: int = 0,
        warnings: Sequence[CaseWarning] = (),
        written: bool = False,
        consulted: Sequence[Tuple[str, str]] = (),
    ) -> None:
        """Remember a file handled successfully.

        ``source`` is its stat from before it was read, or (``written``)
        from after this run rewrote it in place; ``destination`` is
        stat'ed now, after it was written.
        """
        if source is None or not (written or self._settled(source)):
            self.forget(key)
            return
        output = None
        if destination is not None:
            output = _stat(destination)
            if output is None:
                self.forget(key)
                return
        self._entries[key] = [
            fingerprint(source),
            destination,
            output,
            outcome,
            matches,
            [list(warning) for warning in warnings],
            [list(pair) for pair in consulted],
        ]
        self._dirty = True

    def forget(self, key: str) -> None:
        if self._entries.pop(key, None) is not None:
            self._dirty = True

    def _settled(self, source: os.stat_result) -> bool:
        # The later of mtime and ctime: on Windows st_ctime is the creation
        # time, which a write does not move.
        changed = max(source.st_mtime_ns, source.st_ctime_ns)
        return changed < self.started_ns - RACY_MARGIN_NS

    def save(self) -> None:
        """Write the cache if the run changed it: whole, or not at all."""
        if not self._dirty:
            return
        data = json.dumps(
            {"format": FORMAT, "entries": self._entries}, separators=(",", ":")
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-stat-")
        except OSError:
            return  # a cache that cannot be written is a slower run, not a failure
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(tmp, self.path)
        except OSError:
            _remove_quietly(tmp)
            return
        except BaseException:
            _remove_quietly(tmp)
            raise
        self._dirty = False


def _stat(path: str) -> Optional[List[int]]:
    try:
        return fingerprint(os.stat(path))
    except OSError:
        return None


def _unchanged(consulted: Any, digests: Dict[str, str]) -> bool:
    """Whether each file a readable output relied on still has the digest
    it had ("" for a file that was not there); ``digests``: those read so
    far in this run."""
    if not isinstance(consulted, list):
        return False
    for pair in consulted:
        if not (isinstance(pair, list) and len(pair) == 2):
            return False
        path, digest = pair
        if not isinstance(path, str):
            return False
        if path not in digests:
            try:
                raw: Optional[bytes] = Path(path).read_bytes()
            except OSError:
                raw = None
            digests[path] = "" if raw is None else hashlib.sha256(raw).hexdigest()
        if digests[path] != digest:
            return False
    return True


def _hit(outcome: Any, matches: Any, warnings: Any) -> Optional[Hit]:
    """A Hit from a stored entry's last three fields, or None if they are damaged."""
    if outcome not in OUTCOMES or type(matches) is not int or matches < 0:
        return None
    if not isinstance(warnings, list):
        return None
    if not warnings:
        return Hit(outcome, matches, ())
    found: List[CaseWarning] = []
    for warning in warnings:
        if not (
            isinstance(warning, list)
            and len(warning) == 3
            and isinstance(warning[0], str)
            and type(warning[1]) is int
            and type(warning[2]) is int
        ):
            return None
        found.append((warning[0], warning[1], warning[2]))
    return Hit(outcome, matches, tuple(found))


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
