"""The readable layout's guards read the captured values where they are.

``case LineItem(quantity=q, unit_price=p) if q >= 10:`` is written as a
person writes it: ``isinstance(item, LineItem) and item.quantity >= 10``,
then ``q, p = item.quantity, item.unit_price`` in the body, instead of
storing the captures inside the test (``[q := item.quantity, ...] and q >=
10``).

CPython binds the captures before it runs the guard, and a failed guard
leaves them bound. Here they are bound only once the guard held, so this
is done only where nothing can tell the difference:

- in a function, whose variables no other code sees; not one that reads
  its frame (``locals()``, ``vars()``, ``dir()``, ``eval``, ``exec``,
  ``sys._getframe``), nor where a capture is declared ``global`` or
  ``nonlocal``;
- each capture appears in the function only in the cases of this match
  statement that capture it (which bind it before reading it) and as the
  plain target of an assignment elsewhere: no other statement reads or
  deletes it, no nested function closes over it;
- reading a value again in the guard gives what the capture held:
  - where every value is the subject itself (``case str(text) if
    text.count(":")``), read by a variable nothing rebinds while the match
    runs (a local the match does not assign, or the match's own temporary),
    the guard may call anything; it only stores nothing and makes no
    function that could read the capture later;
  - else the guard makes no call, stores nothing, and makes no function or
    comprehension (the readable layout trusts operators not to change the
    subject, :mod:`.guards`), and each value is a path from the subject
    (attributes, items, keys, ``len``): no helper call, and not a new list
    or dict (a star capture's, a ``**rest`` one's), which would be made
    again at each read.

A read elsewhere is no read of a capture where an assignment of the name
at the top of the same block, after the match statement, comes before it
(``name, port = text.split(":")`` in an earlier case's body, then
``Host(name, int(port))``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from spam_transpile.lowering.guards import calls, containers_of
from spam_transpile.lowering.ir import LoweredPattern, RestCopy, Value
from spam_transpile.lowering.scopes import capture_names_of, target_names
from spam_transpile.syntax.cstwalk import descendants

__all__ = [
    "GuardReadingValues",
    "Substitute",
    "guards_reading_values",
    "names_read",
    "used_only_where_captured",
]

_FRAME_READERS = frozenset(
    {"locals", "vars", "dir", "eval", "exec", "_getframe", "currentframe"}
)


@dataclass(frozen=True)
class GuardReadingValues:
    """A guarded case whose captures are assigned after its test, but for
    ``stored``: those the guard reads whose values cannot be read again
    (a ``**rest`` dict, ...), stored before it runs."""

    guard: cst.BaseExpression
    stored: Tuple[str, ...]


def guards_reading_values(
    function: cst.CSTNode,
    original: cst.Match,
    match: cst.Match,
    lowered: Sequence[LoweredPattern],
    stable: FrozenSet[str] = frozenset(),
) -> Dict[int, GuardReadingValues]:
    """Per guarded case of ``match`` (``original``: as the source has it, in
    ``function``) whose captures can be assigned after its test, its guard
    reading their values instead. ``stable``: the variables the subject is
    read by, which nothing rebinds while the match runs."""
    found: Dict[int, GuardReadingValues] = {}
    for index, (case, pattern) in enumerate(zip(match.cases, lowered)):
        if case.guard is None or not pattern.bindings:
            continue
        containers = frozenset(containers_of(case.pattern))
        plan = guard_reading_values(
            function, original, case.guard, pattern.bindings, stable, containers
        )
        if plan is not None:
            found[index] = plan
    return found


def guard_reading_values(
    function: cst.CSTNode,
    match: cst.Match,
    guard: cst.BaseExpression,
    bindings: Sequence[Tuple[str, Value]],
    stable: FrozenSet[str] = frozenset(),
    containers: FrozenSet[str] = frozenset(),
) -> Optional[GuardReadingValues]:
    """``guard`` (of a case of ``match``, the original node, in
    ``function``) with the captures it reads replaced by the paths they
    read, and the captures that must be stored before it runs; None where
    every capture must be."""
    quiet = not calls(guard)
    if quiet:
        guard = _rest_sizes_read(guard, bindings)
    read = names_read(guard)
    values: Dict[str, str] = {}
    stored: List[str] = []
    for name, value in bindings:
        path = isinstance(value, str) and _is_path(value)
        if path and (value in stable or quiet):
            values[name] = str(value)
        elif quiet and name in containers and _reads_of(guard, name) == 1:
            # a new list or dict, made where the guard reads it, once: the
            # guard keeps no reference to it (it makes no call)
            values[name] = str(value)
        elif name in read or not quiet:
            # (made again after a guard that runs code, it could differ)
            stored.append(name)
    deferred = [name for name, _ in bindings if name not in stored]
    if not deferred or _stores_or_defers(guard):
        return None
    if not used_only_where_captured(function, match, frozenset(deferred)):
        return None
    substituted = guard.visit(Substitute(values))
    return GuardReadingValues(substituted, tuple(stored))  # type: ignore[arg-type]


def _rest_sizes_read(
    guard: cst.BaseExpression, bindings: Sequence[Tuple[str, Value]]
) -> cst.BaseExpression:
    """``guard`` with a ``**rest`` capture it only tests for truth (``not
    rest``, ``rest and ...``) asked of the mapping's size instead: ``not
    rest`` is ``len(event) == 2`` where the pattern named two distinct
    string keys (the readable layout trusts a mapping's ``len`` to count
    the keys it has, README, Known limits)."""
    sizes = {
        name: (value.size, len(value.keys))
        for name, value in bindings
        if isinstance(value, RestCopy) and value.size
    }
    if not sizes:
        return guard
    tested = _sizes_tested(guard, sizes)
    still = names_read(tested)
    if any(name in still for name in sizes if name in names_read(guard)):
        return guard  # read otherwise too: made as CPython makes it
    return tested


def _sizes_tested(
    node: cst.BaseExpression, sizes: Dict[str, Tuple[str, int]]
) -> cst.BaseExpression:
    if isinstance(node, cst.Name) and node.value in sizes:
        size, count = sizes[node.value]
        return _parenthesized(f"{size} > {count}", node)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Not)
        and isinstance(node.expression, cst.Name)
        and node.expression.value in sizes
    ):
        size, count = sizes[node.expression.value]
        return _parenthesized(f"{size} == {count}", node)
    if isinstance(node, cst.BooleanOperation):
        return node.with_changes(
            left=_sizes_tested(node.left, sizes),
            right=_sizes_tested(node.right, sizes),
        )
    return node


def _parenthesized(text: str, node: cst.BaseExpression) -> cst.BaseExpression:
    """``text`` (a comparison: it binds tighter than ``and``/``or``) as an
    expression in ``node``'s place, with its parentheses."""
    expression = cst.parse_expression(text)
    if node.lpar:
        return expression.with_changes(lpar=node.lpar, rpar=node.rpar)
    return expression


