"""Give LibCST only the top-level statements the lowering needs.

LibCST's parse is the biggest cost of a transpile, yet most top-level
statements of a file hold no match statement: the lowering leaves them as
they are, and what it must know about them (names bound, classes, the
``def`` in them) it reads from the standard tree. In the keep-lines layout
every line keeps its number, so each such statement is given to LibCST as a
stand-in over the same lines (a numbered name, or a string holding it), and
afterwards its lines are taken from the source again.

Parsed for real, besides the statements holding a match statement:

- the docstring and ``__future__`` imports, which the helper placement
  (helper_lines) looks for first;
- compound statements before the first indented block, whose INDENT token
  sets LibCST's default indentation (the stand-in of the statement holding
  it is a block indented alike);
- statements LibCST is known to refuse (``(x): int = 1``), so that it
  still refuses the file.

The helper placement reads the module's first statements until their lines
have room for the helper. A stand-in it reaches is parsed then, on its own
(:func:`real_statement`): alone, a statement parses as within the file, but
for lines after a block that LibCST may give to the block (a blank line
before an indented comment); where there are such lines, or anything else
does not line up, :class:`NotParsed` is raised and the caller parses the
whole file instead.
"""

from __future__ import annotations

import ast
import copy
import re
from bisect import bisect_right
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from spam_transpile.lowering.facts import ModuleFacts

__all__ = [
    "NotParsed",
    "Partial",
    "is_stand_in",
    "lowering_of",
    "partial_source",
    "real_statement",
]

# The stand-ins' names start so, with as many more underscores as it takes
# for no word of the source to start alike (a statement of the user's is
# never taken for one).
STAND_IN = "_spam_not_parsed_"
# A one-line stand-in is a name; a longer one a string over its lines (one
# token, where blank lines inside parentheses would be nodes each).
_QUOTES = "'''"


def _numbered(prefix: str) -> "re.Pattern[str]":
    return re.compile(f"(?:{_QUOTES})?{prefix}(\\d+)(?:\n*{_QUOTES})?")


_SIMPLE = (
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Pass,
    ast.Expr,
    ast.Return,
    ast.Delete,
    ast.Raise,
    ast.Assert,
    ast.Global,
    ast.Nonlocal,
    ast.Break,
    ast.Continue,
)


class NotParsed(Exception):
    """A statement LibCST was given a stand-in for is needed, and cannot be
    parsed on its own."""


@dataclass(frozen=True)
class _Unit:
    """Top-level statements sharing lines (``a = 1; b = 2``), usually one."""

    first: int  # 0-based index of the first line
    last: int  # 0-based index of the last line
    statements: Tuple[int, ...]  # their indexes in the module's body


@dataclass
class Partial:
    """The text LibCST parses, and how to read its output back."""

    text: str
    #: the facts of the module, per statement of the partial text
    facts: ModuleFacts
    #: the lines of the whole text
    lines: List[str]
    #: (first, last) 0-based line indexes of each stand-in, by its number
    stand_ins: List[Tuple[int, int]]
    #: numbers of the stand-ins that cannot be parsed on their own
    entangled: Set[int]
    #: a stand-in's name or string, with its number
    numbered: "re.Pattern[str]"
    #: the statements of the stand-ins parsed since, by number
    parsed: Dict[int, cst.BaseStatement] = field(default_factory=dict)

    def real(self, number: int, default_indent: str) -> cst.BaseStatement:
        """The statement stand-in ``number`` stands for, as LibCST parses
        it within the file (leading lines aside)."""
        if number >= len(self.stand_ins) or number in self.entangled:
            raise NotParsed(number)
        if number in self.parsed:
            return self.parsed[number]
        first, last = self.stand_ins[number]
        # The block before it gives the statement the file's default
        # indentation, which its own blocks are written against.
        text = "".join(
            [f"if 1:\n{default_indent}pass\n"]
            + [line + "\n" for line in self.lines[first : last + 1]]
        )
        try:
            body = cst.parse_module(text).body
        except Exception:  # a refusal of LibCST's
            raise NotParsed(number) from None
        if len(body) != 2:
            raise NotParsed(number)
        self.parsed[number] = body[1]
        return body[1]

    def splice(self, output: str) -> Optional[str]:
        """``output`` (lowered from :attr:`text`) with the lines of the
        stand-ins back from the whole text, but for those printed from their
        real statements; None if it changed another stand-in."""
        lines = output.split("\n")
        given = self.text.split("\n")
        if len(lines) != len(given):
            return None  # the caller's whole-file run reports this
        for number, (first, last) in enumerate(self.stand_ins):
            end = last + 1
            if lines[first:end] == given[first:end]:
                lines[first:end] = self.lines[first:end]
            elif number not in self.parsed:
                return None
        return "\n".join(lines)


