"""Parser stage: rules of CPython's grammar (``Grammar/python.gram`` and
its action helpers) that LibCST's grammar may not have. The PEG parser stops
at the first error in the text, so these run before any compiler rule."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from spam_transpile.checks.constants import NUMBER_TYPES, string_parts
from spam_transpile.checks.messages import (
    MSG_IMAGINARY,
    MSG_INVALID_SYNTAX,
    MSG_REAL,
    MSG_UNDERSCORE_TARGET,
)
from spam_transpile.checks.reporter import Reporter
from spam_transpile.errors import TranspileError
from spam_transpile.syntax.blocks import parts_holding_matches
from spam_transpile.syntax.cstwalk import PATTERN_TYPES, pattern_nodes

__all__ = ["check_parser_rules"]

_TemplatedString = getattr(cst, "TemplatedString", None)  # newer LibCSTs only


def check_parser_rules(root: cst.CSTNode, reporter: Reporter) -> None:
    """Apply the grammar's pattern rules to every pattern under ``root``.

    The PEG parser stops at the first error in the text, so patterns are
    visited in text order (LibCST lists children in source order).
    """
    for node in _walk_text_order(root):
        kind = type(node)  # exact types: isinstance() on LibCST's ABCs is slow
        if kind is cst.MatchValue:
            check_literal_syntax(node.value, reporter)  # type: ignore[attr-defined]
        elif kind is cst.MatchMappingElement:
            check_literal_syntax(node.key, reporter)  # type: ignore[attr-defined]
        elif kind is cst.MatchAs:
            check_as_target(node, reporter)  # type: ignore[arg-type]


def _walk_text_order(
    node: cst.CSTNode, in_pattern: bool = False
) -> Iterator[cst.CSTNode]:
    """``node`` and its descendants that can hold a pattern, in text order.

    Only blocks of compound statements and patterns are entered (no pattern
    can hide in an expression or a simple statement); inside a pattern only
    pattern nodes and mapping elements are visited. Both by direct recursion
    over their fields, which is much cheaper than LibCST's generic
    ``children``.
    """
    if type(node) in PATTERN_TYPES:
        yield from pattern_nodes(node)  # type: ignore[arg-type]
        return
    yield node
    for child in parts_holding_matches(node):
        yield from _walk_text_order(child)


def check_literal_syntax(expr: cst.BaseExpression, reporter: Reporter) -> None:
    """A literal pattern or mapping key: ``literal_pattern`` / ``literal_expr``.

    Unary ``+`` is not in the grammar (``signed_number`` only knows ``-``),
    nor is a t-string (3.10-3.13 tokenize ``t"x"`` as NAME STRING): both are a
    plain "invalid syntax" at the offending token.
    """
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Plus:
        raise reporter.parser_error(MSG_INVALID_SYNTAX, expr)
    check_complex_literal(expr, reporter)
    check_no_template_string(expr, reporter)


def check_complex_literal(expr: cst.BaseExpression, reporter: Reporter) -> None:
    """``complex_number``: ``signed_real_number ('+'|'-') imaginary_number``.

    _PyPegen_ensure_real / _PyPegen_ensure_imaginary raise at the offending
    NUMBER token, the real part first.
    """
    if not isinstance(expr, cst.BinaryOperation):
        return
    if not isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return
    real = expr.left
    if isinstance(real, cst.UnaryOperation) and isinstance(real.operator, cst.Plus):
        raise reporter.parser_error(MSG_INVALID_SYNTAX, real)
    if isinstance(real, cst.UnaryOperation) and isinstance(real.operator, cst.Minus):
        real = real.expression
    if isinstance(real, cst.Imaginary):
        raise reporter.parser_error(MSG_REAL, real)
    if isinstance(expr.right, NUMBER_TYPES) and not isinstance(
        expr.right, cst.Imaginary
    ):
        raise reporter.parser_error(MSG_IMAGINARY, expr.right)


def check_no_template_string(expr: cst.BaseExpression, reporter: Reporter) -> None:
    """A t-string (LibCST 1.9 parses them) is NAME STRING to 3.10-3.13."""
    if _TemplatedString is None:
        return
    for part in string_parts(expr):
        if isinstance(part, _TemplatedString):
            lineno, offset = reporter.start(part)
            prefix = len(part.start.rstrip("'\""))
            raise TranspileError(
                MSG_INVALID_SYNTAX,
                filename=reporter.filename,
                lineno=lineno,
                offset=offset + prefix,
            )


def check_as_target(node: cst.MatchAs, reporter: Reporter) -> None:
    """``invalid_as_pattern``: ``or_pattern 'as' "_"``.

    A bare ``_`` is a wildcard (LibCST: no name); only ``p as _`` is an error.
    """
    if node.pattern is not None and node.name is not None and node.name.value == "_":
        raise reporter.parser_error(MSG_UNDERSCORE_TARGET, node.name)
