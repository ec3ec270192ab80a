"""Facts about the scope a match statement sits in.

The transformer needs two: what kind of scope it is (module, class body or
function), and whether the subject is a *stable* local name that the lowering
may read again in every case test instead of copying it into a temporary.
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

import libcst as cst

from spam_transpile.lowering.names import BoundNames
from spam_transpile.syntax.cstwalk import children, descendants


class _LocalBindings(BoundNames):
    """Names bound in one function body, not looking into nested scopes."""

    def __init__(self, walrus_possible: bool = True) -> None:
        super().__init__()
        self.declared: Set[str] = set()
        self.walrus_possible = walrus_possible

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Without ``:=`` no expression binds a name of the function itself
        # (comprehension and lambda variables are their own scopes), and the
        # statements' targets are read from the statements.
        if isinstance(node, cst.BaseExpression) and not self.walrus_possible:
            return False
        return super().on_visit(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_CompFor(self, node: cst.CompFor) -> None:
        # Comprehension variables are local to the comprehension.
        pass

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(item.name.value for item in node.names)


class _NestedNonlocals(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: Set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        # ``nonlocal`` is a statement: no need to look inside expressions.
        return not isinstance(node, cst.BaseExpression) and super().on_visit(node)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.update(item.name.value for item in node.names)


def stable_locals(
    function: cst.FunctionDef, walrus_possible: bool = True
) -> FrozenSet[str]:
    """Plain locals of ``function`` that no nested scope can rebind.

    Such a name changes only by code in the function itself, so between the
    match line and a case test nothing but the pattern's own captures or a
    guard's ``:=`` can change it (callers check those).
    """
    bindings = _LocalBindings(walrus_possible)
    for param in _params(function.params):
        bindings.names.add(param.name.value)
    function.body.visit(bindings)
    nested = _NestedNonlocals()
    function.body.visit(nested)
    return frozenset(bindings.names - bindings.declared - nested.names)


class _Counted(set):
    """A set of names that counts how often each was added."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: "Counter[str]" = Counter()

    def add(self, name: str) -> None:
        self.counts[name] += 1
        super().add(name)

    def update(self, *names: Iterable[str]) -> None:
        for group in names:
            for name in group:
                self.add(name)


def binding_sites(function: cst.FunctionDef, name: str) -> Optional[int]:
    """How many binding sites of ``function``'s own bind ``name``; None
    where others may too (a parameter, ``global``, ``nonlocal``, a nested
    scope's ``nonlocal``)."""
    if name in {param.name.value for param in _params(function.params)}:
        return None
    bindings = _LocalBindings()
    bindings.names = counted = _Counted()
    function.body.visit(bindings)
    nested = _NestedNonlocals()
    function.body.visit(nested)
    if name in bindings.declared or name in nested.names:
        return None
    return counted.counts[name]


def bound_in(node: cst.CSTNode) -> FrozenSet[str]:
    """The names ``node``, a part of a function, binds in the function's own
    scope, or declares ``global`` or ``nonlocal``."""
    bindings = _LocalBindings()
    node.visit(bindings)
    return frozenset(bindings.names | bindings.declared)