_current: ContextVar[Optional[Partial]] = ContextVar("spam_partial", default=None)


class lowering_of:
    """``with lowering_of(partial):`` the lowering of :attr:`Partial.text`,
    during which :func:`real_statement` parses its stand-ins."""

    def __init__(self, partial: Partial) -> None:
        self.partial = partial

    def __enter__(self) -> Partial:
        self._token = _current.set(self.partial)
        return self.partial

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)


def stand_in_number(statement: cst.CSTNode) -> Optional[int]:
    """The number of the stand-in ``statement`` is (of the partial text
    being lowered), or None if it is not one."""
    if isinstance(statement, cst.If):
        test: cst.CSTNode = statement.test
    elif isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if not isinstance(small, cst.Expr):
            return None
        test = small.value
    else:
        return None
    if not isinstance(test, (cst.Name, cst.SimpleString)):
        return None
    partial = _current.get()
    found = partial.numbered.fullmatch(test.value) if partial is not None else None
    return int(found.group(1)) if found else None


def is_stand_in(statement: cst.CSTNode) -> bool:
    return stand_in_number(statement) is not None


def real_statement(
    statement: cst.BaseStatement, module: cst.Module
) -> cst.BaseStatement:
    """The statement stand-in ``statement`` of ``module`` stands for, with
    the stand-in's leading lines (the lines before it are real)."""
    partial = _current.get()
    number = stand_in_number(statement)
    if partial is None or number is None:
        raise NotParsed(statement)
    real = partial.real(number, module.default_indent)
    return real.with_changes(leading_lines=getattr(statement, "leading_lines", ()))


def partial_source(
    source: str, tree: ast.Module, nodes: Sequence[ast.AST], facts: ModuleFacts
) -> Optional[Partial]:
    """The partial text of ``source`` (lines ended by ``\\n``, as
    layout.split_layout makes it) whose standard tree is ``tree`` (``nodes``:
    all its nodes), or None when every statement must be parsed anyway."""
    statements = facts.statements
    if statements is None or len(statements) != len(tree.body) or not tree.body:
        return None
    lines = source.split("\n")
    units = _units(tree.body, lines)
    keep = [any(statements[i][0] for i in unit.statements) for unit in units]
    for index in range(_first_free(units, tree.body)):
        keep[index] = True
    compound, indented, indent = _first_indent(units, tree.body, lines)
    for index in compound:
        keep[index] = True
    for line in _refused_lines(nodes):
        keep[_unit_at(units, line)] = True
    if all(keep):
        return None
    prefix = STAND_IN
    while prefix in source:
        prefix += "_"
    out = list(lines)
    partial_facts: List[Tuple[bool, int]] = []
    stand_ins: List[Tuple[int, int]] = []
    entangled: Set[int] = set()
    for index, (unit, kept) in enumerate(zip(units, keep)):
        if kept:
            partial_facts.extend(statements[i] for i in unit.statements)
            continue
        partial_facts.append((False, sum(statements[i][1] for i in unit.statements)))
        number = len(stand_ins)
        stand_ins.append((unit.first, unit.last))
        following = units[index + 1].first if index + 1 < len(units) else len(lines)
        if _may_own_lines_after(unit, tree.body, lines[unit.last + 1 : following]):
            entangled.add(number)
        at_indent = indent if index == indented else None
        _write_stand_in(out, unit.first, unit.last, f"{prefix}{number}", at_indent)
    given = copy.copy(facts)
    given.statements = partial_facts
    text = "\n".join(out)
    return Partial(text, given, lines, stand_ins, entangled, _numbered(prefix))


