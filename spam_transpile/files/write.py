"""Reading sources and writing outputs without losing anything.

Sources are decoded as CPython would (PEP 263 coding cookie, UTF-8 BOM) and
newlines are kept as they are; outputs are written in the same encoding via a
temporary file in the destination folder and an atomic rename, keeping the
source's permission bits. This module also holds the unified diff (the
layouts are the lowering's: :mod:`spam_transpile.lowering.readable`).
"""

from __future__ import annotations

import io
import os
import re
import stat
import tempfile
import time
import tokenize
from pathlib import Path
from typing import (
    BinaryIO,
    Callable,
    List,
    NamedTuple,
    Optional,
    Tuple,
)

from spam_transpile.errors import TranspileError
from spam_transpile.files.testhooks import ACTIVE as _HOOKED
from spam_transpile.files.testhooks import checkpoint

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, see _abandoned
    fcntl = None  # type: ignore[assignment]


# NamedTuples and plain classes, not dataclasses: those are slow to create
# at import, and a rerun served by the stat cache is mostly start-up.


class SourceFile(NamedTuple):
    text: str
    encoding: str
    #: permission bits of the source, given to outputs
    mode: int


def read_source(path: Path) -> SourceFile:
    raw, info = read_bytes(path)
    return decode_source(raw, str(path), info.st_mode & 0o7777)


def read_bytes(
    path: Path, info: Optional[os.stat_result] = None
) -> Tuple[bytes, os.stat_result]:
    """The file's bytes and stat, or a TranspileError saying why not.

    The stat is taken before the bytes are read (or is ``info``, taken
    earlier): a change made while the file is read then shows as a newer
    stat next time, never as old bytes under a new stat, which is what lets
    the stat cache trust it.
    """
    try:
        if info is None:
            info = os.stat(path)
        raw = path.read_bytes()
    except OSError as exc:
        raise TranspileError(describe_os_error(exc), filename=str(path)) from None
    return raw, info


def describe_os_error(exc: OSError) -> str:
    """A one-line reason for an OSError, without the repeated file name."""
    reason = exc.strerror or str(exc)
    if getattr(exc, "errno", None) == 40:  # ELOOP on Linux
        return (
            "cannot read file: symbolic link loop (too many levels of symbolic links)"
        )
    return f"cannot read file: {reason}"