def own_nodes(function: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """The nodes of ``function``'s body in its own scope (not inside a
    nested ``def``, ``class`` or ``lambda``)."""
    todo: List[cst.CSTNode] = [function.body]
    while todo:
        node = todo.pop()
        yield node
        for child in children(node):
            if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                todo.append(child)


def own_cases(function: cst.FunctionDef) -> Iterator[cst.MatchCase]:
    """The cases of the match statements of ``function``'s own scope."""
    return (node for node in own_nodes(function) if isinstance(node, cst.MatchCase))


def parameter_unchanged(function: cst.FunctionDef, name: str) -> bool:
    """Whether ``name`` is a parameter of ``function`` that nothing binds
    again: no statement, capture or ``:=`` of the function, no nested
    scope (``nonlocal``), no ``global`` or ``del``."""
    if name not in {param.name.value for param in _params(function.params)}:
        return False
    bindings = _LocalBindings()
    function.body.visit(bindings)
    nested = _NestedNonlocals()
    function.body.visit(nested)
    return name not in bindings.names | bindings.declared | nested.names


class _BindingsBesides(_LocalBindings):
    """As :class:`_LocalBindings`, not looking into some patterns."""

    def __init__(self, skipped: FrozenSet[int]) -> None:
        super().__init__()
        self.skipped = skipped

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.skipped and super().on_visit(node)


def bound_besides(function: cst.FunctionDef, match: cst.Match) -> FrozenSet[str]:
    """Names ``function`` binds other than by the patterns of ``match`` (one
    of its statements): parameters, assignments, other captures, imports,
    ``del``; and those it declares global or nonlocal."""
    return _bound_skipping(function, [case.pattern for case in match.cases])


def bound_outside(function: cst.FunctionDef, match: cst.Match) -> FrozenSet[str]:
    """Names ``function`` binds outside ``match`` (as :func:`bound_besides`),
    and those ``match``'s bodies annotate: where a declaration before the
    match would follow a binding, or meet a second annotation."""
    annotated = {
        node.target.value
        for node in descendants(match)
        if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name)
    }
    return _bound_skipping(function, [match]) | annotated


def _bound_skipping(
    function: cst.FunctionDef, skipped: Sequence[cst.CSTNode]
) -> FrozenSet[str]:
    """Names ``function`` binds or declares global or nonlocal, not looking
    into the ``skipped`` nodes."""
    bindings = _BindingsBesides(frozenset(id(node) for node in skipped))
    for param in _params(function.params):
        bindings.names.add(param.name.value)
    function.body.visit(bindings)
    return frozenset(bindings.names | bindings.declared)


def bound_before(function: cst.FunctionDef, match: cst.Match) -> FrozenSet[str]:
    """Names certainly bound where ``match`` runs: the parameters, those a
    plain assignment binds before it in a block that holds it (the
    function's body, a case's body, ...: they ran before it), and the
    captures of the cases whose bodies hold it; none the function deletes."""
    names = {param.name.value for param in _params(function.params)}
    for node, inner in _path_to(function.body, match):
        if isinstance(node, cst.MatchCase) and inner is node.body:
            names.update(_capture_names(node.pattern))
        if not isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            continue
        for statement in node.body:
            if statement is inner:
                break
            names.update(_assigned_by(statement))
    deleted = {
        name
        for node in descendants(function)
        if isinstance(node, cst.Del)
        for name in (n.value for n in target_names(node.target))
    }
    return frozenset(names - deleted)


def _path_to(
    node: cst.CSTNode, goal: cst.CSTNode
) -> List[Tuple[cst.CSTNode, cst.CSTNode]]:
    """Each node from ``node`` down to ``goal`` with its child on the way
    (empty where ``goal`` is not inside ``node``, or only in another scope)."""
    for child in children(node):
        if child is goal:
            return [(node, child)]
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        below = _path_to(child, goal)
        if below:
            return [(node, child), *below]
    return []


def _assigned_by(statement: cst.CSTNode) -> Iterator[str]:
    if not isinstance(statement, cst.SimpleStatementLine):
        return
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                yield from (n.value for n in target_names(target.target))
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            yield from (n.value for n in target_names(small.target))


def _capture_names(pattern: cst.MatchPattern) -> Iterator[str]:
    """The names a pattern binds where it matches (every alternative of an
    or-pattern binds the same)."""
    for node in descendants(pattern):
        if isinstance(node, cst.MatchAs) and node.name is not None:
            yield node.name.value
        elif isinstance(node, cst.MatchStar) and node.name is not None:
            yield node.name.value
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            yield node.rest.value


