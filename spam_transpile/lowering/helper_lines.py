"""Place the module's helper (:mod:`.runtime`) without moving any line.

The helper is bound before any code of the module runs, on every path: its
statements go onto lines that come before the module's first statement that
is not its docstring or a ``__future__`` import, since that statement may run
code (an import that imports this module back, a class creation, a
decorator, an operator on a user's object), and every later line may never
run (an ``if __name__ == "__main__":`` block, a loop). Those lines are, in
order: the end of the docstring or last ``__future__`` import line, blank
and comment lines before the first statement (not a ``#!`` line, an encoding
declaration or a tool's pragma comment), and the start of the first
statement when it is a simple statement (``_spam = ...; import x``), or,
when that statement is a ``def`` whose creation runs no code (no
decorator; constant defaults and annotations), the same places around the
next one. The binding goes on the first of them with room; the helper's
source, as string constants the binding reads from the module's code
object, fills the rest and the blank lines further down, each line up to
:data:`LINE_LIMIT` characters (where they cannot hold it all, each the
same few characters wider). A module with none of them (a ``class`` on
line 1) binds the helper on each match line that uses it, the first time
it runs.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Sequence, Tuple

import libcst as cst

from spam_transpile.lowering.runtime import helper_statements
from spam_transpile.syntax.codegen import code_for
from spam_transpile.syntax.partial import is_stand_in, real_statement

LINE_LIMIT = 400


class MatchLine(cst.Expr):
    """The statement the lowering puts on a ``match`` line (a stable subject)."""


class MatchAssign(cst.Assign):
    """The statement the lowering puts on a ``match`` line (a subject temporary)."""


class RawLine(cst.Comment):
    """Generated statements printed where a blank line was."""

    def _validate(self) -> None:
        pass


class RawStatement(cst.Name):
    """A generated simple statement, printed as it is."""

    def _validate(self) -> None:
        pass


# (kind, statement index or HEADER/FOOTER, line index, room)
Slot = Tuple[str, int, int, int]
HEADER, FOOTER = -1, -2

# Comments whose meaning depends on standing alone on their line.
_KEPT_COMMENT = re.compile(
    r"#!|.*coding[:=]|.*\b(type|noqa|pylint|fmt|mypy|pyright|ruff|isort|flake8"
    r"|pragma)\b"
)


def place_helper(
    module: cst.Module, name: str, used: Iterable[str], source: str
) -> cst.Module:
    body: List[cst.BaseStatement] = list(module.body)
    top = _slots(module, body)
    if not top:
        return module  # each match line binds the helper (has_slots said so)
    binding, carriers = helper_statements(name, used, _marker(name, source))
    slots = top + _later_blank_lines(module, body, top)
    groups: List[List[str]] = [[] for _ in slots]
    at = _first_fit(binding, top)
    groups[at].append(binding)
    for carrier, slot in zip(carriers, _assign(carriers, slots[at:], len(binding))):
        groups[at + slot].append(carrier)
    header, footer = list(module.header), list(module.footer)
    for (kind, index, line, _), group in reversed(list(zip(slots, groups))):
        if not group:
            continue
        if index == HEADER:
            header[line] = _with_comment(header[line], group)
        elif index == FOOTER:
            footer[line] = _with_comment(footer[line], group)
        else:
            body[index] = _fill(body[index], kind, line, group)
    return module.with_changes(header=header, body=body, footer=footer)


def _marker(name: str, source: str) -> str:
    """What starts the helper's string constants and no other constant of the
    module: a NUL and digits the source does not hold."""
    digits = 0
    while str(digits) in source and digits < 10**6:
        digits = digits * 7 + 11
    return "\x00" + name + str(digits)


def has_slots(module: cst.Module) -> bool:
    """False when no line runs before the module's first statement can run code."""
    return bool(_slots(module, list(module.body)))


def _leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    return getattr(statement, "leading_lines", ())


