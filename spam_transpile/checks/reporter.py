"""Errors placed where CPython places them: its parser counts columns in
characters, its compiler in UTF-8 bytes."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import libcst as cst

from spam_transpile.errors import TranspileError

__all__ = ["PositionFn", "Reporter"]

PositionFn = Callable[[cst.CSTNode], Tuple[int, int]]


def _source_lines(source: str) -> List[str]:
    # CPython (and LibCST) end lines at \r\n, \r or \n only; str.splitlines
    # would also split at \f, \v, \x1c... and shift every later line number.
    return re.split(r"\r\n|\r|\n", source)


_cached_source_lines = functools.lru_cache(maxsize=4)(_source_lines)


@dataclass
class Reporter:
    filename: str
    position: PositionFn
    source: Optional[str]

    def start(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Where CPython's AST node for ``node`` starts: (line, 1-based column).

        LibCST leaves a node's own parentheses out of its position, except
        for the literal of a MatchValue/MatchSingleton (the parentheses belong
        to the value, which the pattern's range covers); CPython's group
        pattern ``(p)`` has p's position, but a parenthesised sequence
        pattern starts at its innermost ``(``.
        """
        if isinstance(node, (cst.MatchValue, cst.MatchSingleton)):
            return self.position(node.value)
        if isinstance(node, cst.MatchTuple) and node.lpar:
            return self.position(node.lpar[-1])
        return self.position(node)

    def parser_error(self, msg: str, node: cst.CSTNode) -> TranspileError:
        """An error of CPython's parser: its offset counts characters."""
        lineno, offset = self.start(node)
        return TranspileError(msg, filename=self.filename, lineno=lineno, offset=offset)

    def compiler_error(self, msg: str, node: cst.CSTNode) -> TranspileError:
        """An error of CPython's compiler: its offset counts UTF-8 bytes.

        compiler_error() passes the AST's col_offset (bytes) + 1 unconverted,
        unlike the parser, which converts to characters.
        """
        lineno, offset = self.start(node)
        if self.source is not None:
            lines = _cached_source_lines(self.source)
            if 0 < lineno <= len(lines):
                prefix = lines[lineno - 1][: offset - 1]
                offset = len(prefix.encode("utf-8", "surrogatepass")) + 1
        return TranspileError(msg, filename=self.filename, lineno=lineno, offset=offset)