def _reads_of(guard: cst.BaseExpression, name: str) -> int:
    """How many times ``guard`` reads the variable ``name``."""
    return sum(node.value == name for node in _variables(guard))


def _stores_or_defers(guard: cst.BaseExpression) -> bool:
    """Whether ``guard`` stores a variable, or makes a function that could
    read a capture after the match."""
    return any(
        isinstance(node, (cst.NamedExpr, cst.Lambda)) for node in descendants(guard)
    )


def names_read(node: cst.CSTNode) -> FrozenSet[str]:
    """The variable names ``node`` mentions (not attribute or keyword
    names). Where a guard reads the values, the captures the body does not
    mention need no assignment: nothing else reads them."""
    return frozenset(name.value for name in _variables(node))


def _variables(node: cst.CSTNode) -> Iterator[cst.Name]:
    """The names in ``node`` that are variables (not ``obj.attribute`` nor
    ``keyword=``)."""
    skipped: Set[int] = set()
    for inner in descendants(node):
        if isinstance(inner, cst.Attribute):
            skipped.add(id(inner.attr))
        elif isinstance(inner, cst.Arg) and inner.keyword is not None:
            skipped.add(id(inner.keyword))
        elif isinstance(inner, cst.Name) and id(inner) not in skipped:
            yield inner


