"""The value CPython's AST optimizer folds a literal pattern into.

A mapping key or a value pattern must be a constant (checks.validate), two
keys with one value are a duplicate, and a switch over literal cases
(lowering.literal_switch) compares their values: all three ask
:func:`constant_value`.
"""

from __future__ import annotations

import ast
import functools
from typing import List

import libcst as cst

__all__ = [
    "NOT_CONSTANT",
    "UNKNOWN_CONSTANT",
    "NUMBER_TYPES",
    "constant_value",
    "string_parts",
]

NUMBER_TYPES = (cst.Integer, cst.Float, cst.Imaginary)
# What constant_value() returns for a literal that CPython's AST optimizer
# does not fold into a Constant (an f-string stays a JoinedStr), and for a
# Constant whose value this interpreter cannot compute (a decimal literal past
# the int digit limit, which CPython refuses for its own reasons).
NOT_CONSTANT = object()
UNKNOWN_CONSTANT = object()


def string_parts(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    if type(expr) is cst.ConcatenatedString:
        return string_parts(expr.left) + string_parts(expr.right)
    return [expr]


def constant_value(expr: cst.BaseExpression) -> object:
    """The Constant CPython's AST optimizer folds a literal into, or
    NOT_CONSTANT (f-strings stay JoinedStr)."""
    if type(expr) is cst.Name and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if isinstance(expr, NUMBER_TYPES):
        return _evaluate_number(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        operand = constant_value(expr.expression)
        if operand is NOT_CONSTANT or operand is UNKNOWN_CONSTANT:
            return operand
        return -operand  # type: ignore[operator]
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract)
    ):
        left, right = constant_value(expr.left), constant_value(expr.right)
        for part in (left, right):
            if part is NOT_CONSTANT or part is UNKNOWN_CONSTANT:
                return part
        if isinstance(expr.operator, cst.Add):
            return left + right  # type: ignore[operator]
        return left - right  # type: ignore[operator]
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        return _string_value(expr)
    return NOT_CONSTANT


@functools.lru_cache(maxsize=1024)
def _evaluate_number(text: str) -> object:
    try:
        return _literal(text)
    except (ValueError, SyntaxError):  # > 4300 digits (3.11+, 3.10.7+)
        return UNKNOWN_CONSTANT


# A literal's value, once per text: switches repeat their literals across
# matches, and each evaluation parses the text.
_literal = functools.lru_cache(maxsize=4096)(ast.literal_eval)


def _string_value(expr: cst.BaseExpression) -> object:
    parts = string_parts(expr)
    if not all(isinstance(part, cst.SimpleString) for part in parts):
        return NOT_CONSTANT
    values = [
        _literal(part.value) for part in parts if isinstance(part, cst.SimpleString)
    ]
    try:
        return values[0][:0].join(values)  # type: ignore[arg-type]
    except TypeError:  # bytes + str: LibCST refuses to build this
        return NOT_CONSTANT