def target_names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    """The names an assignment target binds: ``a``, ``a, (b, *c)``."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)


def is_annotated(node: Optional[cst.CSTNode]) -> bool:
    """Whether ``node`` is a function a type checker checks by default: one
    with an annotation (its return or a parameter)."""
    if not isinstance(node, cst.FunctionDef):
        return False
    annotated = any(param.annotation for param in _params(node.params))
    return node.returns is not None or annotated


def _params(params: cst.Parameters) -> list:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


class _WalrusTargets(cst.CSTVisitor):
    """Names a guard assigns with ``:=``."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.names.add(node.target.value)


def names_rebound_by(match: cst.Match, source: str = ":=") -> FrozenSet[str]:
    """Names the patterns capture, and those the guards assign with ``:=``."""
    names = set(capture_names(match))
    if ":=" in source:  # otherwise no guard can hold an assignment expression
        targets = _WalrusTargets()
        for case in match.cases:
            if case.guard is not None:
                case.guard.visit(targets)
        names.update(targets.names)
    return frozenset(names)


class _Declarations(cst.CSTVisitor):
    """``global`` and ``nonlocal`` statements of one function body."""

    def __init__(self) -> None:
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> None:
        self.globals.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.nonlocals.update(item.name.value for item in node.names)


def declarations(
    function: Union[cst.FunctionDef, cst.ClassDef],
) -> "tuple[FrozenSet[str], FrozenSet[str]]":
    """The names ``function`` (or a class body) declares global, and those it
    declares nonlocal."""
    found = _Declarations()
    function.body.visit(found)
    return frozenset(found.globals), frozenset(found.nonlocals)


def capture_names(match: cst.Match) -> list:
    """Names the patterns of ``match`` capture, in order of first appearance."""
    ordered: list = []
    for case in match.cases:
        for node in capture_names_of(case.pattern):
            if node not in ordered:
                ordered.append(node)
    return ordered


def capture_names_of(pattern: cst.CSTNode) -> list:
    """Captured names in text order, by direct recursion (no visitor copies)."""
    out: list = []
    if type(pattern) is cst.MatchAs:
        if pattern.pattern is not None:
            out += capture_names_of(pattern.pattern)
        if pattern.name is not None:
            out.append(pattern.name.value)
    elif type(pattern) is cst.MatchStar:
        if pattern.name is not None:
            out.append(pattern.name.value)
    elif type(pattern) is cst.MatchOr:
        for alternative in pattern.patterns:
            out += capture_names_of(alternative.pattern)
    elif type(pattern) is cst.MatchList or type(pattern) is cst.MatchTuple:
        for item in pattern.patterns:
            out += capture_names_of(
                item.value if type(item) is cst.MatchSequenceElement else item
            )
    elif type(pattern) is cst.MatchMapping:
        for pair in pattern.elements:
            out += capture_names_of(pair.pattern)
        if pattern.rest is not None:
            out.append(pattern.rest.value)
    elif type(pattern) is cst.MatchClass:
        for argument in pattern.patterns:
            out += capture_names_of(argument.value)
        for keyword in pattern.kwds:
            out += capture_names_of(keyword.pattern)
    return out


