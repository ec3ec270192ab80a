"""Place the module's helper (:mod:`.runtime`) without moving any line.

The helper's statements go, in order, onto lines that run before anything
in the module can reach a match statement: blank lines between the
module's first statements (after the docstring and ``__future__`` imports,
before the first compound statement), and after those, the ends of its
simple statements (``import x; _spam = ...``). Each line is filled up to
:data:`LINE_LIMIT` characters where it can be; what does not fit goes onto
the last line found.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.errors import TranspileError
from spam_transpile.lowering.runtime import helper_statements

LINE_LIMIT = 400


class RawLine(cst.Comment):
    """Generated statements printed where a blank line was."""

    def _validate(self) -> None:
        pass


class RawStatement(cst.Name):
    """A generated simple statement, printed as it is."""

    def _validate(self) -> None:
        pass


Slot = Tuple[str, int, int, int]  # (kind, statement index, line index, capacity)


def place_helper(module: cst.Module, name: str, filename: str) -> cst.Module:
    statements = helper_statements(name)
    body = list(module.body)
    start = _first_free_statement(body)
    slots = _slots(module, body, start)
    if not slots:
        raise TranspileError(
            "cannot place the match helper: the module has no statement or blank "
            "line before its first compound statement",
            filename=filename,
            lineno=1,
            offset=1,
        )
    groups: List[List[str]] = [[] for _ in slots]
    slot = 0
    used = 0
    for statement in statements:
        cost = len(statement) + 2
        while slot < len(slots) - 1 and used + cost > slots[slot][3] and groups[slot]:
            slot += 1
            used = 0
        groups[slot].append(statement)
        used += cost
    for (kind, index, line, _), group in reversed(list(zip(slots, groups))):
        if group:
            body[index] = _fill(body[index], kind, line, group)
    return module.with_changes(body=body)


def _first_free_statement(body: Sequence[cst.BaseStatement]) -> int:
    """Index of the first statement after the docstring and __future__ imports."""
    index = 0
    if index < len(body) and _is_docstring(body[index]):
        index += 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    return index


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(
            statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)
        )
    )


def _is_future_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.ImportFrom)
        and isinstance(small.module, cst.Name)
        and small.module.value == "__future__"
        for small in statement.body
    )


def _slots(module: cst.Module, body: List[cst.BaseStatement], start: int) -> List[Slot]:
    """Free places in line order: blank lines, then ends of simple statements."""
    slots: List[Slot] = []
    if start > 0:
        # The docstring or last __future__ import line can take statements after it.
        previous = body[start - 1]
        slots.append(("end", start - 1, 0, LINE_LIMIT - _width(module, previous)))
    for index in range(start, len(body)):
        statement = body[index]
        for line, empty in enumerate(statement.leading_lines):
            if empty.comment is None and not empty.whitespace.value:
                slots.append(("blank", index, line, LINE_LIMIT))
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        slots.append(("end", index, 0, LINE_LIMIT - _width(module, statement)))
    return slots


def _width(module: cst.Module, statement: cst.BaseStatement) -> int:
    code = module.code_for_node(statement.with_changes(leading_lines=()))
    return max((len(line) for line in code.splitlines()), default=0)


def _fill(
    statement: cst.BaseStatement, kind: str, line: int, group: List[str]
) -> cst.BaseStatement:
    if kind == "blank":
        lines = list(statement.leading_lines)
        lines[line] = cst.EmptyLine(indent=False, comment=RawLine("; ".join(group)))
        return statement.with_changes(leading_lines=lines)
    assert isinstance(statement, cst.SimpleStatementLine)
    extra = [cst.Expr(RawStatement(text)) for text in group]
    smalls = list(statement.body)
    last = smalls[-1].with_changes(
        semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
    )
    smalls[-1] = last
    for i, small in enumerate(extra[:-1]):
        extra[i] = small.with_changes(
            semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
        )
    return statement.with_changes(body=[*smalls, *extra])
