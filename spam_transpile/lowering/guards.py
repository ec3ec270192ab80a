"""Which guards can run code: past them, nothing known about the subject holds.

The cases of a match statement share what they learn about the subject:
its kind, its length, its first item, the values under its keys
(:mod:`.subject_facts`, and the readable layout's ``size`` and named
values), computed once before the first case. PEP 634 lets a lowering read
these once, but a guard is user code run between two cases' tests, and may
change the subject (``case [a] if v.append(9) or False:``): a case tested
after such a guard must look at the subject again.

A guard is taken as running no code only where that is certain from its
text, in a function (where loading a name runs no code: a class body's
namespace may be any mapping, and a module may run under ``exec`` with
one): constants, names, ``not``/``and``/``or`` and ``if``-``else`` over
values whose truth costs no call (constants, the lists a star captures, the
dicts a ``**rest`` captures, ``is`` tests, comparisons of numbers),
identity tests, and ``len()`` of such a list or dict. Anything else (a
call, an attribute, an item, ``==`` on values of unknown types, ``await``)
may run code.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from spam_transpile.syntax.cstwalk import descendants, pattern_nodes

# What evaluating an expression gives, as far as running code goes:
#: a value whose truth and comparisons run no code (a number, a string, a
#: bool, None)
SCALAR = "scalar"
#: an exact list or dict (its truth and len() run no code; comparing or
#: searching it compares its items, which may)
CONTAINER = "container"
#: a value of unknown type (loading it ran no code; using it may)
UNKNOWN = "unknown"

_CONSTANTS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)
_NUMBER_COMPARISONS = (
    cst.Equal,
    cst.NotEqual,
    cst.LessThan,
    cst.LessThanEqual,
    cst.GreaterThan,
    cst.GreaterThanEqual,
)
_IDENTITY = (cst.Is, cst.IsNot)


def segments(
    guards: Sequence[Optional[cst.BaseExpression]],
    patterns: Sequence[cst.MatchPattern],
    in_function: bool,
    builtin: Callable[[str], str],
    trusts_operators: bool = False,
) -> List[Tuple[int, int]]:
    """The runs of cases ``[start, end)`` that may share facts computed
    before the run's first case: a run ends with a case whose guard may run
    code (its own test comes before its guard). ``builtin``: how the module
    spells a builtin (``len`` where no name shadows it). ``trusts_operators``
    (the readable layout, as a reviewer reads it): only a guard that calls,
    stores, awaits, yields or makes a function may change the subject, not
    an operator, an attribute or an item it reads (README, Known limits)."""
    runs: List[Tuple[int, int]] = []
    start = 0
    for index, (guard, pattern) in enumerate(zip(guards, patterns)):
        if guard is None:
            continue
        if may_change_subject(guard, pattern, in_function, builtin, trusts_operators):
            runs.append((start, index + 1))
            start = index + 1
    if start < len(guards) or not runs:
        runs.append((start, len(guards)))
    return runs


_CALLING = (
    cst.Call,
    cst.NamedExpr,
    cst.Await,
    cst.Yield,
    cst.Lambda,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def calls(guard: cst.BaseExpression) -> bool:
    """Whether ``guard`` calls, stores, awaits, yields or makes a function."""
    return any(isinstance(node, _CALLING) for node in descendants(guard))


def may_change_subject(
    guard: cst.BaseExpression,
    pattern: cst.MatchPattern,
    in_function: bool,
    builtin: Callable[[str], str],
    trusts_operators: bool = False,
) -> bool:
    """Whether ``guard`` may change the subject, so that the cases after it
    must look at it again: where it may run code (:func:`may_run_code`);
    ``trusts_operators``: as :func:`segments`."""
    if trusts_operators and not calls(guard):
        return False
    return may_run_code(guard, pattern, in_function, builtin)


def may_run_code(
    guard: cst.BaseExpression,
    pattern: cst.MatchPattern,
    in_function: bool,
    builtin: Callable[[str], str],
) -> bool:
    """Whether evaluating ``guard`` (after ``pattern`` matched) and testing
    its truth may run code other than the interpreter's own."""
    if not in_function:
        known: Dict[str, str] = {}
    else:
        known = containers_of(pattern)
    reader = _Reader(known, in_function, builtin("len") == "len")
    kind = reader.kind(guard)
    return kind is None or kind == UNKNOWN


