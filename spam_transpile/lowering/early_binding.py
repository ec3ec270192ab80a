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
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import (
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
    Union,
)

import libcst as cst

from spam_transpile.syntax.cstwalk import children, pattern_nodes
from spam_transpile.lowering.emit import case_test, render_value, walrus_binder
from spam_transpile.lowering.ir import All, Cond, LoweredPattern, Test, Value, tests_in
from spam_transpile.lowering.names import TEMP_PREFIX
from spam_transpile.lowering.reads import Reads
from spam_transpile.lowering.scopes import capture_names_of
from spam_transpile.lowering.subject_facts import rewrite_cond, rewrite_value

__all__ = [
    "bind_early",
    "place_at_first_read",
    "quiet_captures",
    "read_calls_once",
    "may_read_frames",
    "read_paths_once",
    "reads_own_frame",
    "store_in_guard",
]

# Calls that can read the function's variables by name, and attributes that
# lead to a frame's (a traceback's frame, a frame's caller, its locals).
FRAME_READERS = frozenset(
    ["locals", "vars", "dir", "eval", "exec", "breakpoint", "_getframe"]
    + ["currentframe", "stack", "trace", "getouterframes", "getinnerframes"]
)
FRAME_ATTRIBUTES = frozenset(["f_locals", "f_back", "tb_frame", "gi_frame", "cr_frame"])
_FRAME_WORDS = re.compile(
    r"\b(?:" + "|".join(sorted(FRAME_READERS | FRAME_ATTRIBUTES)) + r")\b"
)


def may_read_frames(source: str) -> bool:
    """Whether a function of the module ``source`` may read its own frame:
    it would spell one of these names (a cheap test before any walk)."""
    return _FRAME_WORDS.search(source) is not None


