"""Whether a module may bind global names the tool cannot see.

The lowered tests call builtins by name (``len``, ``isinstance``,
``type(v) is list``), where CPython's ``match`` never looks a name up; and a
class pattern's facts (:mod:`.facts`) hold only while its name is bound once.
A name the module binds in plain code is known (``names.Names`` spells the
builtin another way); these bind names no binding site shows:

- ``from m import *`` (any name ``m`` defines or lists in ``__all__``);
- ``globals()`` written to, or handed to code that may write to it:
  ``globals()[name] = value``, ``globals().update(...)``, ``g = globals()``,
  ``exec(source, globals())``; and at module level ``vars()`` and
  ``locals()``, which are ``globals()`` there;
- ``exec(source)`` and ``eval(source)`` with the caller's namespaces
  (``exec("global len; len = f")`` binds a global from anywhere);
- the module object reached by its own name: ``sys.modules[__name__]``,
  ``sys.modules.get(__name__)``, ``importlib.import_module(__name__)``,
  ``__import__(__name__)``, whose attributes are its globals.

Reading ``globals()`` (``globals()[name]``, ``globals().get(...)``, ``name
in globals()``, iterating it, ``dict(globals())``) binds nothing. Changes to
the ``builtins`` module itself are out of reach of plain source.

Both trees are read with the same rules (the standard tree where the tool
runs on 3.10+, LibCST's elsewhere): the output must not depend on the
interpreter running the tool.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

#: a module without these words binds no name behind the tool's back
_WORDS = re.compile(
    r"\bimport[\s\\(]*\*|\b(?:globals|vars|locals|exec|eval|__name__)\b"
)

#: what may be done with ``globals()`` without writing to it
_READING_METHODS = frozenset(
    ["get", "keys", "values", "items", "copy", "__contains__", "__getitem__"]
    + ["__len__", "__iter__"]
)
#: builtins that only read the namespace they are given
_READING_CALLS = frozenset(
    ["dict", "list", "sorted", "len", "set", "tuple", "frozenset", "iter"]
    + ["print", "repr", "str", "any", "all", "enumerate", "reversed"]
)
#: calls that run source text in the caller's namespaces
_RUNNERS = frozenset(["exec", "eval"])
#: calls returning a namespace: globals(), and at module level the others
_NAMESPACES = frozenset(["globals", "vars", "locals"])
#: calls given a module's name that return the module
_IMPORTERS = frozenset(["get", "import_module", "__import__", "reload"])

#: the names of the calls that matter
_CALLED = _RUNNERS | _IMPORTERS | _NAMESPACES

#: every builtin a star import or a write through ``globals()`` may shadow:
#: the public ones (``__import__`` and the like only where the module binds
#: them itself, which the module's bound names show)
PUBLIC_BUILTINS: FrozenSet[str] = frozenset(
    name for name in dir(builtins) if not name.startswith("_")
)


def may_rebind(source: str) -> bool:
    """Whether ``source`` may bind names the trees do not show (cheap: a
    look at its words; the tree decides when they are there)."""
    return _WORDS.search(source) is not None


# -- the standard tree ------------------------------------------------------


def ast_binds_unseen(tree: ast.Module, nodes: Sequence[ast.AST]) -> bool:
    """Whether the module ``tree`` (``nodes``: all its nodes) may bind
    global names in a way no binding site shows (see the module's
    docstring)."""
    namespaces: List[ast.Call] = []
    for node in nodes:
        kind = type(node)
        if kind is ast.ImportFrom:
            if any(alias.name == "*" for alias in node.names):  # type: ignore[attr-defined]
                return True
        elif kind is ast.Subscript:
            if _ast_self_subscript(node):  # type: ignore[arg-type]
                return True
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            # most calls: one test (this walks every call of the module)
            if not (
                (type(func) is ast.Name and func.id in _CALLED)
                or (type(func) is ast.Attribute and func.attr in _IMPORTERS)
            ):
                continue
            verdict = _ast_call(node)  # type: ignore[arg-type]
            if verdict is True:
                return True
            if verdict is None:
                namespaces.append(node)  # type: ignore[arg-type]
    return any(
        (_is_name(call.func, "globals") or _at_module_level(call, nodes))
        and not _ast_read_only(_ast_parent(call, nodes))
        for call in namespaces
    )


_AST_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _ast_self_subscript(node: ast.Subscript) -> bool:
    """``sys.modules[__name__]``"""
    return (
        isinstance(node.value, ast.Attribute)
        and node.value.attr == "modules"
        and _is_name(node.slice, "__name__")
    )


def _ast_call(node: ast.Call) -> Optional[bool]:
    """True if the call may bind globals, None if it returns a namespace
    whose use decides (``globals()``, ``vars()``, ``locals()``), else False."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else None
    attribute = func.attr if isinstance(func, ast.Attribute) else None
    if called in _RUNNERS:
        first_two = node.args[:2]
        given = len(first_two) == 2 and not any(
            isinstance(arg, ast.Starred) for arg in first_two
        )
        return not (given or any(k.arg == "globals" for k in node.keywords))
    if (called or attribute) in _IMPORTERS:
        return any(_is_name(arg, "__name__") for arg in node.args)
    if called in _NAMESPACES and not (node.args or node.keywords):
        return None
    return False


