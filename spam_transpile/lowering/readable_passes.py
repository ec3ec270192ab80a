"""Passes over the plan that the readable layout makes before printing it:
a length several cases test, computed once (:class:`SharedLength`); the
captures a type checker may type differently from one case to another;
each test's readable spelling; captures written as one unpacking."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.lowering.guards import container_kinds
from spam_transpile.lowering.runtime import MATCH_SELF_TYPES
from spam_transpile.lowering.scopes import target_names
from spam_transpile.syntax.cstwalk import descendants, pattern_nodes

from spam_transpile.lowering.decision_tree import Branch, Leaf, Node
from spam_transpile.lowering.emit import render_value

from spam_transpile.lowering.ir import (
    TRUE,
    All,
    AnyOf,
    Choice,
    Cond,
    LoweredPattern,
    RestCopy,
    Test,
    Value,
    all_of,
    is_kind_test,
    is_length_test,
    opens_with_sequence_check,
    opens_with_sequence_length,
    starts_with_length,
    tests_in,
)


class SharedLength:
    """The subject's length, computed once for cases that dispatch on it.

    Only when the first case opens with a sequence pattern on the subject:
    CPython takes the length there for any sequence, so computing it before
    the first case calls ``len()`` exactly when CPython does (PEP 634 lets
    later cases reuse it). It is -1 for anything but a sequence, so
    ``size == 2`` also says "a sequence" and the case's own
    ``isinstance(subject, Sequence)`` goes. A mapping pattern's
    ``len(subject) >= n`` keeps calling ``len()``.
    """

    def __init__(self, subject: str, name: str, check: Test, length: Test) -> None:
        self.subject = subject
        self.name = name
        taken = length.expr.rsplit(" ", 2)[0]  # ``len(subject)``, as spelled
        self.statement = f"{name} = {taken} if {check.readable or check.expr} else -1"

    @classmethod
    def of(
        cls,
        subject: str,
        patterns: Sequence[LoweredPattern],
        new_name: Callable[[], str],
        nests: bool = False,
    ) -> Optional["SharedLength"]:
        """``nests``: the decision tree may nest the cases under the tests
        they open with."""
        if not patterns:
            return None
        first = patterns[0].cond
        checks = [t for p in patterns for t in tests_in(p.cond)]
        if (
            not opens_with_sequence_length(first, subject)
            or sum(is_kind_test(t, subject, "sequence") for t in checks) < 2
        ):
            return None
        assert isinstance(first, All)
        if nests and all(
            isinstance(p.cond, All) and p.cond.parts[:2] == first.parts[:2]
            for p in patterns[1:]
        ):
            # Every case opens with the same kind and length: the decision
            # tree nests them under one ``if`` that tests both, once.
            return None
        check, length = first.parts[:2]
        assert isinstance(check, Test) and isinstance(length, Test)
        return cls(subject, new_name(), check, length)

    def measured_first(self, pattern: LoweredPattern) -> LoweredPattern:
        """``pattern`` (the first of those ``apply`` rewrote) storing the
        length where its test first reads it."""
        cond = pattern.cond
        parts = list(cond.parts) if isinstance(cond, All) else [cond]
        first = parts[0]
        assert isinstance(first, Test) and first.expr.startswith(self.name + " ")
        value = self.statement.split(" = ", 1)[1]
        parts[0] = Test(
            f"({self.name} := {value}){first.expr[len(self.name):]}",
            first.kind,
            first.path,
            first.fact,
        )
        return LoweredPattern(all_of(*parts), pattern.bindings)

    def apply_in_sequence(self, pattern: LoweredPattern) -> LoweredPattern:
        """``pattern``, known to be tested on a sequence subject, reading
        the shared length."""
        bindings = tuple(
            (name, self._value(value, True)) for name, value in pattern.bindings
        )
        return LoweredPattern(self._cond(pattern.cond, True), bindings)

    def apply(self, pattern: LoweredPattern) -> LoweredPattern:
        # Once the pattern matched, a value chosen by testing its
        # alternatives again reads the length of a sequence.
        matched = opens_with_sequence_check(pattern.cond, self.subject)
        bindings = tuple(
            (name, self._value(value, matched)) for name, value in pattern.bindings
        )
        return LoweredPattern(self._cond(pattern.cond, False), bindings)

    def _value(self, value: Value, in_sequence: bool) -> Value:
        if isinstance(value, str):
            return value
        options = value.options
        return Choice(
            tuple(
                (self._cond(cond, in_sequence), self._value(option, in_sequence))
                for cond, option in options
            )
        )

    def _cond(self, cond: Cond, in_sequence: bool) -> Cond:
        if isinstance(cond, Test):
            if in_sequence and is_length_test(cond, self.subject):
                assert isinstance(cond.fact, tuple)
                op, n = cond.fact
                return Test(f"{self.name} {op} {n}", "len", cond.path, cond.fact)
            return cond
        if isinstance(cond, AnyOf):
            alternatives = tuple(self._cond(a, in_sequence) for a in cond.alternatives)
            return AnyOf(alternatives, cond.stores)
        kept: List[Cond] = []
        for part, following in zip(cond.parts, [*cond.parts[1:], TRUE]):
            if isinstance(part, Test) and is_kind_test(part, self.subject):
                in_sequence = part.fact == "sequence"
                if in_sequence and starts_with_length(following, self.subject):
                    continue  # the shared length is -1 for anything else
            kept.append(self._cond(part, in_sequence))
        return all_of(*kept) if kept else TRUE


def read_differently(lowered: Sequence[LoweredPattern]) -> List[str]:
    """Names two or more cases capture from attributes of different classes
    (``e.left.name`` of a ``Var`` in one case, ``e.left.value`` of a ``Num``
    in another): the captures a type checker may type differently from one
    case to another.

    Left out: reads the helper answers (a sequence's items, a mapping's
    values), whose types a type checker does not know (a variable declared
    ``object`` keeps that type where such a value is assigned); and names an
    or-pattern stores in its alternatives, joined by ``or`` (a type checker
    does not narrow a variable through them).
    """
    classes_read: Dict[str, set] = {}
    cases: Dict[str, int] = {}
    in_alternatives: set = set()
    for pattern in lowered:
        classes: Dict[str, set] = {}
        for test in tests_in(pattern.cond):
            if test.kind == "isinstance":
                classes.setdefault(test.path, set()).add(test.fact)
        stores = [pair for alt in stores_in(pattern.cond) for pair in alt]
        in_alternatives.update(name for name, _ in stores)
        for name, value in pattern.bindings:
            cases[name] = cases.get(name, 0) + 1
            for text in _option_texts(value):
                owner, dot, _ = text.rpartition(".")
                if dot and owner in classes:
                    classes_read.setdefault(name, set()).update(classes[owner])
    return [
        name
        for name, found in classes_read.items()
        if cases[name] > 1 and len(found) > 1 and name not in in_alternatives
    ]


def _option_texts(value: Value) -> List[str]:
    if isinstance(value, str):
        return [value]
    return [text for _, option in value.options for text in _option_texts(option)]


def stores_in(cond: Cond) -> List[Tuple[Tuple[str, Value], ...]]:
    """What an or-pattern's alternatives store in ``cond`` itself."""
    if isinstance(cond, Test):
        return []
    if isinstance(cond, All):
        return [stores for part in cond.parts for stores in stores_in(part)]
    return [*cond.stores, *(s for alt in cond.alternatives for s in stores_in(alt))]


