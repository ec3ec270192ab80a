"""Opening tests that consecutive cases share, evaluated once (keep-lines).

CPython tests each case from scratch: five ``case ast.BinOp(left, op(),
right):`` cases check the class and read its fields five times. PEP 634
leaves how often such checks run unspecified, so the first case of a
group stores the outcome of the opening tests the group shares, and the
others read it::

    if (_spam_shared1 := isinstance(node, ast.BinOp) and ...) and ...:
    elif _spam_shared1 and isinstance(_spam_fields2[1], ast.Sub) and ...:

Within a group, the cases that share more tests share them through a flag
of their own, which stores the outer flag too: every case reads one flag.

This is the decision tree's shared test, laid out for the keep-lines
layout: each case test stays on its case line, so the chain stays flat.

Why it is exact:

- a later case of the group is only tested after the first one was, in
  the same run of the chain, and the first case evaluates every opening
  test up to the first that fails (``and`` stops there), so the flag tells
  whether the later case's identical opening tests would have held, and
  every temporary they store is set whenever the flag is true;
- nothing runs between the two but tests the lowering made and guards that
  run no code of the program (:func:`.guards.segments` ends the run at
  any other) and assign no variable (a ``:=`` in a guard ends the group):
  the values the opening tests read are the ones they read the first time.

The flag lives in a frame that never reads its own variables, as the other
temporaries of that layout do, and costs a store: only groups whose
opening tests call or read something are shared.
"""

from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

from spam_transpile.lowering.emit import render_cond
from spam_transpile.lowering.ir import All, Cond, LoweredPattern, Test, all_of

__all__ = ["share_opening_tests"]

# A lone equality is a literal case's test: a group of them shares no
# more than a comparison (and the literal runs of literal_switch stay as
# they are).
_LONE_KINDS = frozenset({"eq", "is"})


def share_opening_tests(
    patterns: Sequence[LoweredPattern],
    can_follow: Sequence[bool],
    new_flag: Callable[[], str],
) -> List[LoweredPattern]:
    """``patterns`` with the opening tests that consecutive cases share
    read from a flag the group's first case stores; within a group, the
    cases that share more share it through a flag of their own.
    ``can_follow[i]``: case ``i + 1`` may reuse what case ``i`` (and the
    cases before it in its group) tested; ``new_flag`` names a flag."""
    openings = [_opening(pattern.cond) for pattern in patterns]
    grouping = _Grouping(openings, can_follow, new_flag)
    grouping.visit(0, len(patterns), 0)
    return [
        _rewritten(pattern, grouping.parts[index], grouping.depth[index])
        for index, pattern in enumerate(patterns)
    ]


class _Grouping:
    """The groups of cases, nested by the number of opening tests shared."""

    def __init__(
        self,
        openings: Sequence[Tuple[Test, ...]],
        can_follow: Sequence[bool],
        new_flag: Callable[[], str],
    ) -> None:
        self.openings = openings
        self.can_follow = can_follow
        self.new_flag = new_flag
        #: per case: what its opening tests became, in order
        self.parts: List[List[Test]] = [[] for _ in openings]
        #: per case: how many of its opening tests ``parts`` stands for
        self.depth = [0] * len(openings)

    def visit(self, lo: int, hi: int, depth: int) -> None:
        """Group cases ``[lo, hi)``, which share their first ``depth``
        opening tests, by the tests that follow."""
        start = lo
        while start < hi:
            end = self._run_end(start, hi, depth)
            if end - start >= 2:
                shared = self._shared(start, end, depth)
                self._share(start, end, shared)
                self.visit(start, end, depth + len(shared))
            start = end

    def _run_end(self, start: int, hi: int, depth: int) -> int:
        """The end of the run from ``start`` whose next opening test is
        ``start``'s."""
        first = self.openings[start]
        end = start + 1
        if len(first) <= depth:
            return end
        while (
            end < hi
            and self.can_follow[end - 1]
            and len(self.openings[end]) > depth
            and _answers(first[depth], self.openings[end][depth])
        ):
            end += 1
        return end

    def _shared(self, start: int, end: int, depth: int) -> Tuple[Test, ...]:
        shared = self.openings[start][depth:]
        for index in range(start + 1, end):
            shared = _common(shared, self.openings[index][depth:])
        return shared

    def _share(self, start: int, end: int, shared: Tuple[Test, ...]) -> None:
        if not _worth_sharing(shared):
            for index in range(start, end):
                self.parts[index] += shared
        else:
            # The flag stands for all the run opens with, the outer groups'
            # flags too: each case after the first reads one flag.
            flag = self.new_flag()
            tested = render_cond(all_of(*self.parts[start], *shared))
            self.parts[start] = [Test(f"({flag} := {tested})", "shared")]
            for index in range(start + 1, end):
                self.parts[index] = [Test(flag, "shared")]
        for index in range(start, end):
            self.depth[index] += len(shared)


def _opening(cond: Cond) -> Tuple[Test, ...]:
    """The tests ``cond`` opens with, in order, up to its first part that
    is not a plain test on one line (an or-pattern, say)."""
    parts = cond.parts if isinstance(cond, All) else (cond,)
    tests: List[Test] = []
    for part in parts:
        if not isinstance(part, Test) or part.line is not None:
            break
        tests.append(part)
    return tuple(tests)


def _common(a: Tuple[Test, ...], b: Tuple[Test, ...]) -> Tuple[Test, ...]:
    """The tests of ``a`` (the group's first case's) that answer ``b``'s, up
    to the first that does not."""
    n = 0
    while n < len(a) and n < len(b) and _answers(a[n], b[n]):
        n += 1
    return a[:n]


def _answers(first: Test, later: Test) -> bool:
    """Whether the outcome of ``first`` is that of ``later``: the same test,
    or the presence test of the same attribute that stores what it read
    (``(left := getattr(node, 'left', M)) is not M``) where ``later`` only
    tests (``getattr(node, 'left', M) is not M``). A later test that stores
    a capture of its own is its own test: sharing would skip the store."""
    if first == later:
        return True
    return (
        first.kind == later.kind == "attr"
        and first.path == later.path
        and first.fact == later.fact
        and ":=" not in later.expr
    )


def _worth_sharing(shared: Tuple[Test, ...]) -> bool:
    """Whether a flag costs less than testing ``shared`` again: some test
    calls or reads something (not only compares a fact already stored)."""
    if not any(not test.cheap for test in shared):
        return False
    return len(shared) >= 2 or shared[0].kind not in _LONE_KINDS


def _rest(cond: Cond, skipped: int) -> Tuple[Cond, ...]:
    parts = cond.parts if isinstance(cond, All) else (cond,)
    return tuple(parts[skipped:])


def _rewritten(
    pattern: LoweredPattern, parts: List[Test], depth: int
) -> LoweredPattern:
    if not depth:
        return pattern
    return LoweredPattern(all_of(*parts, *_rest(pattern.cond, depth)), pattern.bindings)
