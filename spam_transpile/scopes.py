"""Facts about the scope a match statement sits in.

The transformer needs two: what kind of scope it is (module, class body or
function), and whether the subject is a *stable* local name that the lowering
may read again in every case test instead of copying it into a temporary.
"""

from __future__ import annotations

from typing import FrozenSet, Set, Union

import libcst as cst

from spam_transpile.names import BoundNames

FunctionNode = Union[cst.FunctionDef, cst.Lambda]


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

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
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


def _params(params: cst.Parameters) -> list:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


class _Targets(cst.CSTVisitor):
    """Names a pattern captures or a guard assigns with ``:=``."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self.names.add(node.rest.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.names.add(node.target.value)


def names_rebound_by(match: cst.Match) -> FrozenSet[str]:
    targets = _Targets()
    for case in match.cases:
        case.pattern.visit(targets)
        if case.guard is not None:
            case.guard.visit(targets)
    return frozenset(targets.names)


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


def declarations(function: cst.FunctionDef) -> "tuple[FrozenSet[str], FrozenSet[str]]":
    """The names ``function`` declares global, and those it declares nonlocal."""
    found = _Declarations()
    function.body.visit(found)
    return frozenset(found.globals), frozenset(found.nonlocals)


def capture_names(match: cst.Match) -> list:
    """Names the patterns of ``match`` capture, in order of first appearance."""
    ordered: list = []
    for case in match.cases:
        for node in _pattern_names(case.pattern):
            if node not in ordered:
                ordered.append(node)
    return ordered


def _pattern_names(pattern: cst.CSTNode) -> list:
    out: list = []

    class _Collect(cst.CSTVisitor):
        def visit_MatchAs(self, node: cst.MatchAs) -> None:
            if node.name is not None:
                out.append(node.name.value)

        def visit_MatchStar(self, node: cst.MatchStar) -> None:
            if node.name is not None:
                out.append(node.name.value)

        def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
            if node.rest is not None:
                out.append(node.rest.value)

    pattern.visit(_Collect())
    return out