def spelled_readably(pattern: LoweredPattern) -> LoweredPattern:
    """``pattern`` with each test's readable spelling as its text."""

    def cond_of(cond: Cond) -> Cond:
        if isinstance(cond, Test):
            return Test(cond.readable or cond.expr, cond.kind, cond.path, cond.fact)
        if isinstance(cond, All):
            return All(tuple(cond_of(part) for part in cond.parts))
        stores = tuple(
            tuple((name, value_of(value)) for name, value in alternative)
            for alternative in cond.stores
        )
        return AnyOf(tuple(cond_of(a) for a in cond.alternatives), stores)

    def value_of(value: Value) -> Value:
        if isinstance(value, str):
            return value
        return Choice(tuple((cond_of(c), value_of(o)) for c, o in value.options))

    return LoweredPattern(
        cond_of(pattern.cond),
        tuple((name, value_of(value)) for name, value in pattern.bindings),
    )


def assignments(bindings: Sequence[Tuple[str, Value]], together: int) -> List[str]:
    """The statements that store ``bindings``: one assignment for each run
    of up to three that fits in ``together`` characters (``x, y =
    shape.get("x"), shape.get("y")``), in order; a ``**rest`` copy as CPython
    makes it, ``rest = dict(event)`` then ``del rest["type"]``."""
    copies = [(n, v) for n, v in bindings if isinstance(v, RestCopy) and v.keys]
    if copies:
        # (the copy is made after the items it goes without are read)
        plain = [(n, v) for n, v in bindings if (n, v) not in copies]
        copied = assignments(plain, together) if plain else []
        for name, value in copies:
            assert isinstance(value, RestCopy)
            copied.append(f"{name} = {value.copy}")
            copied.append("del " + ", ".join(f"{name}[{key}]" for key in value.keys))
        return copied
    pairs = [(name, render_value(value, readable=True)) for name, value in bindings]
    out: List[str] = []
    run: List[Tuple[str, str]] = []
    for pair in pairs:
        if run and not _together([*run, pair], together):
            out.append(_assignment(run))
            run = []
        run.append(pair)
    if run:
        out.append(_assignment(run))
    return out


