"""Reading sources and writing outputs without losing anything.

Sources are decoded as CPython would (PEP 263 coding cookie, UTF-8 BOM) and
newlines are kept as they are; outputs are written in the same encoding via a
temporary file in the destination folder and an atomic rename, keeping the
source's permission bits. This module also holds the two output layouts
(``keep-lines``, the default, and ``readable``) and the unified diff.
"""

from __future__ import annotations

import ast
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
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from spam_transpile.errors import TranspileError
from spam_transpile.files.testhooks import ACTIVE as _HOOKED
from spam_transpile.files.testhooks import checkpoint

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, see _abandoned
    fcntl = None  # type: ignore[assignment]

LAYOUTS = ("keep-lines", "readable")
READABLE_LINE_LENGTH = 88


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


# --------------------------------------------------------------------------
# Layouts
# --------------------------------------------------------------------------


def changed_lines(source: str, output: str) -> List[int]:
    """1-based numbers of the lines the keep-lines layout rewrote.

    The keep-lines output has exactly the source's lines, so a line-by-line
    comparison finds every generated statement.
    """
    pairs = zip(source.splitlines(), output.splitlines())
    return [number for number, (a, b) in enumerate(pairs, 1) if a != b]


def readable_layout(
    source: str, output: str, *, line_length: int = READABLE_LINE_LENGTH
) -> str:
    """Lay out the generated statements of ``output`` for people to read.

    Only the lines the transpiler rewrote are touched: black formats them
    when an installed black supports line ranges (23.11+), otherwise the
    built-in splitter breaks long generated lines inside their brackets.
    Either result is kept only if it has the same AST as ``output``;
    otherwise the keep-lines output is returned unchanged.
    """
    lines = changed_lines(source, output)
    if not lines:
        return output
    for formatter in (_format_with_black, _split_long_lines):
        result = formatter(output, lines, line_length)
        if result is not None and _same_ast(output, result):
            return result
    return output


def _format_with_black(
    text: str, lines: Sequence[int], line_length: int
) -> Optional[str]:
    try:
        import black
    except ImportError:
        return None
    ranges = _ranges(lines)
    try:
        mode = black.Mode(line_length=line_length)
        return black.format_str(text, mode=mode, lines=ranges)
    except TypeError:
        # black before 23.11 has no ``lines`` argument.
        return None
    except Exception:
        # black refusing the file (its parser lags CPython's) is not our error.
        return None


def _ranges(lines: Sequence[int]) -> List[Tuple[int, int]]:
    ranges: List[Tuple[int, int]] = []
    for number in lines:
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1] = (ranges[-1][0], number)
        else:
            ranges.append((number, number))
    return ranges


def _same_ast(before: str, after: str) -> bool:
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


# The built-in splitter: a logical line becomes a tree of leaves (tokens) and
# bracket groups; a group too long for the line is exploded, one item per
# line, items cut after commas and before comprehension/boolean keywords.
# Breaking lines only inside brackets never changes what the code means.

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = set(_OPENERS.values())
_BREAK_BEFORE = {"for", "if", "else", "and", "or", "async"}
_INDENT = "    "


class _Leaf(NamedTuple):
    text: str
    space_before: str


class _Group:
    def __init__(self, opener: _Leaf) -> None:
        self.opener = opener
        self.children: List["_Node"] = []
        self.closer: Optional[_Leaf] = None

    @property
    def space_before(self) -> str:
        return self.opener.space_before

    def flat(self) -> str:
        closer = self.closer.text if self.closer else ""
        return self.opener.text + _flat(self.children) + closer


_Node = Union[_Leaf, _Group]


def _flat(nodes: Sequence[_Node]) -> str:
    parts = []
    for index, node in enumerate(nodes):
        text = node.flat() if isinstance(node, _Group) else node.text
        parts.append((node.space_before if index else "") + text)
    return "".join(parts)