def _prologue_end(body: Sequence[cst.BaseStatement]) -> int:
    """Index of the first statement after the docstring and __future__ imports."""
    index = 0
    if index < len(body) and is_docstring(body[index]):
        index += 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    return index


def is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) >= 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(
            statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)
        )
    )


def _is_future_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        _is_future_small(small) for small in statement.body
    )


def _is_future_small(small: cst.BaseSmallStatement) -> bool:
    return (
        isinstance(small, cst.ImportFrom)
        and isinstance(small.module, cst.Name)
        and small.module.value == "__future__"
    )


def _first_fit(statement: str, slots: Sequence[Slot]) -> int:
    """The first slot with room for ``statement``, else the last."""
    cost = len(statement) + 2
    return next((i for i, slot in enumerate(slots) if cost <= slot[3]), len(slots) - 1)


def _assign(statements: Sequence[str], slots: Sequence[Slot], used: int) -> List[int]:
    """The slot of each statement, filled in order from the first, which has
    ``used`` characters taken already: a slot is closed once the next
    statement does not fit it. Where the slots cannot hold them all, each
    is made wider by the same few characters, as few as hold them: the
    widest line is then as narrow as the module's lines allow (rather than
    the last slot taking all that is left)."""
    rooms = [slot[3] for slot in slots]
    assigned, overflow = _fill_in_order(statements, rooms, used)
    if not overflow:
        return assigned
    low, high = 0, sum(len(statement) + 2 for statement in statements) + used + 2
    while low < high:
        extra = (low + high) // 2
        if _fill_in_order(statements, [r + extra for r in rooms], used)[1]:
            low = extra + 1
        else:
            high = extra
    return _fill_in_order(statements, [r + low for r in rooms], used)[0]


def _fill_in_order(
    statements: Sequence[str], rooms: Sequence[int], used: int
) -> Tuple[List[int], bool]:
    """The slots of :func:`_assign` for slots of ``rooms``, and whether the
    last had to take more than its room."""
    assigned: List[int] = []
    slot, filled = 0, used + 2
    for statement in statements:
        cost = len(statement) + 2
        while slot < len(rooms) - 1 and filled + cost > rooms[slot]:
            slot, filled = slot + 1, 0
        assigned.append(slot)
        filled += cost
    return assigned, filled > rooms[-1]


def _later_blank_lines(
    module: cst.Module, body: Sequence[cst.BaseStatement], top: Sequence[Slot]
) -> List[Slot]:
    """Blank lines between the module's statements after the ``top`` slots,
    and at its end: the helper's source may stand there, it need not run."""
    start = max(_prologue_end(body), max(slot[1] for slot in top)) + 1
    slots: List[Slot] = []
    for index in range(start, len(body)):
        slots += _blank_only(_leading_lines(body[index]), index)
    return slots + _blank_only(module.footer, FOOTER)


def _blank_only(lines: Sequence[cst.EmptyLine], owner: int) -> List[Slot]:
    return [
        ("blank", owner, index, LINE_LIMIT)
        for index, empty in enumerate(lines)
        if empty.comment is None and not empty.whitespace.value and empty.indent
    ]


def _slots(module: cst.Module, body: List[cst.BaseStatement]) -> List[Slot]:
    """Places in line order that all run before the module's first statement
    that may run code (``body`` gets that statement parsed if it was a
    stand-in)."""
    start = _prologue_end(body)
    slots: List[Slot] = []
    if start > 0:
        last = body[start - 1]
        room = LINE_LIMIT - _last_width(module, last)
        slots.append(("end", start - 1, 0, room))
        assert isinstance(last, cst.SimpleStatementLine)
        if _prologue_smalls(last) < len(last.body):
            return slots  # the rest of that line runs code
    else:
        slots += _free_lines(module.header, HEADER)
    for index in range(start, len(body)):
        slots += _free_lines(_leading_lines(body[index]), index)
        if is_stand_in(body[index]):
            body[index] = real_statement(body[index], module)
        first = body[index]
        if isinstance(first, cst.SimpleStatementLine):
            slots.append(("start", index, 0, LINE_LIMIT - _width(module, first)))
        if not _inert_def(first):
            break
    return slots