def _together(pairs: Sequence[Tuple[str, str]], width: int) -> bool:
    """Whether ``pairs`` read well as one assignment: three at most, no
    conditional value, within ``width``."""
    line = _assignment(pairs)
    return len(pairs) <= 3 and len(line) <= width and " if " not in line


def _assignment(pairs: Sequence[Tuple[str, str]]) -> str:
    if len(pairs) == 1:
        name, text = pairs[0]
        return f"{name} = {unparenthesized(text)}"
    names, values = zip(*pairs)
    return f"{', '.join(names)} = {', '.join(values)}"


def unparenthesized(text: str) -> str:
    if text.startswith("(") and text.endswith(")") and " if " in text:
        return text[1:-1]
    return text


def unpacking(
    pattern: cst.MatchPattern,
    subject: str,
    builtin: Callable[[str], str] = lambda name: name,
    checked: Callable[[str], bool] = lambda name: True,
) -> Optional[str]:
    """``a, *rest = subject`` when a sequence pattern only captures (an
    item, or an item a builtin class checks, ``int(major)``, where
    ``checked`` allows that name); ``rest = list(subject)`` for a lone star
    (``builtin``: how the module spells a builtin)."""
    if not isinstance(pattern, (cst.MatchList, cst.MatchTuple)) or not pattern.patterns:
        return None
    targets = []
    for element in pattern.patterns:
        if isinstance(element, cst.MatchStar):
            if element.name is None:
                return None
            targets.append("*" + element.name.value)
            continue
        name = _item_capture(element.value, builtin)
        if name is None or (
            not isinstance(element.value, cst.MatchAs) and not checked(name)
        ):
            return None
        targets.append(name)
    text = ", ".join(targets)
    if len(targets) == 1 and text.startswith("*"):
        return f"{text[1:]} = {builtin('list')}({subject})"
    if len(targets) == 1:
        text += ","
    return f"{text} = {subject}"


def _item_capture(
    pattern: cst.MatchPattern, builtin: Callable[[str], str]
) -> Optional[str]:
    """The name ``pattern`` stores the item it matches in: ``name``, or
    ``int(name)`` of a builtin class that matches its instances themselves."""
    if isinstance(pattern, cst.MatchAs) and pattern.pattern is None:
        return pattern.name.value if pattern.name is not None else None
    if (
        isinstance(pattern, cst.MatchClass)
        and isinstance(pattern.cls, cst.Name)
        and pattern.cls.value in MATCH_SELF_TYPES
        and builtin(pattern.cls.value) == pattern.cls.value
        and len(pattern.patterns) == 1
        and not pattern.kwds
    ):
        return _item_capture(pattern.patterns[0].value, builtin)
    return None


def measured_in_branches(
    nodes: Sequence[Node], subject: str, new_name: Callable[[], str]
) -> List[Node]:
    """``nodes`` with each branch on the subject's sequence check, whose
    cases test its length, measuring it once as its first statement
    (``size = len(instr)``) for those cases to compare. Only where the
    branch's first case tests the length first: ``len()`` is then called
    exactly when CPython first calls it (PEP 634 lets the others reuse it)."""
    return [
        _measured(node, subject, new_name) if isinstance(node, Branch) else node
        for node in nodes
    ]


def _measured(branch: Branch, subject: str, new_name: Callable[[], str]) -> Branch:
    if not any(is_kind_test(t, subject, "sequence") for t in branch.tests) or any(
        is_length_test(t, subject) for t in branch.tests
    ):
        inner = measured_in_branches(branch.children, subject, new_name)
        return replace(branch, children=tuple(inner))
    lengths = sum(
        is_length_test(test, subject)
        for node in branch.children
        for test in _tests_under(node)
    )
    length = _opening_length(branch.children[0], subject)
    if length is None or lengths < 2:
        return branch
    check = next(t for t in branch.tests if is_kind_test(t, subject, "sequence"))
    shared = SharedLength(subject, new_name(), check, length)
    taken = length.expr.rsplit(" ", 2)[0]
    children = tuple(_reading(node, shared) for node in branch.children)
    return replace(
        branch, children=children, setup=(f"{shared.name} = {taken}", *branch.setup)
    )