def _split_long_lines(
    text: str, lines: Sequence[int], line_length: int
) -> Optional[str]:
    physical = text.splitlines(keepends=True)
    try:
        logical = list(_logical_lines(text))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    wanted: Set[int] = set(lines)
    # Replace from the bottom so earlier line numbers stay valid.
    for first, last, tokens in reversed(logical):
        if not wanted.intersection(range(first, last + 1)):
            continue
        if all(
            len(physical[n - 1].rstrip("\r\n")) <= line_length
            for n in range(first, last + 1)
        ):
            continue
        rendered = _render_logical_line(tokens, physical, first, line_length)
        if rendered is None:
            continue
        ending = _line_ending(physical[last - 1])
        physical[first - 1 : last] = [line + ending for line in rendered]
    return "".join(physical)


def _line_ending(line: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return ""


def _logical_lines(text: str) -> Iterable[Tuple[int, int, List[tokenize.TokenInfo]]]:
    """(first line, last line, tokens) of every logical line of ``text``."""
    skip = {tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    current: List[tokenize.TokenInfo] = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in skip:
            continue
        if token.type == tokenize.NEWLINE:
            if current:
                yield current[0].start[0], token.start[0], current
            current = []
        elif token.type == tokenize.NL and not _open_brackets(current):
            current = []  # a blank or comment-only line
        else:
            current.append(token)


def _open_brackets(tokens: Sequence[tokenize.TokenInfo]) -> bool:
    depth = 0
    for token in tokens:
        if token.type == tokenize.OP and token.string in _OPENERS:
            depth += 1
        elif token.type == tokenize.OP and token.string in _CLOSERS:
            depth -= 1
    return depth > 0


def _render_logical_line(
    tokens: List[tokenize.TokenInfo], physical: List[str], first: int, line_length: int
) -> Optional[List[str]]:
    leaves = _leaves(tokens, physical)
    if leaves is None:
        return None
    nodes = _tree(leaves)
    if nodes is None:
        return None
    first_line = physical[first - 1]
    indent = first_line[: len(first_line) - len(first_line.lstrip(" \t"))]
    writer = _Writer(indent, line_length)
    writer.emit(nodes, indent)
    return writer.finish()


def _leaves(
    tokens: List[tokenize.TokenInfo], physical: List[str]
) -> Optional[List[_Leaf]]:
    leaves: List[_Leaf] = []
    previous_end: Optional[Tuple[int, int]] = None
    index = 0
    depth = 0
    while index < len(tokens):
        token = tokens[index]
        end = token.end
        text = token.string
        if token.type == getattr(tokenize, "FSTRING_START", -1):
            # 3.12+ splits f-strings into parts; keep each one whole, since
            # older Pythons do not allow line breaks inside them.
            index, end = _fstring_end(tokens, index)
            text = _slice(physical, token.start, end)
        elif token.type == tokenize.NL:
            index += 1
            continue
        elif token.type == tokenize.COMMENT and depth:
            return None  # a comment inside brackets pins its line; leave it
        if token.type == tokenize.OP and text in _OPENERS:
            depth += 1
        elif token.type == tokenize.OP and text in _CLOSERS:
            depth -= 1
        leaves.append(
            _Leaf(text, _space_between(previous_end, token, physical, leaves))
        )
        previous_end = end
        index += 1
    return leaves


def _fstring_end(
    tokens: List[tokenize.TokenInfo], index: int
) -> Tuple[int, Tuple[int, int]]:
    nesting = 0
    while True:
        kind = tokens[index].type
        # FSTRING_START/END exist from 3.12 (only then are there such tokens).
        if kind == getattr(tokenize, "FSTRING_START", -1):
            nesting += 1
        elif kind == getattr(tokenize, "FSTRING_END", -1):
            nesting -= 1
            if nesting == 0:
                return index, tokens[index].end
        index += 1


def _slice(physical: List[str], start: Tuple[int, int], end: Tuple[int, int]) -> str:
    if start[0] == end[0]:
        return physical[start[0] - 1][start[1] : end[1]]
    middle = physical[start[0] : end[0] - 1]
    return "".join(
        [physical[start[0] - 1][start[1] :], *middle, physical[end[0] - 1][: end[1]]]
    )


def _space_between(
    previous_end: Optional[Tuple[int, int]],
    token: tokenize.TokenInfo,
    physical: List[str],
    leaves: List[_Leaf],
) -> str:
    if previous_end is None:
        return ""
    if previous_end[0] == token.start[0]:
        return physical[token.start[0] - 1][previous_end[1] : token.start[1]]
    # The tokens were on different lines: one space, none next to brackets.
    if token.string in _CLOSERS or token.string == "," or leaves[-1].text in _OPENERS:
        return ""
    return " "


def _tree(leaves: List[_Leaf]) -> Optional[List[_Node]]:
    root: List[_Node] = []
    stack: List[_Group] = []
    for leaf in leaves:
        siblings = stack[-1].children if stack else root
        if leaf.text in _OPENERS:
            group = _Group(opener=leaf)
            siblings.append(group)
            stack.append(group)
        elif leaf.text in _CLOSERS:
            if not stack or _OPENERS[stack[-1].opener.text] != leaf.text:
                return None
            stack.pop().closer = leaf
        else:
            siblings.append(leaf)
    return None if stack else root


def _items(children: List[_Node]) -> List[List[_Node]]:
    """Split a group's children where a line break reads naturally."""
    items: List[List[_Node]] = [[]]
    in_lambda_parameters = False
    for node in children:
        text = node.text if isinstance(node, _Leaf) else None
        previous = items[-1][-1] if items[-1] else None
        after_async = isinstance(previous, _Leaf) and previous.text == "async"
        if text in _BREAK_BEFORE and items[-1] and not after_async:
            items.append([])
        items[-1].append(node)
        # ``lambda a, b: ...`` reads as one unit; its commas are no break.
        if text == "lambda":
            in_lambda_parameters = True
        elif text == ":":
            in_lambda_parameters = False
        elif text == "," and not in_lambda_parameters:
            items.append([])
    return [item for item in items if item]


class _Writer:
    def __init__(self, indent: str, line_length: int) -> None:
        self.lines: List[str] = []
        self.current = indent
        self.line_length = line_length

    def at_line_start(self) -> bool:
        return not self.current.strip()

    def emit(self, nodes: List[_Node], indent: str) -> None:
        for index, node in enumerate(nodes):
            space = "" if self.at_line_start() else node.space_before
            if isinstance(node, _Leaf):
                self.current += space + node.text
                continue
            needed = (
                len(self.current) + len(space) + len(node.flat()) + _tail(nodes, index)
            )
            if needed <= self.line_length or not node.children:
                self.current += space + node.flat()
            else:
                self.explode(node, space, indent)

    def explode(self, group: _Group, space: str, indent: str) -> None:
        self.current += space + group.opener.text
        inner = indent + _INDENT
        for item in _items(group.children):
            self.newline(inner)
            self.emit(item, inner)
        self.newline(indent)
        self.current += group.closer.text if group.closer else ""

    def newline(self, indent: str) -> None:
        self.lines.append(self.current.rstrip())
        self.current = indent

    def finish(self) -> List[str]:
        self.lines.append(self.current.rstrip())
        return self.lines


def _tail(nodes: List[_Node], index: int) -> int:
    """Width of the leaves that must follow ``nodes[index]`` on its line."""
    width = 0
    for node in nodes[index + 1 :]:
        if isinstance(node, _Group):
            break
        width += len(node.space_before) + len(node.text)
    return width


def black_supports_line_ranges() -> bool:
    """Whether the installed black can format only some lines (for docs/tests)."""
    try:
        import inspect

        import black
    except ImportError:
        return False
    return "lines" in inspect.signature(black.format_str).parameters


__all__ = [
    "LAYOUTS",
    "TEMP_SUFFIX",
    "ChangedDuringRun",
    "SourceFile",
    "black_supports_line_ranges",
    "changed_lines",
    "copy_atomic",
    "decode_source",
    "describe_os_error",
    "describe_write_error",
    "encode_output",
    "holds",
    "is_temporary_name",
    "read_bytes",
    "read_source",
    "readable_layout",
    "remove_abandoned_temporaries",
    "remove_if_abandoned",
    "same_file_copy",
    "still_as_read",
    "unified_diff",
    "write_atomic",
]
