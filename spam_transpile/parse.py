"""Parse stage: source text to a LibCST module, or a TranspileError.

LibCST parses with the newest grammar it knows, so 3.10+ ``match``
statements and older code alike are accepted. When it refuses a file, the
error should read like CPython's: on 3.10+ the running interpreter's own
``compile()`` supplies CPython's message and position; on 3.9 (which cannot
parse ``match``) LibCST's position is used with a plain "invalid syntax".
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import Optional, Tuple

import libcst as cst

from spam_transpile.errors import TranspileError
from spam_transpile.prescan import may_contain_match

__all__ = ["Unparsable", "may_contain_match", "parse_source"]

_LIBCST_POSITION = re.compile(r"error at (\d+):(\d+)")


class Unparsable(Exception):
    """LibCST cannot parse a source that may well be valid, and has no match."""


def parse_source(source: str, filename: str) -> cst.Module:
    """Parse ``source``, or raise TranspileError as CPython would.

    Raises :class:`Unparsable` when LibCST refuses a file that CPython accepts
    (or that no CPython here can judge) but that cannot hold a match
    statement: there is nothing to lower, and refusing it would be a false
    rejection (LibCST rejects a few rare forms, like ``(x): int = 1``).
    """
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        position: Optional[Tuple[int, int]] = _libcst_position(exc)
    except cst.CSTValidationError:
        # LibCST's parser builds nodes it then refuses (``"a" b"b"``).
        position = None
    except (RecursionError, MemoryError):
        raise TranspileError(
            "too many nested parentheses", filename=filename, lineno=1, offset=1
        ) from None
    cpython = _cpython_syntax_error(source, filename)
    if cpython is not None:
        raise cpython
    if not may_contain_match(source):
        raise Unparsable(filename)
    line, column = position or (1, 1)
    raise TranspileError(
        "invalid syntax", filename=filename, lineno=line, offset=column
    )


def _libcst_position(exc: cst.ParserSyntaxError) -> Tuple[int, int]:
    # raw_line/raw_column can point past the error; the message has it right.
    found = _LIBCST_POSITION.search(str(exc))
    if found:
        return int(found.group(1)), int(found.group(2))
    return exc.raw_line, exc.raw_column + 1


def _cpython_syntax_error(source: str, filename: str) -> Optional[TranspileError]:
    if sys.version_info < (3, 10):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(
                source, filename, "exec", dont_inherit=True, flags=0x400
            )  # ONLY_AST
        except SyntaxError as exc:
            return TranspileError(
                exc.msg,
                filename=filename,
                lineno=exc.lineno or 1,
                offset=exc.offset or 1,
            )
        except (ValueError, MemoryError, RecursionError):
            return None
    return None