def _is_name(node: Optional[ast.AST], name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _at_module_level(node: ast.AST, nodes: Sequence[ast.AST]) -> bool:
    """Whether ``node`` lies in no function, class or comprehension (by
    position: such calls are rare, and the module's parent map costs as
    much as the rest of its facts)."""
    at = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return not any(
        (scope.lineno, scope.col_offset)  # type: ignore[attr-defined]
        <= at
        < (scope.end_lineno, scope.end_col_offset)  # type: ignore[attr-defined]
        for scope in nodes
        if isinstance(scope, _AST_SCOPES)
    )


#: where a namespace may stand and be only read: these nodes' fields
_READING_FIELDS: Dict[type, Tuple[str, ...]] = {
    ast.Subscript: ("value",),
    ast.Attribute: ("value",),
    ast.Compare: ("left", "comparators"),
    ast.For: ("iter",),
    ast.AsyncFor: ("iter",),
    ast.comprehension: ("iter",),
    ast.Call: ("args",),
}


def _ast_parent(call: ast.Call, nodes: Sequence[ast.AST]) -> Optional[ast.AST]:
    """The node holding ``call`` in one of its reading fields, if any."""
    for node in nodes:
        fields = _READING_FIELDS.get(type(node))
        if fields is None:
            continue
        for field in fields:
            value = getattr(node, field)
            if value is call or (
                type(value) is list and any(item is call for item in value)
            ):
                return node
    return None


def _ast_read_only(parent: Optional[ast.AST]) -> bool:
    """Whether a namespace held by ``parent`` (in a reading field) is only
    read there."""
    if isinstance(parent, ast.Subscript):
        return isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute):
        return parent.attr in _READING_METHODS
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)):
        return True
    if isinstance(parent, ast.Call):
        func = parent.func
        return isinstance(func, ast.Name) and func.id in _READING_CALLS
    return False


# -- LibCST's tree ----------------------------------------------------------


def cst_binds_unseen(module: cst.Module) -> bool:
    """:func:`ast_binds_unseen` over LibCST's tree."""
    finder = _CstFinder()
    module.visit(finder)
    return finder.found


_CST_SCOPES = (
    cst.FunctionDef,
    cst.Lambda,
    cst.ClassDef,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


class _CstFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False
        #: the nodes being visited, outermost first
        self.stack: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)  # (on_leave is called whatever this returns)
        if self.found:
            return False
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            self.found = True
        elif isinstance(node, cst.Call):
            self.found = self._writes(node)
        elif isinstance(node, cst.Subscript):
            self.found = _cst_self_subscript(node)
        return not self.found

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _writes(self, node: cst.Call) -> bool:
        func = node.func
        called = func.value if isinstance(func, cst.Name) else None
        attribute = func.attr.value if isinstance(func, cst.Attribute) else None
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if called in _RUNNERS:
            first_two = node.args[:2]
            given = len(first_two) == 2 and all(
                a.keyword is None and not a.star for a in first_two
            )
            keyword = any(
                a.keyword is not None and a.keyword.value == "globals"
                for a in node.args
            )
            return not (given or keyword)
        if (called or attribute) in _IMPORTERS and any(
            _cst_is_name(a.value, "__name__") for a in positional
        ):
            return True
        if node.args:
            return False
        module_level = not any(isinstance(n, _CST_SCOPES) for n in self.stack[:-1])
        if called == "globals" or (called in ("vars", "locals") and module_level):
            return not self._read_only(node)
        return False

    def _read_only(self, call: cst.Call) -> bool:
        parent = _parent(self.stack)
        if isinstance(parent, cst.Subscript):
            depth = len(self.stack) - 2  # the subscript's
            return parent.value is call and not _cst_stored(self.stack, depth)
        if isinstance(parent, cst.Attribute):
            return parent.attr.value in _READING_METHODS
        comparison = (
            _parent(self.stack, 2)
            if isinstance(parent, cst.ComparisonTarget)
            else parent
        )
        if isinstance(comparison, cst.Comparison):
            return all(
                isinstance(c.operator, (cst.In, cst.NotIn))
                for c in comparison.comparisons
            )
        if isinstance(parent, (cst.For, cst.CompFor)):
            return parent.iter is call
        if isinstance(parent, cst.Arg):
            caller = _parent(self.stack, 2)
            return (
                isinstance(caller, cst.Call)
                and isinstance(caller.func, cst.Name)
                and caller.func.value in _READING_CALLS
                and parent.keyword is None
                and not parent.star
            )
        return False


def _parent(stack: List[cst.CSTNode], up: int = 1) -> Optional[cst.CSTNode]:
    return stack[-1 - up] if len(stack) > up else None


def _cst_stored(stack: List[cst.CSTNode], depth: int) -> bool:
    """Whether ``stack[depth]`` is stored into (or deleted) where it stands."""
    target = stack[depth]
    holder = stack[depth - 1] if depth >= 1 else None
    if isinstance(
        holder, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del, cst.AsName)
    ):
        return holder.target is target if not isinstance(holder, cst.AsName) else True
    if isinstance(holder, (cst.For, cst.CompFor)):
        return holder.target is target
    if isinstance(holder, (cst.Element, cst.StarredElement)) and depth >= 2:
        return _cst_stored(stack, depth - 2)  # an item of an unpacking target?
    return False


def _cst_is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _cst_self_subscript(node: cst.Subscript) -> bool:
    value = node.value
    if not (isinstance(value, cst.Attribute) and value.attr.value == "modules"):
        return False
    elements = node.slice
    return (
        len(elements) == 1
        and isinstance(elements[0].slice, cst.Index)
        and _cst_is_name(elements[0].slice.value, "__name__")
    )


def shadowed_builtins(bound: Iterable[str], unseen: bool) -> FrozenSet[str]:
    """The names whose builtin the lowering must not reach by name: those
    the module binds, and where it ``unseen`` binds others, every public
    builtin."""
    names = frozenset(bound)
    return names | PUBLIC_BUILTINS if unseen else names