def _inert_def(statement: cst.BaseStatement) -> bool:
    """A ``def`` whose creation runs no code of anybody's: no decorator, and
    defaults and annotations that are constants or plain names."""
    if not isinstance(statement, cst.FunctionDef) or statement.decorators:
        return False
    params = statement.params
    every = [
        *params.posonly_params,
        *params.params,
        *params.kwonly_params,
        *[p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)],
    ]
    values = [p.default for p in every] + [
        p.annotation.annotation for p in every if p.annotation is not None
    ]
    if statement.returns is not None:
        values.append(statement.returns.annotation)
    return all(value is None or _constant(value) for value in values)


def _constant(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return True  # a global's or builtin's value, read from a dict
    if isinstance(node, cst.ConcatenatedString):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Minus) and isinstance(
            node.expression, (cst.Integer, cst.Float, cst.Imaginary)
        )
    if isinstance(node, cst.Tuple):
        return all(_constant(element.value) for element in node.elements)
    return False


def _prologue_smalls(statement: cst.SimpleStatementLine) -> int:
    """How many of the line's statements are the docstring or __future__ imports."""
    count = 0
    for small in statement.body:
        docstring = count == 0 and is_docstring(statement)
        if not (docstring or _is_future_small(small)):
            break
        count += 1
    return count


def _free_lines(lines: Sequence[cst.EmptyLine], owner: int) -> List[Slot]:
    slots: List[Slot] = []
    for index, empty in enumerate(lines):
        if empty.comment is None:
            if not empty.whitespace.value:
                slots.append(("blank", owner, index, LINE_LIMIT))
        elif not empty.whitespace.value and not _KEPT_COMMENT.match(
            empty.comment.value
        ):
            room = LINE_LIMIT - len(empty.comment.value) - 2
            slots.append(("comment", owner, index, room))
    return slots


def _last_width(module: cst.Module, statement: cst.BaseStatement) -> int:
    code = code_for(statement.with_changes(leading_lines=()), module)
    lines = code.splitlines()
    return len(lines[-1]) if lines else 0


def _width(module: cst.Module, statement: cst.BaseStatement) -> int:
    code = code_for(statement.with_changes(leading_lines=()), module)
    return max((len(line) for line in code.splitlines()), default=0)


def _semicolon() -> cst.Semicolon:
    return cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))


def _raw(texts: Sequence[str]) -> List[cst.BaseSmallStatement]:
    return [cst.Expr(RawStatement(text), semicolon=_semicolon()) for text in texts]


def _with_comment(empty: cst.EmptyLine, group: Sequence[str]) -> cst.EmptyLine:
    code = "; ".join(group)
    if empty.comment is not None:
        code += "  " + empty.comment.value
    return cst.EmptyLine(indent=empty.indent, comment=RawLine(code))


def _fill(
    statement: cst.BaseStatement, kind: str, line: int, group: List[str]
) -> cst.BaseStatement:
    if kind in ("blank", "comment"):
        lines = list(_leading_lines(statement))
        lines[line] = _with_comment(lines[line], group)
        return statement.with_changes(leading_lines=lines)
    assert isinstance(statement, cst.SimpleStatementLine)
    smalls: List[cst.BaseSmallStatement] = list(statement.body)
    if kind == "start":
        return statement.with_changes(body=[*_raw(group), *smalls])
    # "end": after the docstring and __future__ imports, before anything else
    at = _prologue_smalls(statement)
    before, after = smalls[:at], smalls[at:]
    extra = _raw(group)
    if not after:
        last = extra[-1]
        assert isinstance(last, cst.Expr)
        extra[-1] = last.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        if not isinstance(before[-1].semicolon, cst.Semicolon):
            before[-1] = before[-1].with_changes(semicolon=_semicolon())
    return statement.with_changes(body=[*before, *extra, *after])