def decode_source(raw: bytes, filename: str, mode: int = 0o644) -> SourceFile:
    if b"\0" in raw:
        raise TranspileError(
            "binary file: source code cannot contain null bytes",
            filename=filename,
            lineno=raw[: raw.index(b"\0")].count(b"\n") + 1,
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except (SyntaxError, LookupError) as exc:
        # tokenize says "invalid or missing encoding declaration" for bad
        # UTF-8 near the top; point at the byte instead.
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise _undecodable(raw, bad, "utf-8", filename) from None
        raise TranspileError(
            f"cannot decode source: {getattr(exc, 'msg', None) or exc}",
            filename=filename,
        ) from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _undecodable(raw, exc, encoding, filename) from None
    except LookupError as exc:
        raise TranspileError(
            f"cannot decode source: {exc}", filename=filename
        ) from None
    # ``utf-8-sig`` strips the BOM on decoding and restores it on encoding.
    return SourceFile(text=text, encoding=encoding, mode=mode)


def _undecodable(
    raw: bytes, exc: UnicodeDecodeError, encoding: str, filename: str
) -> TranspileError:
    # Point at the offending byte the way an editor would (1-based line/column).
    line_start = raw.rfind(b"\n", 0, exc.start) + 1
    lineno = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - line_start + 1
    bad = raw[exc.start : exc.start + 1].hex()
    return TranspileError(
        f"cannot decode byte 0x{bad} as {encoding} ({exc.reason}); "
        "declare the file's encoding with a PEP 263 coding comment",
        filename=filename,
        lineno=lineno,
        offset=column,
    )


def encode_output(text: str, encoding: str) -> bytes:
    return text.encode(encoding)


# Temporary files are named ``.NAME.XXXXXXXX.spam-transpile.tmp``. The
# suffix is ours alone, so a later run can tell what an interrupted run of
# ours left behind from anybody else's files, and remove only that.
TEMP_SUFFIX = ".spam-transpile.tmp"
_TEMP_NAME = re.compile(
    r"\..+\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + r"\Z", re.DOTALL
)
# Keeps the temporary name within the usual 255-byte limit for long names.
_NAME_IN_TEMP = 64
#: where locks do not work, a temporary file untouched this long is abandoned
STALE_AFTER = 24 * 3600.0
_CHUNK = 1 << 20


def is_temporary_name(name: str) -> bool:
    """Whether ``name`` is one of our temporary files (never an input)."""
    return name.endswith(TEMP_SUFFIX) and _TEMP_NAME.match(name) is not None


class ChangedDuringRun(Exception):
    """The file to replace is no longer the one that was read; ``str()`` says how."""


def describe_write_error(exc: OSError) -> str:
    """A one-line reason for a failed write, without the repeated file name."""
    return f"cannot write file: {exc.strerror or exc}"


def write_atomic(
    path: Path,
    data: bytes,
    mode: int,
    *,
    durable: bool = True,
    guard: Optional[Callable[[], None]] = None,
) -> None:
    """Replace ``path`` with ``data``: readers see the old file or the new one.

    ``durable`` also flushes the data to disk before the rename, so a power
    loss cannot leave an empty file where the user's source was; mirrored
    build outputs skip it because they can always be rebuilt. ``guard`` runs
    just before the rename and may raise to keep the old file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            checkpoint("write-created", path)
            _fill(handle, data, path)
            _finish(handle, tmp, path, mode, durable=durable, guard=guard)
    except BaseException:
        _remove_quietly(tmp)
        raise
    checkpoint("write-replaced", path)


def copy_atomic(source: Path, path: Path, mode: int) -> None:
    """Copy ``source`` byte for byte to ``path`` through a temporary file.

    A failure to read raises a TranspileError naming ``source``; a failure
    to write raises the OSError, which is about ``path``.
    """
    try:
        original = open(source, "rb")
    except OSError as exc:
        raise _read_error(exc, source) from None
    with original:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(path)
        try:
            with os.fdopen(fd, "wb") as handle:
                checkpoint("write-created", path)
                _pour(original, handle, source, path)
                _finish(handle, tmp, path, mode, durable=False, guard=None)
        except BaseException:
            _remove_quietly(tmp)
            raise
    checkpoint("write-replaced", path)


def _create_temporary(path: Path) -> Tuple[int, str]:
    """A new temporary file beside ``path``, open and locked by this process.

    The lock says "being written" to later runs: it lasts until the file is
    renamed, and the system drops it when the process dies, even by SIGKILL.
    """
    prefix = f".{path.name[:_NAME_IN_TEMP]}."
    for _ in range(3):
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=path.parent)
        if _lock(fd, tmp):
            break
        os.close(fd)
    return fd, tmp


def _lock(fd: int, tmp: str) -> bool:
    """Lock a new temporary file; False when another run removed it first."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        return True  # no locks on this file system; others judge by age
    # Between creating and locking, a run cleaning up may have taken the
    # file for abandoned and removed it: then start over with a new one.
    try:
        return os.path.samestat(os.fstat(fd), os.lstat(tmp))
    except OSError:
        return False


def _fill(handle: BinaryIO, data: bytes, path: Path) -> None:
    if not _HOOKED:
        handle.write(data)
        return
    # The kill test stops runs halfway through an output: let that half
    # reach the file first.
    half = len(data) // 2
    handle.write(data[:half])
    handle.flush()
    checkpoint("write-half", path)
    handle.write(data[half:])


def _pour(original: BinaryIO, handle: BinaryIO, source: Path, path: Path) -> None:
    """Copy ``original`` into ``handle``; a failed read names the source."""
    first = True
    while True:
        try:
            chunk = original.read(_CHUNK)
        except OSError as exc:
            raise _read_error(exc, source) from None
        if not chunk:
            return
        handle.write(chunk)
        if first and _HOOKED:
            handle.flush()
            checkpoint("write-half", path)
        first = False


def _finish(
    handle: BinaryIO,
    tmp: str,
    path: Path,
    mode: int,
    *,
    durable: bool,
    guard: Optional[Callable[[], None]],
) -> None:
    """Flush, set the mode, check, rename: the temporary file becomes ``path``.

    The file is still open during the rename, so its lock is held until the
    temporary name is gone (where there are no locks, Windows, it is closed
    first: an open file cannot be renamed there).
    """
    handle.flush()
    if durable:
        os.fsync(handle.fileno())
    os.chmod(tmp, mode)
    checkpoint("write-done", path)
    if guard is not None:
        guard()
    if fcntl is None:
        handle.close()
    os.replace(tmp, path)


def _read_error(exc: OSError, source: Path) -> TranspileError:
    return TranspileError(describe_os_error(exc), filename=str(source))


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def remove_abandoned_temporaries(folder: str) -> List[str]:
    """Remove the temporary files of ours in ``folder`` that nobody writes.

    They are what an interrupted run (killed, or the machine stopped) left;
    those of a run still going are locked and stay. Returns the removed
    paths.
    """
    try:
        with os.scandir(folder or ".") as scan:
            names = [entry.name for entry in scan if entry.name.endswith(TEMP_SUFFIX)]
    except OSError:
        return []
    paths = [os.path.join(folder, name) for name in names if is_temporary_name(name)]
    return [path for path in paths if remove_if_abandoned(path)]


def remove_if_abandoned(path: str) -> bool:
    """Remove one temporary file of ours if no process is writing it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False  # gone already, or a link: not ours to touch
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _abandoned(fd, info):
            return False
        # Still the file we locked, not a new one under the same name.
        if not os.path.samestat(info, os.lstat(path)):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # drops our lock too


def _abandoned(fd: int, info: os.stat_result) -> bool:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True  # kept until this fd is closed, after the unlink
        except BlockingIOError:
            return False  # its writer is alive and holds the lock
        except OSError:
            pass  # no locks on this file system: judge by age
    return time.time() - info.st_mtime > STALE_AFTER


def still_as_read(path: Path, info: os.stat_result, raw: bytes) -> None:
    """Raise ChangedDuringRun unless ``path`` is still the file read as ``raw``.

    ``info`` is its stat from before the read. An in-place run reads every
    source before it writes any: one edited, replaced or deleted meanwhile
    must not get the lowered old text (or come back from the dead).
    """
    try:
        now = os.stat(path)
    except FileNotFoundError:
        raise ChangedDuringRun("deleted during the run; not re-created") from None
    except OSError as exc:
        raise ChangedDuringRun(
            f"cannot check that it is unchanged since it was read "
            f"({exc.strerror or exc}); left as it is"
        ) from None
    before = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    after = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
    # The bytes too: an edit within one tick of a coarse clock, or by a tool
    # that restores the time, keeps size and time as they were.
    if before != after or _read_quietly(path) != raw:
        raise ChangedDuringRun(
            "changed during the run; left as it is (run again to transpile it)"
        )


def _read_quietly(path: Path) -> Optional[bytes]:
    try:
        return path.read_bytes()
    except OSError:
        return None


def holds(path: Path, data: bytes, mode: int) -> bool:
    """True when ``path`` already has exactly these bytes and permission bits.

    Rewriting an identical output costs a write and a rename per file; a
    stat and a read are much cheaper, which keeps reruns into an existing
    output tree fast.
    """
    try:
        info = path.stat()
        if info.st_size != len(data) or info.st_mode & 0o7777 != mode:
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def same_file_copy(source: Path, path: Path, mode: int) -> bool:
    """True when ``path`` is already a byte-for-byte copy of ``source``."""
    try:
        info = path.stat()
        if info.st_mode & 0o7777 != mode or info.st_size != source.stat().st_size:
            return False
        return path.read_bytes() == source.read_bytes()
    except OSError:
        return False


def unified_diff(before: str, after: str, name: str) -> str:
    import difflib  # only --diff needs it; start-up time matters for reruns

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{name}\t(original)",
        tofile=f"{name}\t(transpiled)",
    )
    # A last line without a newline would glue onto the next hunk header.
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


__all__ = [
    "TEMP_SUFFIX",
    "ChangedDuringRun",
    "SourceFile",
    "copy_atomic",
    "decode_source",
    "describe_os_error",
    "describe_write_error",
    "encode_output",
    "holds",
    "is_temporary_name",
    "read_bytes",
    "read_source",
    "remove_abandoned_temporaries",
    "remove_if_abandoned",
    "same_file_copy",
    "still_as_read",
    "unified_diff",
    "write_atomic",
]
