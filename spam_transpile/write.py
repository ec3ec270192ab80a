"""Reading sources and writing outputs without losing anything.

Sources are decoded as CPython would (PEP 263 coding cookie, UTF-8 BOM) and
newlines are kept as they are; outputs are written in the same encoding via a
temporary file in the destination folder and an atomic rename, keeping the
source's permission bits.
"""

from __future__ import annotations

import io
import os
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from spam_transpile.errors import TranspileError


@dataclass(frozen=True)
class SourceFile:
    text: str
    encoding: str
    #: permission bits of the source, given to outputs
    mode: int


def read_source(path: Path) -> SourceFile:
    try:
        raw = path.read_bytes()
        mode = path.stat().st_mode & 0o7777
    except OSError as exc:
        raise TranspileError(
            f"cannot read file: {exc.strerror or exc}", filename=str(path)
        ) from None
    return decode_source(raw, str(path), mode)


def decode_source(raw: bytes, filename: str, mode: int = 0o644) -> SourceFile:
    if b"\0" in raw:
        raise TranspileError("source code cannot contain null bytes", filename=filename)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = raw.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise TranspileError(f"cannot decode source: {exc}", filename=filename) from None
    # ``utf-8-sig`` strips the BOM on decoding and restores it on encoding.
    return SourceFile(text=text, encoding=encoding, mode=mode)


def encode_output(text: str, encoding: str) -> bytes:
    return text.encode(encoding)


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data``: readers see the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
