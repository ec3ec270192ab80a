"""Cases that open with the same test, nested under it (the readable layout).

A person writing an evaluator for 3.9 tests ``isinstance(e, Bin)`` once and
then the operator inside, rather than repeating the class test on every
``elif``. Consecutive cases whose conditions open with the same test become
a :class:`Branch` on that test, holding what each case has left to test;
the same holds again inside it (Maranget's decision trees, restricted to
consecutive cases so the order of the cases is never changed).

Nesting skips the shared test for the cases after the first, and when the
test holds but no case under it matches, control leaves the whole chain.
It is exact only where CPython could not have matched a later case then:

- no case of the group but the last has a guard that may run code (such a
  guard could change the subject, and CPython tests the shared test again);
  none but the last always matches once the test held (a group ends with
  such a case, and the cases after it start a group of their own);
- and after the group either no case is left, or the group's last case
  always matches once the test held, or every later case has a test that
  cannot hold together with the shared one (two lengths of one path, a
  sequence and a mapping check of one path), with no guard in the group
  that may run code;
- or else the only case after the group always matches and its body is one
  short line: the group nests with a copy of that body as its ``else``;
- or else the bodies of the group's cases and of every case before them
  always leave (``return``, ``raise``, ``break``, ``continue``): the branch
  then ends its ``if``/``elif`` chain (:attr:`Branch.ends_chain`) and the
  later cases follow it as statements of their own, tried when no case
  under it matched, as a person writes an evaluator whose cases return.

PEP 634 leaves how often ``isinstance``, ``len``, items, attributes and
``__eq__`` are called unspecified: testing the shared one once is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import AbstractSet, Callable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.lowering.bodies import leaving_cases, one_short_line
from spam_transpile.lowering.guards import may_change_subject
from spam_transpile.lowering.names import is_builtin_class
from spam_transpile.lowering.ir import (
    LITERAL,
    ONE_OF,
    TRUE,
    All,
    Cond,
    LoweredPattern,
    Test,
    all_of,
    is_true,
)

__all__ = ["Branch", "Leaf", "Node", "bound_alike", "decision_tree", "tree_of_cases"]


@dataclass(frozen=True)
class Leaf:
    """One case: its index, and what it has left to test."""

    index: int
    pattern: LoweredPattern
    #: a second copy of a last case that always matches, as the ``else``
    #: of a branch (see :func:`decision_tree`)
    copy: bool = False
    #: the alternative of the case's or-pattern it is, where the case is
    #: written once per alternative (:mod:`.split_alternatives`)
    alternative: Optional[int] = None


@dataclass(frozen=True)
class Branch:
    """``if test and ...:`` with the cases under it, which all opened with
    these tests (one branch for a run of them no case tells apart)."""

    tests: Tuple[Test, ...]
    children: Tuple["Node", ...]
    #: exact only as the last of its chain (the cases before it and under
    #: it always leave): the nodes after it start a new statement
    ends_chain: bool = False
    #: statements its body starts with (``size = len(instr)``)
    setup: Tuple[str, ...] = ()

    @property
    def index(self) -> int:
        """The first case under it (whose leading lines it takes)."""
        return self.children[0].index


Node = Union[Leaf, Branch]


@dataclass(frozen=True)
class _Cases:
    """What the tree needs to know of the cases besides their patterns."""

    #: indexes of the cases with a guard
    guarded: AbstractSet[int]
    #: those whose guard may run code (:func:`.guards.may_run_code`)
    code_guards: AbstractSet[int]
    #: how many cases, from the first, have bodies that always leave
    leaving: int
    #: cases whose body is one short line, which may be written twice
    small: AbstractSet[int] = frozenset()
    #: the builtin classes the module does not shadow, of those asked
    builtin_class: Callable[[str], bool] = lambda name: False
    #: paths no guard can change (a declared ``NamedTuple``'s fields, read
    #: from a variable nothing rebinds while the match runs)
    stable_paths: AbstractSet[str] = frozenset()
    #: whether a case's tests, written as one ``if`` that many branches
    #: deep, are too wide for a line: then a case alone nests under its
    #: first test where that is exact (see line_fit.py)
    too_wide: Callable[[Leaf, int], bool] = lambda leaf, depth: False


def decision_tree(
    patterns: Sequence[LoweredPattern],
    guarded: AbstractSet[int],
    code_guards: AbstractSet[int],
    leaving: int = 0,
    small: AbstractSet[int] = frozenset(),
    builtin: Optional[Callable[[str], str]] = None,
    stable_paths: AbstractSet[str] = frozenset(),
    too_wide: Callable[[Leaf, int], bool] = lambda leaf, depth: False,
) -> List[Node]:
    """The cases of one match statement as a list of nodes, in case order.

    ``guarded``: the indexes of cases with a guard; ``code_guards``: those
    whose guard may run code (:func:`.guards.may_run_code`); ``leaving``:
    how many cases, from the first, have bodies that always leave;
    ``small``: the cases whose body is one short line. Where the only case
    after a group always matches and is small, the group nests with a copy
    of it as its ``else`` (``else: raise ValueError(op)`` inside and
    after), as a person writes a dispatch that ends with a default.
    """
    leaves = [Leaf(index, pattern) for index, pattern in enumerate(patterns)]
    cases = _Cases(
        guarded,
        code_guards,
        leaving,
        small,
        stable_paths=stable_paths,
        too_wide=too_wide,
    )
    if builtin is not None:
        cases = replace(cases, builtin_class=_builtin_classes(builtin))
    return _nested(leaves, cases)


def _builtin_classes(builtin: Callable[[str], str]) -> Callable[[str], bool]:
    """Whether a name is a builtin class (not ``object``) that the module
    spells as it is (``builtin``: how the module spells a builtin)."""
    return lambda name: name != "object" and is_builtin_class(name, builtin)


def tree_of_cases(
    cases: Sequence[cst.MatchCase],
    lowered: Sequence[LoweredPattern],
    in_function: bool,
    builtin: Callable[[str], str],
    trusts_operators: bool = False,
    stable_paths: AbstractSet[str] = frozenset(),
    too_wide: Callable[[Leaf, int], bool] = lambda leaf, depth: False,
) -> List[Node]:
    """:func:`decision_tree` of one match statement's cases, with what it
    needs to know of their guards and bodies. ``builtin``: how the module
    spells a builtin; ``trusts_operators``: as :func:`.guards.segments`;
    ``stable_paths``: as :attr:`_Cases.stable_paths`."""
    guarded = {i for i, case in enumerate(cases) if case.guard is not None}
    code_guards = {
        i
        for i in guarded
        if may_change_subject(
            cases[i].guard,  # type: ignore[arg-type]
            cases[i].pattern,
            in_function,
            builtin,
            trusts_operators,
        )
    }
    leaving = leaving_cases(cases)
    small = {i for i, case in enumerate(cases) if one_short_line(case.body)}
    return decision_tree(
        lowered, guarded, code_guards, leaving, small, builtin, stable_paths, too_wide
    )


def _nested(leaves: Sequence[Leaf], cases: _Cases, depth: int = 0) -> List[Node]:
    out: List[Node] = []
    leaves = list(leaves)
    start = 0
    while start < len(leaves):
        test, end, how = _group_at(leaves, start, cases, depth)
        if how is None and end == start + 1:
            # (reordered only where the reordered cases then nest)
            moved = leaves[:start] + _shared_test_first(leaves[start:], cases)
            test, end, how = _group_at(moved, start, cases, depth)
            if how is not None:
                leaves = moved
        group, after = leaves[start:end], leaves[end:]
        if test is not None and how is not None:
            rests = [Leaf(leaf.index, _after_first(leaf.pattern)) for leaf in group]
            if how == _WITH_COPY:
                rests.append(Leaf(after[0].index, after[0].pattern, copy=True))
            children = tuple(_nested(rests, cases, depth + 1))
            tests: Tuple[Test, ...] = (test,)
            if len(children) == 1 and isinstance(children[0], Branch):
                # the cases share the next test too: one ``if`` for both
                tests += children[0].tests
                children = children[0].children
            out.append(Branch(tests, children, ends_chain=how == _ENDS_CHAIN))
        else:
            out.extend(group)
        start = end
    return out


def _group_at(
    leaves: Sequence[Leaf], start: int, cases: _Cases, depth: int
) -> Tuple[Optional[Test], int, Optional[str]]:
    """The test the cases from ``start`` open with, where the run of those
    sharing it ends, and how it nests (None: it does not)."""
    test = first_test(leaves[start].pattern.cond)
    end = start + 1
    while (
        test is not None
        and end < len(leaves)
        and first_test(leaves[end].pattern.cond) == test
        and not _closes(leaves[end - 1], cases, test)
    ):
        end += 1
    if test is None:
        return None, end, None
    group = leaves[start:end]
    return test, end, _nesting(test, group, leaves[end:], cases, depth)


def _shared_test_first(leaves: List[Leaf], cases: _Cases) -> List[Leaf]:
    """Where the first two cases open with different tests but share a
    later one that may be tested first (:func:`_movable`), that test
    first in them and in the cases after them that share it too, so that
    they nest under it: ``if isinstance(e.args, Sequence) ...:`` then
    ``if e.func == "abs" and len(e.args) == 1:``. PEP 634 leaves the order
    of these checks to the implementation."""
    if len(leaves) < 2:
        return leaves
    first, second = (first_test(leaf.pattern.cond) for leaf in leaves[:2])
    if first is None or first == second:
        return leaves
    shared = next(
        (
            test
            for test in _parts(leaves[0].pattern.cond)[1:]
            if isinstance(test, Test)
            and _movable(test, leaves[0].pattern.cond)
            and _movable(test, leaves[1].pattern.cond)
        ),
        None,
    )
    if shared is None:
        return leaves
    out = list(leaves)
    for at, leaf in enumerate(leaves):
        if (at and _closes(leaves[at - 1], cases, shared)) or not _movable(
            shared, leaf.pattern.cond
        ):
            break
        out[at] = Leaf(leaf.index, _with_first(leaf.pattern, shared), leaf.copy)
    return out


def _parts(cond: Cond) -> Tuple[Cond, ...]:
    return cond.parts if isinstance(cond, All) else (cond,)


def _movable(test: Test, cond: Cond) -> bool:
    """Whether ``cond`` holds ``test`` among its own parts, a check with no
    effect (a class or kind check) that no part before it makes possible:
    none reads into its path, or its path into theirs (``e.args`` needs
    ``e`` checked first, ``v[0]`` the length of ``v``)."""
    parts = _parts(cond)
    if test not in parts or test.kind not in ("isinstance", "kind") or not test.path:
        return False
    before = parts[: parts.index(test)]
    return all(
        isinstance(part, Test)
        and part.path
        and part.path not in test.path
        and test.path not in part.path
        for part in before
    )


def _with_first(pattern: LoweredPattern, test: Test) -> LoweredPattern:
    parts = _parts(pattern.cond)
    rest = tuple(part for part in parts if part != test)
    return LoweredPattern(all_of(test, *rest), pattern.bindings)


def first_test(cond: Cond) -> Optional[Test]:
    """The test ``cond`` opens with, if it opens with one (not an or)."""
    if isinstance(cond, Test):
        return cond
    if isinstance(cond, All) and cond.parts and isinstance(cond.parts[0], Test):
        return cond.parts[0]
    return None


def _after_first(pattern: LoweredPattern) -> LoweredPattern:
    cond = pattern.cond
    rest = all_of(*cond.parts[1:]) if isinstance(cond, All) else TRUE
    return LoweredPattern(rest, pattern.bindings)


def _closes(leaf: Leaf, cases: _Cases, test: Test) -> bool:
    """Nothing after ``leaf`` can share its group: its guard may run code
    (the cases after it test the shared test again: it may answer
    otherwise, but on a stable path), or it always matches once the
    shared test held."""
    return _may_change(leaf, cases, test) or _always(leaf, cases.guarded)


def _may_change(leaf: Leaf, cases: _Cases, test: Test) -> bool:
    """Whether ``leaf``'s guard may run code that changes what ``test``
    answers."""
    literal = isinstance(test.fact, tuple) and test.fact[:1] in ((LITERAL,), (ONE_OF,))
    by_value = test.kind == "is" or (test.kind == "eq" and literal)
    stable = test.path in cases.stable_paths and by_value
    return leaf.index in cases.code_guards and not stable


def _always(leaf: Leaf, guarded: AbstractSet[int]) -> bool:
    """Matches once its first test held."""
    return leaf.index not in guarded and is_true(_after_first(leaf.pattern).cond)


_IN_CHAIN = "in chain"
_ENDS_CHAIN = "ends chain"
_WITH_COPY = "with a copy of the last case"


def _nesting(
    test: Test,
    group: Sequence[Leaf],
    after: Sequence[Leaf],
    cases: _Cases,
    depth: int = 0,
) -> Optional[str]:
    """How ``group`` nests under ``test`` exactly: within its chain, as the
    last of its chain, or (None) not at all. A case alone nests only where
    its tests are too wide for one line (:attr:`_Cases.too_wide`), and
    within its chain."""
    if len(group) < 2:
        # (nested with nothing after it in its ``if``, a case alone is two
        # ``if``s a linter asks to join again: only within its chain)
        alone = after and _alone_nests(group[0], cases, depth)
        if not alone or _may_change(group[0], cases, test):
            return None
        together = all(_excludes(test, leaf.pattern.cond, cases) for leaf in after)
        return _IN_CHAIN if together else None
    assert not any(_closes(leaf, cases, test) for leaf in group[:-1])
    if not after or _always(group[-1], cases.guarded):
        return _IN_CHAIN
    if not _may_change(group[-1], cases, test) and all(
        _excludes(test, leaf.pattern.cond, cases) for leaf in after
    ):
        return _IN_CHAIN
    if group[-1].index < cases.leaving:
        return _ENDS_CHAIN
    last = after[0]
    if (
        len(after) == 1
        and not last.copy
        and last.index in cases.small
        and last.index not in cases.guarded
        and is_true(last.pattern.cond)
    ):
        return _WITH_COPY
    return None


def _alone_nests(leaf: Leaf, cases: _Cases, depth: int) -> bool:
    """Whether a case alone under its first test nests there: where it
    has more to test and is too wide for one line."""
    rest = _after_first(leaf.pattern).cond
    return not is_true(rest) and not leaf.copy and cases.too_wide(leaf, depth)


def _excludes(test: Test, cond: Cond, cases: _Cases) -> bool:
    """Some test ``cond`` needs cannot hold where ``test`` holds."""
    parts = cond.parts if isinstance(cond, All) else (cond,)
    return any(
        isinstance(part, Test) and disjoint(test, part, cases.builtin_class)
        for part in parts
    )


def disjoint(
    one: Test, other: Test, builtin_class: Callable[[str], bool] = lambda n: False
) -> bool:
    """``one`` and ``other`` cannot both hold for one value of their path:
    two lengths, a sequence and a mapping check (CPython gives a class one
    of the two flags at most, and the helper answers as it does), or a
    singleton and a test no singleton passes (:func:`_singleton_excludes`;
    ``builtin_class``: whether a name is a builtin class, unshadowed)."""
    if one.path != other.path:
        return False
    if one.kind == "is" or other.kind == "is":
        single, test = (one, other) if one.kind == "is" else (other, one)
        return _singleton_excludes(single, test, builtin_class)
    if one.kind != other.kind:
        return False
    if one.kind == "kind":
        return {one.fact, other.fact} == {"sequence", "mapping"}
    if one.kind == "len":
        return _lengths_disjoint(one.fact, other.fact)
    return False


def _singleton_excludes(
    single: Test, other: Test, builtin_class: Callable[[str], bool]
) -> bool:
    """``x is None`` (``True``, ``False``) and ``other`` cannot both hold:
    another singleton; a sequence or mapping check (no singleton is
    either); ``isinstance`` with a builtin class (but ``int`` and ``bool``
    for ``True`` and ``False``); ``==`` a literal (``None`` equals none,
    ``True`` and ``False`` no text)."""
    value = single.fact
    if not isinstance(value, str):
        return False
    if other.kind == "is":
        return isinstance(other.fact, str) and other.fact != value
    if other.kind == "kind":
        return True
    if other.kind == "isinstance" and isinstance(other.fact, str):
        numeric = other.fact in ("int", "bool")
        return builtin_class(other.fact) and (value == "None" or not numeric)
    if other.kind == "eq" and isinstance(other.fact, tuple) and len(other.fact) == 2:
        how, literal = other.fact
        if how == LITERAL:
            return value == "None" or literal in ("text", "bytes")
    return False


def _lengths_disjoint(one: object, other: object) -> bool:
    if not (isinstance(one, tuple) and isinstance(other, tuple)):
        return False
    (op1, n1), (op2, n2) = one, other
    if op1 == "==" and op2 == "==":
        return bool(n1 != n2)
    if op1 == "==" and op2 == ">=":
        return bool(n1 < n2)
    if op1 == ">=" and op2 == "==":
        return bool(n2 < n1)
    return False


def bound_alike(branch: Branch) -> Tuple[Tuple[str, object], ...]:
    """The captures every case under ``branch`` stores alike, where they are
    told apart only by their guards (``case Var(name) if name in scope:``
    then ``case Var(name):``): stored once, first thing in the branch, as
    CPython stores them before each guard. Empty where that does not hold."""
    leaves = branch.children
    if len(leaves) < 2 or not all(isinstance(leaf, Leaf) for leaf in leaves):
        return ()
    first = leaves[0].pattern.bindings  # type: ignore[union-attr]
    for leaf in leaves:
        assert isinstance(leaf, Leaf)
        if leaf.copy or not is_true(leaf.pattern.cond):
            return ()
        if leaf.pattern.bindings != first:
            return ()
    return first