def _is_path(value: str) -> bool:
    """A read from the subject: names, attributes, subscripts by constants
    and ``len(x) - k``, and ``getattr(x, "name")``."""
    try:
        tree = ast.parse(value, mode="eval").body
    except SyntaxError:
        return False
    return _path_node(tree)


def _path_node(node: ast.expr) -> bool:
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _path_node(node.value)
    if isinstance(node, ast.Subscript):
        return _path_node(node.value) and _path_node(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return _path_node(node.left) and _path_node(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return (
            node.func.id in ("len", "getattr")
            and not node.keywords
            and all(_path_node(a) for a in node.args)
        )
    return False


def used_only_where_captured(
    function: cst.CSTNode, match: cst.Match, names: FrozenSet[str]
) -> bool:
    """Whether no code of ``function`` but the cases of ``match`` that
    capture ``names`` can see what they hold (see the module's docstring);
    False also where the function reads its frame."""
    inside: Set[int] = set()
    for case in match.cases:
        if names & set(capture_names_of(case.pattern)):
            inside.update(id(node) for node in descendants(case))
    assigned: Set[int] = set()
    skipped: Set[int] = set()
    for node in descendants(function):
        if isinstance(node, cst.AssignTarget):
            assigned.update(id(name) for name in target_names(node.target))
        elif isinstance(node, (cst.IndentedBlock, cst.Module)):
            skipped.update(_reads_after_assignment(node.body, match, names))
        elif isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))  # ``obj.name`` reads no variable
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif isinstance(node, cst.MatchKeywordElement):
            skipped.add(id(node.key))  # ``Host(name=host)`` reads no ``name``
        elif isinstance(node, cst.Name) and node.value in _FRAME_READERS:
            return False
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            if names & {n.name.value for n in node.names}:
                return False
    for node in _names_outside(function, inside):
        if node.value in names and id(node) not in assigned | skipped:
            return False
    return True


def _reads_after_assignment(
    body: Sequence[cst.CSTNode], match: cst.Match, names: FrozenSet[str]
) -> Iterator[int]:
    """The reads of ``names`` in a block that an unconditional assignment
    earlier in the same block binds anew, with ``match`` not run between
    them: they cannot see what a failed guard of ``match`` left bound."""
    fresh: Set[str] = set()
    for statement in body:
        if fresh:
            # (one walk: the match holds no read after the assignment)
            inside = list(descendants(statement))
            if any(node is match for node in inside):
                return
            yield from (
                id(node)
                for node in inside
                if isinstance(node, cst.Name) and node.value in fresh
            )
        fresh |= _assigned_before_read(statement, names)


def _assigned_before_read(statement: cst.CSTNode, names: FrozenSet[str]) -> Set[str]:
    """Of ``names``, those ``statement`` binds by a plain assignment whose
    value does not read them (``name, port = text.split(":")``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    bound: Set[str] = set()
    for small in statement.body:
        if not isinstance(small, cst.Assign):
            return bound
        targets = {
            name.value
            for target in small.targets
            for name in target_names(target.target)
        }
        if targets & names_read(small.value):
            return bound
        bound |= targets & names
    return bound


def _names_outside(node: cst.CSTNode, inside: Set[int]) -> Iterator[cst.Name]:
    if id(node) in inside:
        return
    if isinstance(node, cst.Name):
        yield node
    for child in node.children:
        yield from _names_outside(child, inside)


class Substitute(cst.CSTTransformer):
    """Reads each value where the code read its variable."""

    def __init__(self, values: Dict[str, str]) -> None:
        super().__init__()
        self.values = values
        self._skip: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def leave_Name(
        self, original_node: cst.Name, updated_node: cst.Name
    ) -> cst.BaseExpression:
        value = self.values.get(original_node.value)
        if value is None or id(original_node) in self._skip:
            return updated_node
        return cst.parse_expression(value).with_changes(
            lpar=updated_node.lpar, rpar=updated_node.rpar
        )