def _opening_length(node: Node, subject: str) -> Optional[Test]:
    """The length test the first case under ``node`` opens with, if any."""
    if isinstance(node, Branch):
        first = node.tests[0]
        return first if is_length_test(first, subject) else None
    if not starts_with_length(node.pattern.cond, subject):
        return None
    return next(t for t in tests_in(node.pattern.cond) if is_length_test(t, subject))


def _tests_under(node: Node) -> List[Test]:
    if isinstance(node, Leaf):
        return list(tests_in(node.pattern.cond))
    return [*node.tests, *(t for child in node.children for t in _tests_under(child))]


def _reading(node: Node, shared: SharedLength) -> Node:
    if isinstance(node, Leaf):
        return replace(node, pattern=shared.apply_in_sequence(node.pattern))
    tests = tuple(
        shared.apply_in_sequence(LoweredPattern(t, ())).cond for t in node.tests
    )
    children = tuple(_reading(child, shared) for child in node.children)
    return replace(node, tests=tests, children=children)  # type: ignore[arg-type]


def typed_by_class_and_assigned(match: cst.Match) -> List[str]:
    """Names a case captures with a class check (``str(name)``, ``int() as
    n``) that another case's body assigns: a type checker types the
    variable by whichever comes first in the text, and may find the other
    incompatible (``name, port = text.split(":")`` in one body, ``int(port)``
    in a later pattern), where it typed each capture apart."""
    checked: Dict[str, set] = {}
    assigned: Dict[str, set] = {}
    for index, case in enumerate(match.cases):
        for node in pattern_nodes(case.pattern):
            name = _class_checked_capture(node)
            if name is not None:
                checked.setdefault(name, set()).add(index)
        for node in descendants(case.body):
            if isinstance(node, cst.AssignTarget):
                for target in target_names(node.target):
                    assigned.setdefault(target.value, set()).add(index)
    return [
        name for name, indexes in checked.items() if assigned.get(name, set()) - indexes
    ]


def _class_checked_capture(node: cst.CSTNode) -> Optional[str]:
    if (
        isinstance(node, cst.MatchAs)
        and node.name is not None
        and isinstance(node.pattern, cst.MatchClass)
    ):
        return node.name.value
    if isinstance(node, cst.MatchClass) and len(node.patterns) == 1:
        only = node.patterns[0].value
        if isinstance(only, cst.MatchAs) and only.pattern is None and only.name:
            return only.name.value
    return None


def container_captures(match: cst.Match) -> Dict[str, str]:
    """The captures of ``match`` that always hold a new ``list`` (``*rest``)
    or ``dict`` (``**rest``), bound no other way by any case: declared with
    that type, a type checker reads them as what they are."""
    kinds = container_kinds(case.pattern for case in match.cases)
    return {name: kind for name, kind in kinds.items() if kind in ("list", "dict")}


def merged_same_bodies(
    chain: Optional[Union[cst.If, cst.Else]], raw: Callable[[str], cst.Name]
) -> Optional[Union[cst.If, cst.Else]]:
    """``chain`` with consecutive branches whose bodies are the same code
    merged into one, their tests joined by ``or`` (``elif key == "stop"
    and ...: pass`` twice), as a person writes them (ruff's SIM114). Exact:
    ``or`` tries the second test only where the first failed, as the chain
    did. Not across comments before a branch. ``raw``: makes the test."""
    if not isinstance(chain, cst.If):
        return chain
    rest = merged_same_bodies(chain.orelse, raw)
    while (
        isinstance(rest, cst.If)
        and not rest.leading_lines
        and _code(rest.body) == _code(chain.body)
    ):
        test = f"{_operand(_code(chain.test))} or {_operand(_code(rest.test))}"
        chain = chain.with_changes(test=raw(test))
        rest = rest.orelse
    return chain.with_changes(orelse=rest)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _operand(test: str) -> str:
    """``test`` as an operand of ``or``, parenthesized where it is more
    than one term (for the reader: ``and`` binds tighter anyway); an
    ``or`` of terms is one already (``or`` groups either way)."""
    try:
        tree = ast.parse(test.strip(), mode="eval").body
    except SyntaxError:
        return f"({test})"
    if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.Or):
        return test
    if isinstance(tree, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda)):
        return f"({test})"
    return test
