"""Parse stage: source text to a LibCST module, or a TranspileError.

LibCST parses with the newest grammar it knows, so 3.10+ ``match``
statements and older code alike are accepted; syntax errors become
``TranspileError`` with CPython-style 1-based line and column.
"""

from __future__ import annotations

import re

import libcst as cst

from spam_transpile.errors import TranspileError

# ``match`` at the start of a logical line is the only way a match statement
# can begin; anything else (``re.match``, ``matches``) cannot be one.
_MAY_MATCH = re.compile(r"^[ \t]*match\b", re.MULTILINE)


def may_contain_match(source: str) -> bool:
    """Cheap pre-scan: False means the source certainly has no match statement."""
    return _MAY_MATCH.search(source) is not None


def parse_source(source: str, filename: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise TranspileError(
            _message(exc), filename=filename, lineno=exc.raw_line, offset=exc.raw_column + 1
        ) from None
    except (RecursionError, MemoryError):
        raise TranspileError(
            "too many nested parentheses", filename=filename, lineno=1, offset=1
        ) from None


def _message(exc: cst.ParserSyntaxError) -> str:
    text = exc.message.strip()
    # LibCST's messages are multi-line explanations; keep the first sentence.
    first = text.splitlines()[0] if text else "invalid syntax"
    return first[0].lower() + first[1:] if first and not first.startswith("'") else first or "invalid syntax"