_NESTED = (
    cst.FunctionDef,
    cst.ClassDef,
    cst.Lambda,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Nodes with no name, call or attribute anywhere inside: not entered.
_NO_NAMES = frozenset(
    [
        cst.SimpleWhitespace,
        cst.ParenthesizedWhitespace,
        cst.TrailingWhitespace,
        cst.EmptyLine,
        cst.Newline,
        cst.Comment,
        cst.Comma,
        cst.Semicolon,
        cst.Colon,
        cst.Dot,
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
        cst.SimpleString,
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.AssignEqual,
        cst.Pass,
    ]
)
_NOT_READ = (cst.Import, cst.ImportFrom, cst.Break, cst.Continue)


def quiet_captures(
    function: cst.FunctionDef, reads_frame: Optional[bool] = None
) -> FrozenSet[str]:
    """The names captured in ``function``'s own match statements that may be
    stored before their case has matched (see the module's docstring).

    LibCST's tree, walked by its fields: the standard tree has no match
    statements before 3.10, and the output must not depend on the
    interpreter running the tool. ``reads_frame``: :func:`reads_own_frame`
    of the function, when the caller knows it."""
    if reads_own_frame(function) if reads_frame is None else reads_frame:
        return frozenset()
    walk = _Walk()
    walk.node(function.body, frozenset())
    return frozenset(walk.captured - walk.spoiled)


def reads_own_frame(function: cst.FunctionDef) -> bool:
    """Whether ``function``, or a scope in it, calls ``locals()``, ``vars()``,
    ``dir()``, ``eval()``, ``exec()``, ``breakpoint()`` or a frame getter."""
    return any(_reads_frame(node) for node in _named_parts(function.body))


def _named_parts(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and the nodes inside it, but for those holding no name (a
    string is entered: ``getattr(frame, "f_locals")``)."""
    yield node
    for child in children(node):
        if type(child) not in _NO_NAMES or type(child) is cst.SimpleString:
            yield from _named_parts(child)


def _reads_frame(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Call):
        return _called(node) in FRAME_READERS
    if isinstance(node, cst.Attribute):
        return node.attr.value in FRAME_ATTRIBUTES
    if isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
        return _FRAME_WORDS.search(node.value) is not None
    return False


class _Walk:
    """Which names are read where: ``bound`` holds the names the cases
    around the node capture (stored already when it runs)."""

    def __init__(self) -> None:
        self.captured: Set[str] = set()
        self.spoiled: Set[str] = set()

    def node(self, node: cst.CSTNode, bound: FrozenSet[str]) -> None:
        kind = type(node)
        if kind in _NO_NAMES:
            return
        method = _METHODS.get(kind)
        if method is not None:
            method(self, node, bound)
            return
        if kind in _NESTED:
            self.nested(node, bound)
        elif kind not in _NOT_READ:
            for child in children(node):
                self.node(child, bound)

    def name(self, node: cst.Name, bound: FrozenSet[str]) -> None:
        if node.value not in bound:
            self.spoiled.add(node.value)

    def attribute(self, node: cst.Attribute, bound: FrozenSet[str]) -> None:
        self.node(node.value, bound)  # ``.attr`` names no variable

    def call(self, node: cst.Call, bound: FrozenSet[str]) -> None:
        self.node(node.func, bound)
        for arg in node.args:
            self.node(arg.value, bound)  # a keyword names no variable

    def target(self, node: cst.CSTNode, bound: FrozenSet[str]) -> None:
        """An assignment's target: a name is stored, not read."""
        if isinstance(node, cst.Name):
            return
        if isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self.target(element.value, bound)
        elif isinstance(node, cst.StarredElement):
            self.target(node.value, bound)
        else:  # ``a.b = ``, ``a[i] = ``: reads ``a`` and ``i``
            self.node(node, bound)

    def assign(self, node: cst.Assign, bound: FrozenSet[str]) -> None:
        for target in node.targets:
            self.target(target.target, bound)
        self.node(node.value, bound)

    def ann_assign(self, node: cst.AnnAssign, bound: FrozenSet[str]) -> None:
        self.target(node.target, bound)
        self.node(node.annotation, bound)
        if node.value is not None:
            self.node(node.value, bound)

    def for_(self, node: cst.For, bound: FrozenSet[str]) -> None:
        self.target(node.target, bound)
        for part in (node.iter, node.body, node.orelse):
            if part is not None:
                self.node(part, bound)

    def named_expr(self, node: cst.NamedExpr, bound: FrozenSet[str]) -> None:
        self.target(node.target, bound)
        self.node(node.value, bound)

    def as_name(self, node: cst.AsName, bound: FrozenSet[str]) -> None:
        self.target(node.name, bound)

    def declaration(
        self, node: Union[cst.Global, cst.Nonlocal], bound: FrozenSet[str]
    ) -> None:
        self.spoiled.update(item.name.value for item in node.names)

    def nested(self, node: cst.CSTNode, bound: FrozenSet[str]) -> None:
        """A nested scope: every name it uses may be a cell of the function's.
        A comprehension's first iterable runs in the function itself."""
        inside: List[cst.CSTNode] = [node]
        if isinstance(node, _COMPREHENSIONS):
            first = node.for_in
            self.node(first.iter, bound)
            inside = [
                first.target,
                *first.ifs,
                *([first.inner_for_in] if first.inner_for_in else []),
            ]
            inside += [node.key, node.value] if isinstance(node, cst.DictComp) else []
            inside += [] if isinstance(node, cst.DictComp) else [node.elt]
        spoiled = self.spoiled
        for part in inside:
            for inner in _named_parts(part):
                if type(inner) is cst.Name:
                    spoiled.add(inner.value)  # type: ignore[attr-defined]

    def match(self, node: cst.Match, bound: FrozenSet[str]) -> None:
        self.node(node.subject, bound)
        for case in node.cases:
            names = frozenset(capture_names_of(case.pattern))
            self.captured.update(names)
            self.pattern(case.pattern, bound)
            inner = bound | names
            if case.guard is not None:
                self.node(case.guard, inner)
            self.node(case.body, inner)

    def pattern(self, node: cst.CSTNode, bound: FrozenSet[str]) -> None:
        """What a pattern reads: values, classes and keys, not captures."""
        for part in pattern_nodes(node):  # type: ignore[arg-type]
            kind = type(part)
            if kind is cst.MatchValue:
                self.node(part.value, bound)  # type: ignore[attr-defined]
            elif kind is cst.MatchClass:
                self.node(part.cls, bound)  # type: ignore[attr-defined]
            elif kind is cst.MatchMappingElement:
                self.node(part.key, bound)  # type: ignore[attr-defined]


_METHODS: Dict[type, Callable[..., None]] = {
    cst.Name: _Walk.name,
    cst.Attribute: _Walk.attribute,
    cst.Call: _Walk.call,
    cst.Assign: _Walk.assign,
    cst.AnnAssign: _Walk.ann_assign,
    cst.For: _Walk.for_,
    cst.NamedExpr: _Walk.named_expr,
    cst.AsName: _Walk.as_name,
    cst.Global: _Walk.declaration,
    cst.Nonlocal: _Walk.declaration,
    cst.Match: _Walk.match,
}


def _called(node: cst.Call) -> Optional[str]:
    func = node.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


# -- the lowered pattern -----------------------------------------------------


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


def read_calls_once(
    pattern: LoweredPattern,
    prefix: str,
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> LoweredPattern:
    """``pattern`` with each call starting with ``prefix`` that it makes
    more than once (the helper's read of a class pattern's fields) stored
    in a variable where it is first made, and read from it after that.
    ``named``: call -> variable, for the match statement's cases to share
    names (each case stores its own before reading it); ``new_name`` names
    a call the first time."""
    if not any(prefix in test.expr for test in tests_in(pattern.cond)):
        return pattern  # most patterns: no such call to make at all
    return _read_once(
        pattern, lambda text: _repeated_calls(prefix, text), new_name, named
    )


def read_paths_once(
    pattern: LoweredPattern,
    heads: FrozenSet[str],
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> LoweredPattern:
    """As :func:`read_calls_once`, for paths from the subject a case reads
    more than once (``event.get("request")`` in its mapping check and in
    each lookup under it); PEP 634 leaves how often they are read open."""
    return _read_once(
        pattern, lambda text: _repeated_paths(text, heads), new_name, named
    )


def _read_once(
    pattern: LoweredPattern,
    repeated: Callable[[str], List[str]],
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> LoweredPattern:
    cond = pattern.cond
    parts: List[Cond] = list(cond.parts) if isinstance(cond, All) else [cond]
    bindings: List[Tuple[str, Value]] = list(pattern.bindings)
    tried: Set[str] = set()
    while True:
        text = case_test(
            LoweredPattern(All(tuple(parts)), tuple(bindings)), walrus_binder()
        )
        found = [t for t in repeated(text) if t not in tried]
        if not found:
            break
        read = found[0]  # the shortest: an inner one first
        tried.add(read)
        given: List[str] = []

        def name_of(read: str = read) -> str:
            given.append(named.get(read) or new_name(read))
            return given[-1]

        placed = place_at_first_read(name_of, read, parts, bindings)
        if placed is not None:
            named[read] = given[-1]
            parts, bindings = placed
    new_cond: Cond = All(tuple(parts)) if isinstance(cond, All) else parts[0]
    return LoweredPattern(new_cond, tuple(bindings))


# A path from a name: lookups under constant keys, constant indexes and
# attributes (a value pattern's dotted name is one too), not a method.
_STEP = r"""(?:\.get\((?:"[^"\\]*"|'[^'\\]*'|-?\d+|None|True|False)\)|\[-?\d+\]|\.[A-Za-z_]\w*(?![\w(]))"""
_PATH = re.compile(rf"(?<![\w.])[A-Za-z_]\w*{_STEP}+")
_STEPS = re.compile(_STEP)
_HEAD = re.compile(r"[A-Za-z_]\w*")


def _repeated_paths(text: str, heads: FrozenSet[str]) -> List[str]:
    """Paths from the subject read more than once in ``text`` (each step of
    a longer path counts as a read of the shorter one), shortest first.
    ``heads``: the subject's names; a temporary of the lowering's is one too
    (not the helper, nor a value pattern's dotted name, looked up anew)."""
    counts: Dict[str, int] = {}
    for found in _PATH.finditer(text):
        whole = found.group()
        head = _HEAD.match(whole)
        assert head is not None
        name = head.group()
        if name not in heads and not name.startswith(TEMP_PREFIX):
            continue
        for step in _STEPS.finditer(whole, head.end()):
            prefix = whole[: step.end()]
            counts[prefix] = counts.get(prefix, 0) + 1
    return sorted((p for p, n in counts.items() if n > 1), key=len)


def _repeated_calls(prefix: str, text: str) -> List[str]:
    """Calls starting with ``prefix`` made more than once in ``text``,
    shortest first."""
    counts: Dict[str, int] = {}
    start = text.find(prefix)
    while start != -1:
        call = _call_at(text, start + len(prefix))
        if call is not None:
            whole = prefix + call
            counts[whole] = counts.get(whole, 0) + 1
        start = text.find(prefix, start + 1)
    return sorted((c for c, n in counts.items() if n > 1), key=len)


def _call_at(text: str, start: int) -> Optional[str]:
    """The arguments and closing parenthesis of a call whose arguments start
    at ``start`` (string literals skipped whole), or None."""
    depth, index = 1, start
    while index < len(text):
        char = text[index]
        if char in "'\"":
            quote = (
                text[index : index + 3] if text[index : index + 3] == char * 3 else char
            )
            end = _closing(text, index + len(quote), quote)
            if end is None:
                return None
            index = end + len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
        index += 1
    return None


def _closing(text: str, index: int, quote: str) -> Optional[int]:
    """Where the string literal ending with ``quote`` ends, from ``index``."""
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text.startswith(quote, index):
            return index
        else:
            index += 1
    return None