def containers_of(pattern: cst.MatchPattern) -> Dict[str, str]:
    """The names the pattern binds to a new list or dict only: ``*rest``
    (always a list) and ``**rest`` (always a dict), bound no other way in
    any alternative."""
    return {name: CONTAINER for name in container_kinds([pattern])}


def container_kinds(patterns: Iterable[cst.MatchPattern]) -> Dict[str, str]:
    """The names ``patterns`` bind to a new container only, each with what
    it always is: ``"list"`` (``*rest``), ``"dict"`` (``**rest``), or
    ``"list or dict"`` where both bind it; not a name any of them binds
    another way."""
    kinds: Dict[str, str] = {}
    other = set()
    for pattern in patterns:
        for node in pattern_nodes(pattern):
            if isinstance(node, cst.MatchStar) and node.name is not None:
                name, kind = node.name.value, "list"
            elif isinstance(node, cst.MatchMapping) and node.rest is not None:
                name, kind = node.rest.value, "dict"
            else:
                if isinstance(node, cst.MatchAs) and node.name is not None:
                    other.add(node.name.value)
                continue
            if kinds.setdefault(name, kind) != kind:
                kinds[name] = "list or dict"
    return {name: kind for name, kind in kinds.items() if name not in other}


class _Reader:
    def __init__(self, known: Dict[str, str], names: bool, len_is_builtin: bool):
        self.known = known
        #: whether loading a name runs no code (in a function)
        self.names = names
        self.len_is_builtin = len_is_builtin

    def kind(self, node: cst.BaseExpression) -> Optional[str]:
        """What evaluating ``node`` gives (SCALAR, CONTAINER, UNKNOWN), or
        None where it may run code."""
        if isinstance(node, _CONSTANTS) or isinstance(node, cst.ConcatenatedString):
            return SCALAR
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return SCALAR
            if not self.names:
                return None
            return self.known.get(node.value, UNKNOWN)
        method = getattr(self, "_" + type(node).__name__, None)
        return None if method is None else method(node)

    def truth(self, node: cst.BaseExpression) -> bool:
        """Whether evaluating ``node`` and testing its truth run no code."""
        kind = self.kind(node)
        return kind == SCALAR or kind == CONTAINER

    def _UnaryOperation(self, node: cst.UnaryOperation) -> Optional[str]:
        if isinstance(node.operator, cst.Not):
            return SCALAR if self.truth(node.expression) else None
        return SCALAR if self.kind(node.expression) == SCALAR else None

    def _BooleanOperation(self, node: cst.BooleanOperation) -> Optional[str]:
        # The left operand's truth decides; either may be the result.
        if not self.truth(node.left):
            return None
        return _either(self.kind(node.left), self.kind(node.right))

    def _IfExp(self, node: cst.IfExp) -> Optional[str]:
        if not self.truth(node.test):
            return None
        return _either(self.kind(node.body), self.kind(node.orelse))

    def _Comparison(self, node: cst.Comparison) -> Optional[str]:
        operands = [node.left] + [c.comparator for c in node.comparisons]
        kinds = [self.kind(operand) for operand in operands]
        if any(kind is None for kind in kinds):
            return None
        for i, comparison in enumerate(node.comparisons):
            if isinstance(comparison.operator, _IDENTITY):
                continue
            if not isinstance(comparison.operator, _NUMBER_COMPARISONS):
                return None  # ``in`` compares items
            if kinds[i] != SCALAR or kinds[i + 1] != SCALAR:
                return None
        return SCALAR

    def _BinaryOperation(self, node: cst.BinaryOperation) -> Optional[str]:
        both = (self.kind(node.left), self.kind(node.right))
        return SCALAR if both == (SCALAR, SCALAR) else None

    def _Call(self, node: cst.Call) -> Optional[str]:
        func = node.func
        if (
            self.len_is_builtin
            and isinstance(func, cst.Name)
            and func.value == "len"
            and len(node.args) == 1
            and not node.args[0].star
            and node.args[0].keyword is None
            and self.kind(node.args[0].value) == CONTAINER
        ):
            return SCALAR
        return None

    def _NamedExpr(self, node: cst.NamedExpr) -> Optional[str]:
        return self.kind(node.value)


def _either(one: Optional[str], other: Optional[str]) -> Optional[str]:
    """The kind of a value that is one of two (a scalar passes for a
    container: its truth and ``len()`` run no code either)."""
    if one is None or other is None:
        return None
    if one == other:
        return one
    return UNKNOWN if UNKNOWN in (one, other) else CONTAINER
