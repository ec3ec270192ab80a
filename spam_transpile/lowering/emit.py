"""Emit a lowered case as one ``if``/``elif`` test expression (source text).

The test is the pattern's condition, then the stores of its bindings, then
the guard: ``cond and [x := v, y := w] and (guard)``. The bindings read
paths from the subject again (PEP 634 leaves how often items and attributes
are read unspecified), so the test needs no temporary and nothing of the
lowering is left in ``locals()``.

How a name is stored is the :class:`Binder`'s business: ``x := v`` on 3.8+;
before 3.8, a write to the namespace dict in module and class bodies, and in
functions a write to the variable's cell (``x`` made local, and so a cell, by
an annotation on the match line). Before 3.8 a function's case without a
guard needs none of these: its body binds the captures with plain
assignments (``MatchEmitter._bind_in_body``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from spam_transpile.lowering.ir import (
    All,
    AnyOf,
    Cond,
    LoweredPattern,
    Test,
    Value,
    is_true,
)
from spam_transpile.lowering.names import Names
from spam_transpile.lowering.reads import Reads
from spam_transpile.settings import Target

if TYPE_CHECKING:
    from spam_transpile.lowering.scope_info import Scope


@dataclass
class Binder:
    #: expression storing ``value`` in user name ``name`` (its value unused),
    #: as an item of a list display
    store: Callable[[str, str], str]
    #: the items of the list display storing ``(name, value)`` pairs in
    #: order, where an item can store several; None: one item per pair
    store_all: Optional[Callable[[List[Tuple[str, str]]], List[str]]] = None


def walrus_binder() -> Binder:
    # An item of the list of stores needs no parentheses around ``:=``.
    return Binder(
        store=lambda name, value: f"{name} := {value}",
    )


def namespace_binder(namespace: str, mangle: Callable[[str], str]) -> Binder:
    """Stores through ``namespace`` (``locals()`` of a module or class body)."""
    return Binder(
        store=lambda name, value: f"{namespace}.__setitem__({mangle(name)!r}, {value})",
    )


def cell_binder(
    names: Names,
    target: Target,
    globals_: frozenset,
    mangle: Callable[[str], str],
    store_call: str,
) -> Binder:
    """Stores into a function's local (cell) variables without ``:=``.

    ``(lambda: x).__closure__[0]`` is the function's own cell for ``x``;
    3.7 made ``cell_contents`` writable, 3.6 needs the C API's PyCell_Set.
    The helper's ``store`` (``store_call``) writes the cells of several
    names at once, from keyword arguments in the order of the pattern's
    bindings: ``_spam.store(lambda: (a, b), a=v[0], b=v[1])``. Names the
    function declares global go through ``globals()``; a class-private name
    (its cell is ``_C__x``, its keyword ``__x``) through its own cell.
    """

    def store(name: str, value: str) -> str:
        if name in globals_:
            # The dict needs the name as stored: ``__x`` in a class is private.
            return (
                f"{names.builtin('globals')}().__setitem__({mangle(name)!r}, {value})"
            )
        cell = f"(lambda: {name}).__closure__[0]"
        if target.has_settable_cells:
            return f"{names.builtin('setattr')}({cell}, 'cell_contents', {value})"
        ctypes = f"{names.builtin('__import__')}('ctypes')"
        return (
            f"{ctypes}.pythonapi.PyCell_Set({ctypes}.py_object({cell}), "
            f"{ctypes}.py_object({value}))"
        )

    def alone(name: str) -> bool:
        return name in globals_ or mangle(name) != name

    def store_all(pairs: List[Tuple[str, str]]) -> List[str]:
        items: List[str] = []
        group: List[Tuple[str, str]] = []
        for name, value in pairs:
            # A value is read before the call stores anything: one that
            # reads a name of the call (``{k: m as d}``), or a name stored
            # twice, starts a call of its own.
            if group and (
                alone(name)
                or any(n == name or Reads(n).search(value) for n, _ in group)
            ):
                items.append(_cell_store(store_call, group))
                group = []
            if alone(name):
                items.append(store(name, value))
            else:
                group.append((name, value))
        if group:
            items.append(_cell_store(store_call, group))
        return items

    return Binder(store=store, store_all=store_all)


def binder_for(
    scope: "Scope",
    target: Target,
    names: Names,
    mangle: Callable[[str], str],
    store_helper: Callable[[], str],
) -> Binder:
    """How a test stores captures in ``scope``: ``:=`` where the target has
    it (outside a comprehension it binds global, nonlocal and class-private
    names like any assignment); before 3.8, through a function's cells
    (``store_helper()``: the helper's ``store``, asked for only then), a
    class body's namespace, or ``locals()`` of a module body."""
    if target.has_walrus:
        return walrus_binder()
    if scope.kind == "function":
        return cell_binder(
            names, target, scope.declared_globals(), mangle, store_helper()
        )
    if scope.kind == "class":
        return class_binder(names, target, scope.declarations(), mangle)
    return namespace_binder(f"{names.builtin('locals')}()", mangle)


def class_binder(
    names: Names,
    target: Target,
    declared: Tuple[frozenset, frozenset],
    mangle: Callable[[str], str],
) -> Binder:
    """Stores in a class body without ``:=``: through its namespace
    (``locals()``), but for the names the body declares (``declared``:
    global ones, nonlocal ones), which a capture stores where the
    declaration says, as ``:=`` would: in ``globals()``, or in the cell of
    the enclosing function's variable (a lambda in the class body closes
    over that cell, class scopes being invisible to it)."""
    globals_, nonlocals = declared
    namespace = namespace_binder(f"{names.builtin('locals')}()", mangle)
    # (the helper's ``store`` is never called: each declared name is alone)
    cells = cell_binder(names, target, globals_, mangle, "")

    def store(name: str, value: str) -> str:
        if name in globals_ or name in nonlocals:
            return cells.store(name, value)
        return namespace.store(name, value)

    return Binder(store=store)


def _cell_store(call: str, pairs: List[Tuple[str, str]]) -> str:
    names = [name for name, _ in pairs]
    cells = names[0] if len(names) == 1 else f"({', '.join(names)})"
    values = ", ".join(f"{name}={value}" for name, value in pairs)
    return f"{call}(lambda: {cells}, {values})"


@dataclass
class Lines:
    """Where a test spread over the lines of its case header stands: each
    check goes on the line of its sub-pattern (``Test.line``), so a
    traceback names the line CPython 3.10 names. The text is only ever
    broken before an operand, inside the parentheses the caller wraps the
    whole test in; lines never go back."""

    #: the continuation lines' indentation
    indent: str
    #: the line (from the case line) the text reached
    at: int = 0
    #: the line of each capture's name (its first, in an or-pattern)
    captures: Dict[str, int] = field(default_factory=dict)
    #: the header's last line (its colon's), and how wide a line may grow
    #: before a check that would widen it more moves on to the next line
    #: (only ever down, and only where the header has lines left)
    last: int = 0
    widest: Optional[int] = None
    #: how wide the line reached is so far
    width: int = 0

    def to(self, line: Optional[int], wide: int = 0) -> str:
        """The line breaks to write before what runs on ``line`` (``wide``
        characters of it)."""
        if (line is None or line <= self.at) and self._overflows(wide):
            line = self.at + 1
        if line is None or line <= self.at:
            return ""
        gap, self.at = line - self.at, line
        self.width = len(self.indent)
        return "\n" * gap + self.indent

    def _overflows(self, wide: int) -> bool:
        return (
            self.widest is not None
            and self.at < self.last
            and self.width > len(self.indent)
            and self.width + wide > self.widest
        )

    def wrote(self, text: str) -> str:
        """``text``, written at the line reached: a line break inside it (a
        string over several lines) moves that on."""
        breaks = text.count("\n")
        self.at += breaks
        tail = text.rsplit("\n", 1)[-1] if breaks else text
        # (and its operator: `` and ``)
        self.width = (len(tail) if breaks else self.width + len(tail)) + 5
        return text


_LEADING_BREAK = re.compile(r"\n+[ \t]*")


def split_break(text: str) -> Tuple[str, str]:
    """``text``'s leading line breaks (from :class:`Lines`), and the rest."""
    found = _LEADING_BREAK.match(text)
    return ("", text) if found is None else (found.group(), text[found.end() :])


def join_operands(texts: Sequence[str], operator: str) -> str:
    """``texts`` joined by ``operator``, a line break before an operand
    moved before the operator (``a\\n    and b``)."""
    out = texts[0]
    for text in texts[1:]:
        brk, rest = split_break(text)
        out += f"{brk}{operator} {rest}" if brk else f" {operator} {text}"
    return out


def _parenthesized(text: str) -> str:
    brk, rest = split_break(text)
    return f"{brk}({rest})"


def render_cond(
    cond: Cond,
    readable: bool = False,
    binder: Optional[Binder] = None,
    lines: Optional[Lines] = None,
) -> str:
    """``cond`` as one expression; ``True`` when it always holds.

    ``readable``: sequence and mapping checks read ``isinstance(v,
    _spam.Sequence)``, which type checkers narrow on. ``lines``: each test
    on the line of its sub-pattern.
    """
    if isinstance(cond, Test):
        text = _readable_test(cond) if readable else cond.expr
        if lines is None:
            return text
        return lines.to(cond.line, len(text)) + lines.wrote(text)
    if isinstance(cond, All):
        if not cond.parts:
            return "True"
        return join_operands(
            [_operand(part, "and", readable, binder, lines) for part in cond.parts],
            "and",
        )
    if cond.stores:
        assert binder is not None, "stores need a binder"
        return join_operands(
            [
                _parenthesized(
                    join_operands(
                        [
                            _operand(alt, "and", readable, binder, lines),
                            store_text(stores, binder, readable),
                        ],
                        "and",
                    )
                )
                for alt, stores in zip(cond.alternatives, cond.stores)
            ],
            "or",
        )
    return join_operands(
        [_operand(alt, "or", readable, binder, lines) for alt in cond.alternatives],
        "or",
    )


def _readable_test(test: Test) -> str:
    return test.readable or test.expr


def _operand(
    cond: Cond,
    within: str,
    readable: bool = False,
    binder: Optional[Binder] = None,
    lines: Optional[Lines] = None,
) -> str:
    text = render_cond(cond, readable, binder, lines)
    if isinstance(cond, AnyOf) or (isinstance(cond, All) and within == "or"):
        return _parenthesized(text)
    if isinstance(cond, Test) and _loose(text):
        return _parenthesized(text)
    return text


_LOOSE = re.compile(r" (?:or|if) ")
_OPENING, _CLOSING = "([{", ")]}"


def _loose(text: str) -> bool:
    """Whether an ``or`` or ``if`` in ``text`` binds looser than ``and``:
    one outside all brackets and strings (a string or a bracket holding one
    is taken as such too, not worth reading further)."""
    if not _LOOSE.search(text):
        return False
    depth = 0
    for found in re.finditer(r"[][(){}'\"]| (?:or|if) ", text):
        token = found.group()
        if token in _OPENING:
            depth += 1
        elif token in _CLOSING:
            depth -= 1
        elif token in "'\"":
            return True
        elif depth == 0:
            return True
    return False


def render_value(value: Value, readable: bool = False) -> str:
    if isinstance(value, str):
        return value
    parts = []
    for cond, option in value.options[:-1]:
        test = render_cond(cond, readable)
        parts.append(f"{render_value(option, readable)} if {test} else")
    parts.append(render_value(value.options[-1][1], readable))
    return "(" + " ".join(parts) + ")"


def store_text(
    bindings: Tuple[Tuple[str, Value], ...],
    binder: Binder,
    readable: bool = False,
    lines: Optional[Lines] = None,
) -> str:
    """One truthy expression storing every binding; with ``lines``, each
    store on the line of its capture (where one store is one binding)."""
    pairs = [(name, render_value(value, readable)) for name, value in bindings]
    if binder.store_all is not None:
        stores = binder.store_all(pairs)
        if lines is not None:
            lines.wrote("".join(stores))
    elif lines is None:
        stores = [binder.store(name, value) for name, value in pairs]
    else:
        stores = [
            lines.to(lines.captures.get(name), len(store)) + lines.wrote(store)
            for name, value in pairs
            for store in [binder.store(name, value)]
        ]
    if not stores:
        return "[]"
    brk, first = split_break(stores[0])
    out = f"{brk}[{first}"
    for store in stores[1:]:
        brk, rest = split_break(store)
        out += f",{brk}{rest}" if brk else f", {store}"
    return out + "]"


def case_test(
    pattern: LoweredPattern, binder: Binder, lines: Optional[Lines] = None
) -> str:
    """The test of one case without its guard; ``"True"`` if it always matches
    and binds nothing. With ``lines``, it may start with line breaks (its
    first check is on a later line than ``case``)."""
    parts: List[str] = []
    if not is_true(pattern.cond):
        parts.append(_operand(pattern.cond, "and", binder=binder, lines=lines))
    if pattern.bindings:
        parts.append(store_text(pattern.bindings, binder, lines=lines))
    return join_operands(parts, "and") if parts else "True"


def guard_operand(guard: cst.BaseExpression, text: str) -> str:
    """The guard (``text`` its source) as an operand of ``and``: in
    parentheses unless it binds tighter than ``and`` anyway."""
    loose = isinstance(guard, (cst.IfExp, cst.Lambda, cst.NamedExpr)) or (
        isinstance(guard, cst.BooleanOperation) and isinstance(guard.operator, cst.Or)
    )
    return f"({text})" if loose and not guard.lpar else text
