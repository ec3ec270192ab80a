"""Captures stored where their value is first read (keep-lines layout).

CPython stores a case's captures only once its whole pattern matched, so the
lowering reads each captured value again after the case's tests:
``isinstance(event.get("x"), int) and [x := event.get("x")]``. PEP 634
leaves the bindings of a failed match unspecified ("shouldn't assume that
variables are unchanged by a failed match"); test_patma checks CPython's
(``locals()`` after a failed alternative).

So a capture is stored where its value is first read,
``isinstance(x := event.get("x"), int)``, only where no code can tell the
difference: in a function that calls none of ``locals()``, ``vars()``,
``dir()``, ``eval()``, ``exec()``, ``breakpoint()`` or a frame getter, for a
name that is neither global, nonlocal nor used by a nested scope (a closure
made in an earlier run would see it change), and that nothing reads but the
guards and bodies of cases capturing it, each of which has stored it by then.
A debugger, or code reading the frame's variables from outside, is what may
still see a capture of a case that then failed (README, Known limits).

In such functions a capture whose value no test reads, but that its guard
reads before running any code, is stored in the guard
(:func:`store_in_guard`): ``(direction := s[1]) in EXITS``.

Which functions and names qualify: :mod:`.quiet_captures`; calls and paths
a case reads more than once, read once: :mod:`.read_once`.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Callable, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst
from spam_transpile.lowering.emit import case_test, render_value, walrus_binder
from spam_transpile.lowering.ir import All, Cond, LoweredPattern, Test, Value
from spam_transpile.lowering.reads import Reads
from spam_transpile.lowering.subject_facts import rewrite_cond, rewrite_value

__all__ = ["bind_early", "place_at_first_read", "store_in_guard"]


def bind_early(pattern: LoweredPattern, quiet: FrozenSet[str]) -> LoweredPattern:
    """``pattern`` with each capture of a ``quiet`` name stored by ``:=`` at
    the first read of its value that always runs once the test before it
    held, and read from the name after that."""
    if not quiet or not pattern.bindings:
        return pattern
    cond = pattern.cond
    parts: List[Cond] = list(cond.parts) if isinstance(cond, All) else [cond]
    bindings: List[Tuple[str, Value]] = list(pattern.bindings)
    stored: Set[str] = set()
    index = 0
    while index < len(bindings):
        name, value = bindings[index]
        # ``{k: m as d}``: once ``m`` is stored, ``d``'s value reads ``m``
        if name in quiet and isinstance(value, str) and value not in stored:
            placed = place_at_first_read(name, value, parts, bindings)
            if placed is not None:
                parts, bindings = placed
                stored.add(name)
                continue  # the binding at ``index`` is gone
        index += 1
    new_cond: Cond = All(tuple(parts)) if isinstance(cond, All) else parts[0]
    return LoweredPattern(new_cond, tuple(bindings))


def store_in_guard(
    pattern: LoweredPattern, guard: cst.BaseExpression, quiet: FrozenSet[str]
) -> Optional[Tuple[LoweredPattern, cst.Name, str]]:
    """The capture the guard reads before running any code, stored there:
    ``pattern`` without its store, the guard's name node to replace, and
    the store (``(direction := s[1])`` for ``direction in EXITS``; without
    parentheses as a call's argument).

    Before that read the guard evaluates only constants and other names
    (whose load runs no code), so the value is still read after the
    pattern's checks and before any code of the guard, as CPython reads it;
    it saves building the list of stores."""
    stores = {name for name, _ in pattern.bindings if name in quiet}
    found = _first_load(guard, frozenset(stores)) if stores else None
    if found is None:
        return None
    node, argument = found
    name = node.value
    value = render_value(dict(pattern.bindings)[name])
    reads_it = Reads(name)
    others = [(n, v) for n, v in pattern.bindings if n != name]
    if any(reads_it.search(render_value(v)) for _, v in others):
        return None  # ``{k: m as d}``: another store reads it
    store = f"{name} := {value}" if argument else f"({name} := {value})"
    return LoweredPattern(pattern.cond, tuple(others)), node, store


# Literals: evaluating them runs no code.
_CONSTANTS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


def _first_load(
    node: cst.BaseExpression, wanted: FrozenSet[str]
) -> Optional[Tuple[cst.Name, bool]]:
    """The load of a ``wanted`` name that evaluating ``node`` makes before
    running any code, and whether it is a whole positional argument."""
    if isinstance(node, cst.Name):
        return (node, False) if node.value in wanted else None
    if isinstance(node, cst.Call):
        if not isinstance(node.func, cst.Name) or node.func.value in wanted:
            return None
        if not node.args or node.args[0].star or node.args[0].keyword:
            return None
        first = node.args[0].value
        found = _first_load(first, wanted)
        return (found[0], found[0] is first) if found else None
    if isinstance(node, cst.Comparison):
        operands = [node.left, node.comparisons[0].comparator]
    elif isinstance(node, cst.BinaryOperation):
        operands = [node.left, node.right]
    elif isinstance(node, (cst.Attribute, cst.Subscript)):
        operands = [node.value]
    elif isinstance(node, cst.BooleanOperation):
        operands = [node.left]  # then its truth test runs code
    elif isinstance(node, cst.UnaryOperation):
        operands = [node.expression]
    else:
        return None
    for operand in operands:
        found = _first_load(operand, wanted)
        if found is not None:
            return found
        if not isinstance(operand, (cst.Name, *_CONSTANTS)):
            return None  # it ran code: too late
    return None


def place_at_first_read(
    name: Union[str, Callable[[], str]],
    value: str,
    parts: List[Cond],
    bindings: List[Tuple[str, Value]],
) -> Optional[Tuple[List[Cond], List[Tuple[str, Value]]]]:
    """``parts`` (of an ``All``) storing ``value`` in ``name`` where it is
    first read, if a read always runs once the parts before it held, and
    reading ``name`` after that, in ``bindings`` too (less one of ``name``);
    None where there is no such read, or a string literal spells ``value``.
    ``name`` may be a function giving it, asked only once it is placed."""
    # everything the case's test reads, in one text
    text = case_test(
        LoweredPattern(All(tuple(parts)), tuple(bindings)), walrus_binder()
    )
    reads = [Reads(value)] + [Reads(v) for v in _defaulted(value)]
    if any(_in_string(text, read) for read in reads):
        return None  # a literal spells the path: text replacement could hit it
    for at, part in enumerate(parts):
        if not isinstance(part, Test):
            continue
        for read in reads:
            site = _site(part.expr, read)
            if site is None:
                continue
            start, end = site
            if callable(name):
                name = name()
            replace = _replacer(reads[0], name)
            # What follows the first read in the text runs after it, if at
            # all: the first read runs whenever the test does.
            stored = f"{name} := {part.expr[start:end]}"
            if not _whole_argument(part.expr, start, end):
                stored = f"({stored})"
            placed = dataclasses.replace(
                part, expr=part.expr[:start] + stored + replace(part.expr[end:])
            )
            later = [rewrite_cond(p, replace) for p in parts[at + 1 :]]
            rest = [
                (other, rewrite_value(v, replace))
                for other, v in bindings
                if other != name
            ]
            return [*parts[:at], placed, *later], rest
    return None


# The opening parenthesis of a call: ``isinstance(``, ``_spam.kind(``.
_CALL_OPENS = re.compile(r"[\w)\]]\($")


def _whole_argument(expr: str, start: int, end: int) -> bool:
    """Whether ``expr[start:end]`` is a whole positional argument of a call,
    where ``:=`` needs no parentheses (``isinstance(x := v, int)``): they
    cost the parser more than the rest of the store."""
    return bool(_CALL_OPENS.search(expr, 0, start)) and expr[end : end + 1] in ",)"


def _defaulted(value: str) -> List[str]:
    """``s.get(k, _spam.MISSING)`` for ``s.get(k)``, and ``getattr(v, 'x',
    _spam.MISSING)`` for ``v.x``: the key or attribute test's read, the same
    value where the key or attribute is there."""
    found = re.fullmatch(r"(.+)\.get\((.+)\)", value)
    if found is not None:
        return [f"{found.group(1)}.get({found.group(2)}, "]
    found = re.fullmatch(r"(.+)\.([^\W\d]\w*)", value)
    if found is not None:
        return [f"getattr({found.group(1)}, {found.group(2)!r}, "]
    return []


def _replacer(read: Reads, name: str) -> Callable[[str], str]:
    return lambda text: read.sub(name, text)


# Opening parentheses and calls of plain names only: ``(type(``.
_OPENING_CALLS = re.compile(r"(?:\(|[A-Za-z_][\w.]*\()*")
_DEFERS = re.compile(r"\b(?:if|for|lambda)\b")


def _site(expr: str, read: Reads) -> Optional[Tuple[int, int]]:
    """Where in ``expr`` its first read by ``read`` is, if that read runs
    whenever ``expr`` is evaluated, and before any other."""
    found = read.search(expr)
    if found is None:
        return None
    start, end = found
    if _OPENING_CALLS.fullmatch(expr, 0, start) and not _DEFERS.search(expr):
        # ``isinstance(`` ``(type(``: the first argument of calls, which
        # runs first whenever the test does (most reads; no parse needed),
        # unless it is the value of an ``if``-``else`` or a comprehension
        return start, end
    marker = "_spam_site_"
    try:
        tree = ast.parse(expr[:start] + marker + expr[end:], mode="eval")
    except SyntaxError:
        return None
    parents = {
        id(child): node
        for node in ast.walk(tree)
        for child in ast.iter_child_nodes(node)
    }
    node: ast.AST = next(
        n for n in ast.walk(tree) if type(n) is ast.Name and n.id == marker  # type: ignore[attr-defined]
    )
    while not isinstance(node, ast.Expression):
        parent = parents[id(node)]
        if not _always_evaluates(parent, node):
            return None
        node = parent
    return start, end


def _always_evaluates(parent: ast.AST, child: ast.AST) -> bool:
    """Whether evaluating ``parent`` always evaluates ``child``."""
    if isinstance(parent, ast.BoolOp):
        return child is parent.values[0]
    if isinstance(parent, ast.IfExp):
        return child is parent.test
    if isinstance(parent, ast.Compare):
        return child is parent.left or child is parent.comparators[0]
    return isinstance(
        parent,
        (
            ast.Expression,
            ast.Call,
            ast.keyword,
            ast.Attribute,
            ast.Subscript,
            ast.BinOp,
            ast.UnaryOp,
            ast.Tuple,
            ast.List,
            ast.Set,
            ast.Dict,
            ast.NamedExpr,
            ast.Starred,
        ),
    )


# A string literal on one line (a triple-quoted one is three of these, which
# still cover its text).
_STRING = re.compile(r"""[rRbBuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")


def _in_string(text: str, read: Reads) -> bool:
    """Whether a match of ``read`` in ``text`` lies inside a string literal."""
    if not read.search(text) or not any(q in text for q in "'\""):
        return False
    if "\n" in text:
        return True  # not one line: never claim to know
    spans = [found.span() for found in _STRING.finditer(text)]
    return any(
        start < read_end and read_start < end
        for read_start, read_end in read.finditer(text)
        for start, end in spans
        if not (start >= read_start and end <= read_end)
    )