def _may_own_lines_after(
    unit: _Unit, body: Sequence[ast.stmt], after: Sequence[str]
) -> bool:
    """Can LibCST give lines after the unit to a block of it? Only a block
    followed by an indented comment (with the blank lines before it)."""
    if all(isinstance(body[i], _SIMPLE) for i in unit.statements):
        return False
    return any(
        line[:1] in (" ", "\t", "\f") and line.lstrip(" \t\f")[:1] == "#"
        for line in after
    )


def _write_stand_in(
    lines: List[str], first: int, last: int, name: str, indent: Optional[str]
) -> None:
    """A name over the lines of a unit, or, for the unit with the module's
    first indented block, a block indented as that one."""
    for index in range(first + 1, last + 1):
        lines[index] = ""
    if indent is not None:
        lines[first] = f"if {name}:"
        # Every line its own ``pass``: a blank line here would be one of the
        # module's, where the helper's carriers may go (helper_lines).
        for index in range(first + 1, last + 1):
            lines[index] = indent + "pass"
    elif first == last:
        lines[first] = name
    else:
        lines[first] = _QUOTES + name
        lines[last] = _QUOTES


def _units(body: Sequence[ast.stmt], lines: Sequence[str]) -> List[_Unit]:
    units: List[_Unit] = []
    for index, statement in enumerate(body):
        first = _first_line(statement) - 1
        last = (statement.end_lineno or statement.lineno) - 1
        # ``a = 1; \`` ends a line another statement goes on from
        if units and (first <= units[-1].last or _continued(lines[units[-1].last])):
            previous = units.pop()
            first = previous.first
            last = max(last, previous.last)
            units.append(_Unit(first, last, previous.statements + (index,)))
        else:
            units.append(_Unit(first, last, (index,)))
    return units


def _continued(line: str) -> bool:
    return line.endswith("\\")


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    if decorators:
        return min(statement.lineno, *(d.lineno for d in decorators))
    return statement.lineno


def _unit_at(units: Sequence[_Unit], line: int) -> int:
    """Index of the unit holding 0-based ``line`` (a line of a statement)."""
    return bisect_right([unit.first for unit in units], line) - 1


def _first_free(units: Sequence[_Unit], body: Sequence[ast.stmt]) -> int:
    """Index of the first unit after the docstring and the ``__future__``
    imports (helper_lines._first_free_statement), which are all parsed; a
    docstring's line may take a piece after it."""
    index = 0
    while index < len(units):
        members = [body[i] for i in units[index].statements]
        if not (
            all(_is_future_import(statement) for statement in members)
            or (index == 0 and isinstance(members[0], ast.Expr))
        ):
            break
        index += 1
    return index


def _is_future_import(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"


def _first_indent(
    units: Sequence[_Unit], body: Sequence[ast.stmt], lines: Sequence[str]
) -> Tuple[List[int], Optional[int], Optional[str]]:
    """Where the module's first INDENT token is, from which LibCST takes the
    default indentation: the units of compound statements before it (to be
    parsed), the unit whose block surely starts on a line of its own (its
    stand-in repeats that block's indentation), and that indentation."""
    found: List[int] = []
    for index, unit in enumerate(units):
        members = [body[i] for i in unit.statements]
        if all(isinstance(statement, _SIMPLE) for statement in members):
            continue
        indent = _block_indent(members[0], lines) if len(members) == 1 else None
        if indent is not None:
            return found, index, indent
        found.append(index)
    return found, None, None


def _block_indent(statement: ast.stmt, lines: Sequence[str]) -> Optional[str]:
    """The indentation of the block of ``statement`` if it surely starts
    on a line of its own."""
    inner = getattr(statement, "body", None)
    if not isinstance(inner, list) or not inner:
        return None
    first = inner[0]
    if getattr(first, "decorator_list", None) or first.lineno < 2:
        return None  # where its line starts is not worth working out
    before = lines[first.lineno - 1][: first.col_offset]
    if before.strip(" \t") or not before or _continued(lines[first.lineno - 2]):
        return None
    return before


def _refused_lines(nodes: Sequence[ast.AST]) -> List[int]:
    """0-based lines of statements LibCST's parser refuses though CPython
    takes them: a parenthesised target of an annotated assignment,
    ``(x): int``."""
    return [
        node.lineno - 1
        for node in nodes
        if type(node) is ast.AnnAssign and node.target.col_offset != node.col_offset
    ]
