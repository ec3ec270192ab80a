"""Facts about a module known at transpile time, which make checks disappear.

A class defined at the top level of the module, whose name is bound nowhere
else in the module (no other assignment, import, parameter, ``global``,
deletion or capture in any scope), is the class the name refers to wherever
a class pattern names it. For such a class:

- a literal ``__match_args__ = ("a", "b")`` in its body gives the positional
  attribute names;
- ``@dataclass`` (or ``@dataclasses.dataclass``) without ``match_args=False``
  or ``kw_only``, and with no base classes, gives the fields as 3.10 does:
  annotated names in order, ``ClassVar`` left out, ``field(init=False)``
  left out. Its ``__init__`` sets every such field, so they are read
  directly (``p.x``) without a missing-attribute check.

Only the standard parser's tree is read (Python 3.10+ runs the tool there);
without it there are no facts and every class is looked up at run time.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from spam_transpile.lowering.dynamic_names import ast_binds_unseen
from spam_transpile.lowering.names import BINDERS, ast_bindings


@dataclass(frozen=True)
class KnownClass:
    #: positional attribute names, as ``__match_args__`` holds them
    match_args: Optional[Tuple[str, ...]]
    #: attributes every instance is known to have
    fields: Tuple[str, ...] = ()
    #: the dataclass fields a subclass inherits (None: not a dataclass)
    inherited: Optional[Tuple[str, ...]] = None


class ModuleFacts:
    def __init__(
        self,
        classes: Optional[Dict[str, KnownClass]] = None,
        statements: Optional[List[Tuple[bool, int]]] = None,
        bound: Optional[FrozenSet[str]] = None,
        unseen: Optional[bool] = None,
    ) -> None:
        self._classes = classes or {}
        #: per top-level statement of the standard tree: whether it holds a
        #: match statement, and how many ``def`` it holds (the walk can skip
        #: the others)
        self.statements = statements
        #: every name the module binds in any scope (names.bound_names), from
        #: the same pass that counts the bindings
        self.bound = bound
        #: whether the module may bind names no binding site shows (a star
        #: import, a write through ``globals()``: dynamic_names); None
        #: without a standard tree
        self.unseen = unseen

    def known_class(self, name: str) -> Optional[KnownClass]:
        return self._classes.get(name)


def module_facts(
    tree: Optional[ast.Module], nodes: Optional[Sequence[ast.AST]] = None
) -> ModuleFacts:
    """The facts of the module whose standard tree is ``tree``; ``nodes``:
    all its nodes (in any order), when the caller has them at hand."""
    if tree is None:
        return ModuleFacts()
    if nodes is None:
        nodes = list(ast.walk(tree))
    counts = _binding_counts(nodes)
    unseen = ast_binds_unseen(tree, nodes)
    statements = _statement_facts(tree.body, nodes)
    if unseen:
        # Any name may be bound again where the tree does not show it.
        return ModuleFacts({}, statements, frozenset(counts), unseen)
    classes: Dict[str, KnownClass] = {}
    #: classes of this module that add nothing to pattern matching
    plain: Dict[str, bool] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or counts[node.name] != 1:
            continue
        bases = _base_fields(node, classes, plain)
        if bases is None:
            continue
        known = _known_class(node, bases)
        if known is not None:
            classes[node.name] = known
        elif _is_plain(node):
            plain[node.name] = True
    return ModuleFacts(classes, statements, frozenset(counts), unseen)


def _statement_facts(
    body: Sequence[ast.stmt], nodes: Sequence[ast.AST]
) -> List[Tuple[bool, int]]:
    """Per top-level statement: whether it holds a match statement, and how
    many ``def`` it holds (itself included).

    One pass over the module's nodes, not a walk per statement: a node
    belongs to the last top-level statement starting at or before it (a
    decorator holds neither kind of node, so a statement may be said to
    start at its ``def`` line).
    """
    starts = [(statement.lineno, statement.col_offset) for statement in body]
    has_match = [False] * len(body)
    functions = [0] * len(body)
    for node in nodes:
        kind = type(node)
        if kind in _FUNCTIONS:
            functions[_owner(starts, node)] += 1
        elif kind is _MATCH:
            has_match[_owner(starts, node)] = True
    return list(zip(has_match, functions))


def _owner(starts: List[Tuple[int, int]], node: ast.AST) -> int:
    """Index of the top-level statement (by ``starts``) that holds ``node``."""
    at = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return bisect_right(starts, at) - 1


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MATCH = getattr(ast, "Match", None)  # 3.10+; without it, no node is one


def _base_fields(
    node: ast.ClassDef, classes: Dict[str, KnownClass], plain: Dict[str, bool]
) -> Optional[Tuple[str, ...]]:
    """The dataclass fields ``node`` inherits, or None if a base is unknown.

    Bases must be classes of this module defined above it: plain ones (no
    dataclass, no ``__match_args__``) or dataclasses, whose fields come first.
    """
    if node.keywords:
        return None
    fields: Tuple[str, ...] = ()
    for base in node.bases:
        if not isinstance(base, ast.Name):
            return None
        if base.id in plain:
            continue
        known = classes.get(base.id)
        if known is None or known.inherited is None:
            return None
        fields = tuple(f for f in fields if f not in known.inherited) + known.inherited
    return fields


def _is_plain(node: ast.ClassDef) -> bool:
    return (
        not node.decorator_list
        and _literal_match_args(node) is None
        and not any(isinstance(s, ast.AnnAssign) for s in node.body)
        and not any(
            isinstance(t, ast.Name) and t.id == "__match_args__"
            for s in node.body
            if isinstance(s, ast.Assign)
            for t in s.targets
        )
    )


def _known_class(
    node: ast.ClassDef, inherited: Tuple[str, ...]
) -> Optional[KnownClass]:
    own = _literal_match_args(node)
    if own is not None:
        fields = _dataclass_fields(node) if _is_plain_dataclass(node) else None
        return KnownClass(own, tuple(f for f in (fields or ()) if f in own))
    if _is_plain_dataclass(node):
        fields = _dataclass_fields(node)
        if fields is not None:
            # A field redefined in the subclass keeps its place (dataclasses).
            merged = inherited + tuple(f for f in fields if f not in inherited)
            return KnownClass(merged, merged, merged)
    return None


def _literal_match_args(node: ast.ClassDef) -> Optional[Tuple[str, ...]]:
    found: Optional[Tuple[str, ...]] = None
    for statement in node.body:
        targets: List[ast.expr] = []
        value: Optional[ast.expr] = None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign):
            targets, value = [statement.target], statement.value
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "__match_args__":
                if found is not None or not _is_str_tuple(value):
                    return None
                assert isinstance(value, ast.Tuple)
                found = tuple(
                    e.value
                    for e in value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
    return found


def _is_str_tuple(value: Optional[ast.expr]) -> bool:
    return isinstance(value, ast.Tuple) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
    )


def _is_plain_dataclass(node: ast.ClassDef) -> bool:
    if len(node.decorator_list) != 1:
        return False
    decorator = node.decorator_list[0]
    keywords: list = []
    if isinstance(decorator, ast.Call):
        keywords = decorator.keywords
        if decorator.args:
            return False
        decorator = decorator.func
    named = (isinstance(decorator, ast.Name) and decorator.id == "dataclass") or (
        isinstance(decorator, ast.Attribute)
        and decorator.attr == "dataclass"
        and isinstance(decorator.value, ast.Name)
        and decorator.value.id == "dataclasses"
    )
    allowed = {"eq", "order", "frozen", "repr", "unsafe_hash", "slots"}
    return named and all(k.arg in allowed for k in keywords)


def _dataclass_fields(node: ast.ClassDef) -> Optional[Tuple[str, ...]]:
    fields = []
    for statement in node.body:
        if not isinstance(statement, ast.AnnAssign):
            continue
        if not isinstance(statement.target, ast.Name):
            return None
        annotation = ast.unparse(statement.annotation)
        if "ClassVar" in annotation:
            continue
        if "InitVar" in annotation or "KW_ONLY" in annotation:
            return None  # not a field that is always set
        if _not_in_init(statement.value):
            continue
        fields.append(statement.target.id)
    return tuple(fields)


def _not_in_init(value: Optional[ast.expr]) -> bool:
    if not isinstance(value, ast.Call):
        return False
    for keyword in value.keywords:
        if keyword.arg in ("init", "kw_only"):
            return True  # init=False, or kw_only: not positional
    return False


def _binding_counts(nodes: Sequence[ast.AST]) -> "Counter[str]":
    """How many times each name is bound anywhere in the module; a
    ``global`` or ``nonlocal`` counts twice (a declaration may rebind it
    anywhere)."""
    counts: "Counter[str]" = Counter()
    for node in nodes:
        kind = type(node)
        if kind not in BINDERS:
            continue  # most nodes: one test
        # One name at a time: Counter.update() asks each iterable whether
        # it is a Mapping, an ABC check that cost more than the counting.
        for name in ast_bindings(node):
            counts[name] += 1
        if kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:  # type: ignore[attr-defined]
                counts[name] += 1
    return counts
