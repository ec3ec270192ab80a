"""Which captures of a function may be stored before their case matched.

A capture is stored where its value is first read (:mod:`.early_binding`)
only where no code can tell: the function calls none of ``locals()``,
``vars()``, ``dir()``, ``eval()``, ``exec()``, ``breakpoint()`` or a frame
getter, and the name is neither global, nonlocal nor used by a nested
scope, and nothing reads it but the guards and bodies of cases capturing
it. This module answers both questions from the function's LibCST tree.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Union

import libcst as cst

from spam_transpile.syntax.cstwalk import children, pattern_nodes
from spam_transpile.lowering.scopes import capture_names_of

__all__ = [
    "FRAME_READERS",
    "may_read_frames",
    "quiet_captures",
    "reads_own_frame",
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
