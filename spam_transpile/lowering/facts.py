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
  directly (``p.x``) without a missing-attribute check (not where the class
  has an ``__init__`` of its own, which dataclasses keeps).

Such a fact is used only where nothing in the module can change it after
the class body ran:

- no name of the module is bound where the tree does not show it (a star
  import, a write through ``globals()``: :mod:`.dynamic_names`);
- nothing sets or deletes the class's ``__match_args__`` outside its body
  (``C.__match_args__ = ...``, ``setattr(C, "__match_args__", ...)``), and
  nothing sets any class's where the tree cannot tell which
  (``cls.__match_args__ = ...``, ``setattr(C, name, ...)``,
  ``type.__setattr__(...)``): then no class has facts;
- its body binds ``__match_args__`` once, by assignment (no ``+=``, no
  second binding, no write through ``locals()``), and it has no decorator
  but the standard ``dataclass`` (a function merely named ``dataclass`` is
  not it);
- no metaclass keyword but the standard ``abc.ABCMeta``, and its bases are
  classes of the module with facts, the standard ``abc.ABC``, or "plain"
  ones (no decorator, ``__match_args__`` or annotations, bases and
  keywords of the same kinds); no base defines ``__init_subclass__``,
  which runs after the subclass's body.

Only the standard parser's tree is read (Python 3.10+ runs the tool there);
without it there are no facts and every class is looked up at run time.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

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
    #: readable: a ``NamedTuple`` of the project: its fields, item by item
    items: Optional[Tuple[str, ...]] = None
    #: readable: the fields no instance can rebind (a frozen dataclass's, a
    #: ``NamedTuple``'s): read again later, each gives what it gave before
    immutable: Tuple[str, ...] = ()


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
        #: local name -> module, for names bound once, by a top-level
        #: ``import module`` (or ``import module as name``)
        self.imports: Dict[str, str] = {}
        #: local name -> (module, name), for names bound once, by a
        #: top-level ``from module import name`` (absolute)
        self.from_imports: Dict[str, Tuple[str, str]] = {}
        #: names bound once, by a top-level relative ``from . import name``
        self.relative_imports: FrozenSet[str] = frozenset()
        #: names whose ``__match_args__`` the module sets outside a class
        #: body (:func:`match_args_set_elsewhere`); None: maybe any class's
        self.match_args_set: Optional[FrozenSet[str]] = frozenset()
        #: readable layout: classes as their declarations describe them
        #: (project_facts), by how this module spells them (``Order``,
        #: ``models.Order``): the module's own and those it imports
        self.declared: Dict[str, KnownClass] = {}

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
    counts = binding_counts(nodes)
    unseen = ast_binds_unseen(tree, nodes)
    statements = _statement_facts(tree.body, nodes)
    if unseen:
        # Any name may be bound again where the tree does not show it.
        return ModuleFacts({}, statements, frozenset(counts), unseen)
    set_elsewhere = match_args_set_elsewhere(nodes)
    facts = _class_facts(tree, counts, statements, set_elsewhere)
    facts.match_args_set = set_elsewhere
    facts.imports = _module_imports(tree, counts)
    facts.from_imports = _names_imported(tree, counts)
    facts.relative_imports = frozenset(
        alias.asname or alias.name
        for statement in tree.body
        if isinstance(statement, ast.ImportFrom) and statement.level
        for alias in statement.names
        if alias.name != "*" and counts[alias.asname or alias.name] == 1
    )
    return facts


def _names_imported(
    tree: ast.Module, counts: "Counter[str]"
) -> Dict[str, Tuple[str, str]]:
    imported: Dict[str, Tuple[str, str]] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.ImportFrom) or statement.level:
            continue
        for alias in statement.names:
            name = alias.asname or alias.name
            if statement.module and alias.name != "*" and counts[name] == 1:
                imported[name] = (statement.module, alias.name)
    return imported


def _module_imports(tree: ast.Module, counts: "Counter[str]") -> Dict[str, str]:
    imports: Dict[str, str] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.Import):
            continue
        for alias in statement.names:
            # ``import a.b`` binds ``a``, which is not ``a.b``
            if alias.asname is None and "." in alias.name:
                continue
            name = alias.asname or alias.name
            if counts[name] == 1:
                imports[name] = alias.name
    return imports