def patterns_within(pattern: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``pattern`` and every pattern in it, by direct recursion."""
    yield pattern
    kind = type(pattern)
    inner: List[cst.CSTNode] = []
    if kind is cst.MatchAs and pattern.pattern is not None:  # type: ignore
        inner = [pattern.pattern]  # type: ignore[attr-defined]
    elif kind is cst.MatchOr:
        inner = [a.pattern for a in pattern.patterns]  # type: ignore
    elif kind is cst.MatchList or kind is cst.MatchTuple:
        inner = [
            item.value if type(item) is cst.MatchSequenceElement else item
            for item in pattern.patterns  # type: ignore[attr-defined]
        ]
    elif kind is cst.MatchMapping:
        inner = [pair.pattern for pair in pattern.elements]  # type: ignore
    elif kind is cst.MatchClass:
        inner = [a.value for a in pattern.patterns]  # type: ignore
        inner += [k.pattern for k in pattern.kwds]  # type: ignore
    for sub in inner:
        yield from patterns_within(sub)


# -- the same facts from the standard parser, for the whole module at once -------
#
# On 3.10+ ``ast`` parses match statements; its tree is far cheaper to walk
# than LibCST's. Functions are listed in source order (as LibCST visits
# them), each with a way to get the names stable_locals() would give it; the
# caller checks the names line up before trusting the list, and asks for the
# names only of functions that hold a match statement.


def functions_in_order(
    tree: Optional[ast.Module], nodes: Optional[Sequence[ast.AST]] = None
) -> Optional[List[Tuple[str, Callable[[], FrozenSet[str]]]]]:
    """(name, stable locals on demand) of every ``def`` of ``tree``
    (names.standard_ast) in source order, or None without a tree.

    ``nodes``: every node of ``tree``, when the caller has them at hand.
    """
    if tree is None:
        return None
    if nodes is None:
        nodes = list(ast.walk(tree))
    functions = [
        node
        for node in nodes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    # A ``def`` starts on its own line, after any ``def`` around it.
    functions.sort(key=lambda f: (f.lineno, f.col_offset))
    return [(f.name, functools.partial(_stable_locals_of, f)) for f in functions]


def _stable_locals_of(
    function: Union[ast.FunctionDef, ast.AsyncFunctionDef],
) -> FrozenSet[str]:
    args = function.args
    bound: Set[str] = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    bound.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    declared: Set[str] = set()
    inner: List[ast.AST] = []
    for statement in function.body:
        _bindings(statement, bound, declared, inner)
    # A ``nonlocal`` can only sit in the body of a nested def or class.
    nested = {
        name
        for scope in inner
        for node in ast.walk(scope)
        if isinstance(node, ast.Nonlocal)
        for name in node.names
    }
    return frozenset(bound - declared - nested)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _bindings(
    node: ast.AST, bound: Set[str], declared: Set[str], inner: List[ast.AST]
) -> None:
    """Names ``node`` binds in the function it belongs to (not nested scopes,
    which are added to ``inner`` instead). Exact types and direct field
    access: this walks every function that holds a match statement."""
    kind = type(node)
    if kind in _DEFINITIONS:
        bound.add(node.name)  # type: ignore[attr-defined]
        inner.append(node)
        return
    if kind is ast.Lambda:
        return  # its body is an expression: no ``nonlocal`` in it
    if kind is ast.Global or kind is ast.Nonlocal:
        declared.update(node.names)  # type: ignore[attr-defined]
        return
    if kind is ast.comprehension:
        # Its target is the comprehension's own variable; ``:=`` inside the
        # iterable or the conditions binds the function's.
        for part in (node.iter, *node.ifs):  # type: ignore[attr-defined]
            _bindings(part, bound, declared, inner)
        return
    if kind is ast.Name:
        if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            bound.add(node.id)  # type: ignore[attr-defined]
        return
    name = _BINDS.get(kind)
    if name is not None:
        bound.update(name(node))
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    _bindings(item, bound, declared, inner)
        elif isinstance(value, ast.AST):
            _bindings(value, bound, declared, inner)


def _named(node: Any) -> List[str]:
    return [node.name] if node.name else []


def _rest(node: Any) -> List[str]:
    return [node.rest] if node.rest else []


# The other nodes that bind a name themselves: the names they bind (the match
# patterns' only where ast has them: the tool also runs on 3.9).
_BINDS: Dict[type, Callable[[Any], List[str]]] = {
    getattr(ast, kind): names
    for kind, names in (
        ("alias", lambda node: [node.asname or node.name.split(".")[0]]),
        ("ExceptHandler", _named),
        ("MatchAs", _named),
        ("MatchStar", _named),
        ("MatchMapping", _rest),
    )
    if hasattr(ast, kind)
}