@dataclass(frozen=True)
class _AbcSpellings:
    #: how the module spells ``abc.ABC`` and ``abc.ABCMeta``
    base: FrozenSet[str]
    metaclass: FrozenSet[str]


def _abc_spellings(tree: ast.Module, counts: "Counter[str]") -> _AbcSpellings:
    """``ABC`` after ``from abc import ABC``, ``abc.ABC`` after ``import
    abc`` (names a top-level import binds once), and the same of
    ``ABCMeta``."""
    spelled: Dict[str, Set[str]] = {"ABC": set(), "ABCMeta": set()}
    for name, (module, attribute) in _names_imported(tree, counts).items():
        if module == "abc" and attribute in spelled:
            spelled[attribute].add(name)
    for name, module in _module_imports(tree, counts).items():
        if module == "abc":
            for attribute, names in spelled.items():
                names.add(f"{name}.{attribute}")
    return _AbcSpellings(frozenset(spelled["ABC"]), frozenset(spelled["ABCMeta"]))


def _dotted(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _class_facts(
    tree: ast.Module,
    counts: "Counter[str]",
    statements: Optional[List[Tuple[bool, int]]],
    set_elsewhere: Optional[FrozenSet[str]],
) -> ModuleFacts:
    """The facts of the module's classes (no name is bound unseen)."""
    unseen = False
    class_names = {
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and counts[node.name] == 1
    }
    if set_elsewhere is None or not set_elsewhere <= class_names:
        # Some class's ``__match_args__`` is set where the tree cannot tell
        # which (through a name that may be any class): none is known.
        return ModuleFacts({}, statements, frozenset(counts), unseen)
    dataclass = dataclass_spellings(tree, counts)
    abcs = _abc_spellings(tree, counts)
    classes: Dict[str, KnownClass] = {}
    #: classes of this module that add nothing to pattern matching
    plain: Dict[str, bool] = {}
    #: classes of the above that define ``__init_subclass__``: no base for
    #: a class with facts
    hooked: Set[str] = set()
    for node in tree.body:
        if (
            not isinstance(node, ast.ClassDef)
            or counts[node.name] != 1
            or node.name in set_elsewhere
        ):
            continue
        bases = _base_fields(node, classes, plain, hooked, abcs)
        if bases is None or not _body_keeps_match_args(node):
            continue
        known = _known_class(node, bases, dataclass)
        if known is not None:
            classes[node.name] = known
        elif _is_plain(node):
            plain[node.name] = True
        if _defines(node, "__init_subclass__"):
            # It runs for each subclass (and theirs), after its body: it may
            # set the subclass's ``__match_args__``. Not for the class itself.
            hooked.add(node.name)
    return ModuleFacts(classes, statements, frozenset(counts), unseen)


def match_args_set_elsewhere(nodes: Sequence[ast.AST]) -> Optional[FrozenSet[str]]:
    """The names of the classes whose ``__match_args__`` the module sets or
    deletes outside their bodies (``C.__match_args__ = ...``,
    ``setattr(C, "__match_args__", ...)``); None where it may set some
    class's without saying which (``cls.__match_args__ = ...`` in an
    ``__init_subclass__`` or a decorator, ``setattr(C, name, ...)``,
    ``type.__setattr__(cls, ...)``)."""
    named: Set[str] = set()
    for node in nodes:
        kind = type(node)
        if kind is ast.Attribute:
            if node.attr != "__match_args__" or type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                continue
            owner = node.value  # type: ignore[attr-defined]
            if not isinstance(owner, ast.Name):
                return None
            named.add(owner.id)
        elif kind is ast.Call:
            target = _set_attribute_target(node)  # type: ignore[arg-type]
            if target is _UNKNOWN:
                return None
            if target is not None:
                named.add(target)  # type: ignore[arg-type]
    return frozenset(named)


_UNKNOWN = object()
_SETTERS = frozenset(["setattr", "delattr"])
_SETTER_METHODS = frozenset(["__setattr__", "__delattr__"])


def _set_attribute_target(call: ast.Call) -> object:
    """For a call that may set ``__match_args__``: the name of the class
    it sets it on, or ``_UNKNOWN``; None for any other call."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in _SETTERS:
        args = call.args
        if any(isinstance(a, ast.Starred) for a in args[:2]) or call.keywords:
            return _UNKNOWN
        if len(args) < 2:
            return None  # a TypeError, not a store
        name = args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return _UNKNOWN  # which attribute: only the running program knows
        if name.value != "__match_args__":
            return None
        return args[0].id if isinstance(args[0], ast.Name) else _UNKNOWN
    if isinstance(func, ast.Attribute) and func.attr in _SETTER_METHODS:
        # ``type.__setattr__(cls, name, v)``; ``super().__setattr__(name, v)``
        unbound = isinstance(func.value, ast.Name) and func.value.id in (
            "type",
            "object",
        )
        index = 1 if unbound else 0
        args = call.args
        if len(args) <= index or any(
            isinstance(a, ast.Starred) for a in args[: index + 1]
        ):
            return _UNKNOWN
        name = args[index]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return _UNKNOWN if name.value == "__match_args__" else None
        return _UNKNOWN
    return None


def dataclass_spellings(tree: ast.Module, counts: "Counter[str]") -> FrozenSet[str]:
    """How the module spells ``dataclasses.dataclass``: ``dataclass`` where
    ``from dataclasses import dataclass`` binds that name and nothing else
    does, ``dataclasses`` where ``import dataclasses`` does (a function of
    its own merely named ``dataclass`` is not the standard one)."""
    found: Set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "dataclasses":
            for alias in statement.names:
                if alias.name == "dataclass" and alias.asname in (None, "dataclass"):
                    found.add("dataclass")
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "dataclasses" and alias.asname in (
                    None,
                    "dataclasses",
                ):
                    found.add("dataclasses")
    return frozenset(name for name in found if counts[name] == 1)


def _class_scope(node: ast.ClassDef) -> List[ast.AST]:
    """The nodes of the class body's own scope (not the bodies of the
    functions, classes and lambdas in it)."""
    found: List[ast.AST] = []
    todo: List[ast.AST] = list(node.body)
    while todo:
        current = todo.pop()
        found.append(current)
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo += current.decorator_list + current.args.defaults
            todo += [d for d in current.args.kw_defaults if d is not None]
        elif isinstance(current, ast.ClassDef):
            todo += current.decorator_list + current.bases
            todo += [k.value for k in current.keywords]
        elif not isinstance(current, ast.Lambda):
            todo.extend(ast.iter_child_nodes(current))
    return found


_NAMESPACE_CALLS = frozenset(["locals", "vars", "exec", "eval"])


def _body_keeps_match_args(node: ast.ClassDef) -> bool:
    """Whether the class body binds ``__match_args__`` at most once, and
    by nothing but a plain assignment (no ``+=``, ``del``, loop or import;
    no write through ``locals()`` or ``vars()``, which are its namespace)."""
    bindings = 0
    for part in _class_scope(node):
        if type(part) is ast.Call:
            func = part.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Name) and func.id in _NAMESPACE_CALLS:
                return False
        for name in ast_bindings(part):
            if name == "__match_args__":
                bindings += 1
        if isinstance(part, ast.AugAssign) and _is_name(part.target, "__match_args__"):
            return False
    return bindings <= 1


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _defines(node: ast.ClassDef, name: str) -> bool:
    """Whether the class body binds ``name`` in its own scope."""
    return any(name in ast_bindings(part) for part in _class_scope(node))


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
    node: ast.ClassDef,
    classes: Dict[str, KnownClass],
    plain: Dict[str, bool],
    hooked: Set[str],
    abcs: "_AbcSpellings",
) -> Optional[Tuple[str, ...]]:
    """The dataclass fields ``node`` inherits, or None if a base is unknown.

    Bases must be classes of this module defined above it: plain ones (no
    dataclass, no ``__match_args__``) or dataclasses, whose fields come first;
    none ``hooked`` (its ``__init_subclass__`` runs for ``node``). The
    standard ``abc.ABC`` is a plain base, and ``abc.ABCMeta`` the one
    metaclass: neither sets ``__match_args__`` nor defines
    ``__init_subclass__``.
    """
    if any(
        k.arg != "metaclass" or _dotted(k.value) not in abcs.metaclass
        for k in node.keywords
    ):
        return None
    fields: Tuple[str, ...] = ()
    for base in node.bases:
        if _dotted(base) in abcs.base:
            continue
        if not isinstance(base, ast.Name) or base.id in hooked:
            return None
        if base.id in plain:
            continue
        known = classes.get(base.id)
        if known is None or known.inherited is None:
            return None
        fields = tuple(f for f in fields if f not in known.inherited) + known.inherited
    return fields


def _is_plain(node: ast.ClassDef) -> bool:
    """(Its bases and keywords are known plain: :func:`_base_fields`.)"""
    return (
        not node.decorator_list
        and literal_match_args(node) is None
        and not any(isinstance(s, ast.AnnAssign) for s in node.body)
        and not any(
            isinstance(t, ast.Name) and t.id == "__match_args__"
            for s in node.body
            if isinstance(s, ast.Assign)
            for t in s.targets
        )
    )


def _known_class(
    node: ast.ClassDef, inherited: Tuple[str, ...], dataclass: FrozenSet[str]
) -> Optional[KnownClass]:
    is_dataclass = _is_plain_dataclass(node, dataclass)
    if node.decorator_list and not is_dataclass:
        return None  # a decorator may set ``__match_args__`` or replace the class
    own = literal_match_args(node)
    # dataclasses keeps an ``__init__`` of the class's own, which may leave
    # a field unset
    set_by_init = is_dataclass and not _defines(node, "__init__")
    frozen = is_dataclass and _is_frozen(node)
    if own is not None:
        fields = dataclass_fields(node) if set_by_init else None
        known = tuple(f for f in (fields or ()) if f in own)
        return KnownClass(own, known, immutable=known if frozen else ())
    if is_dataclass:
        fields = dataclass_fields(node)
        if fields is not None:
            # A field redefined in the subclass keeps its place (dataclasses).
            merged = inherited + tuple(f for f in fields if f not in inherited)
            given = merged if set_by_init else ()
            # (a frozen dataclass's bases are frozen dataclasses too)
            return KnownClass(merged, given, merged, immutable=given if frozen else ())
    return None


def _is_frozen(node: ast.ClassDef) -> bool:
    """``@dataclass(frozen=True)``: its ``__setattr__`` refuses every field,
    on instances of subclasses too."""
    decorator = node.decorator_list[0]
    return isinstance(decorator, ast.Call) and any(
        keyword.arg == "frozen"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
        for keyword in decorator.keywords
    )


def literal_match_args(node: ast.ClassDef) -> Optional[Tuple[str, ...]]:
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


def _is_plain_dataclass(node: ast.ClassDef, spellings: FrozenSet[str]) -> bool:
    """``@dataclass`` (or ``@dataclasses.dataclass``) alone, as the module
    spells the standard one (``spellings``: dataclass_spellings)."""
    if len(node.decorator_list) != 1:
        return False
    decorator = node.decorator_list[0]
    keywords: list = []
    if isinstance(decorator, ast.Call):
        keywords = decorator.keywords
        if decorator.args:
            return False
        decorator = decorator.func
    named = (
        isinstance(decorator, ast.Name)
        and decorator.id == "dataclass"
        and "dataclass" in spellings
    ) or (
        isinstance(decorator, ast.Attribute)
        and decorator.attr == "dataclass"
        and isinstance(decorator.value, ast.Name)
        and decorator.value.id == "dataclasses"
        and "dataclasses" in spellings
    )
    allowed = {"eq", "order", "frozen", "repr", "unsafe_hash", "slots"}
    return named and all(k.arg in allowed for k in keywords)


def dataclass_fields(node: ast.ClassDef) -> Optional[Tuple[str, ...]]:
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


def binding_counts(nodes: Sequence[ast.AST]) -> "Counter[str]":
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
