"""Fresh names for temporaries, and safe spellings of the builtins we call.

Every identifier that appears anywhere in the module is off limits for a
temporary, so a temporary can never shadow or be shadowed by a user's name,
in any scope. A builtin the emitted code calls (``len``, ``isinstance``, ...)
is spelled ``__import__('builtins').len`` wherever the module binds that name
itself (a parameter called ``type`` is common), or may bind any name where
the tree does not show it (a star import: :mod:`.dynamic_names`), because
CPython's ``match`` never looks builtins up by name.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import re
import sys
import warnings
from typing import Callable, Dict, FrozenSet, Iterator, NamedTuple, Optional, Set

import libcst as cst

_IDENTIFIER = re.compile(r"[^\W\d]\w*")

TEMP_PREFIX = "_spam_"
HELPER_NAME = "_spam"


def identifiers_in(source: str) -> FrozenSet[str]:
    """Every identifier-shaped word in ``source`` (strings and comments too).

    Over-approximating is harmless: it only makes us skip a candidate name.
    """
    return frozenset(_IDENTIFIER.findall(source))


class BoundNames(cst.CSTVisitor):
    """Collects every name the module binds in any scope."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        # Reading a builtin is fine; only bindings shadow. But binding sites
        # are many (targets, params, imports, def/class, global, walrus, match
        # captures, except-as); treating any Name as a binding only if it is
        # not a plain load would need scope analysis, so ask the cheaper
        # question below instead.
        pass

    def visit_Param(self, node: cst.Param) -> None:
        self.names.add(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self.names.add(node.name.value)
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        self.names.add(node.name.value)
        return None

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._add_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._add_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._add_target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._add_target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._add_target(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._add_target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._add_target(node.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            name: cst.BaseExpression = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                self.names.add(name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.update(item.name.value for item in node.names)

    def visit_Del(self, node: cst.Del) -> None:
        self._add_target(node.target)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self.names.add(node.rest.value)

    def _add_target(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._add_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._add_target(target.value)


def standard_ast(source: str) -> Optional[ast.Module]:
    """``source`` parsed by the standard parser, or None where it cannot.

    Walking its tree is several times cheaper than a LibCST walk, but only
    3.10+ parses match statements, and this interpreter may lack some newer
    syntax the file uses.
    """
    if sys.version_info < (3, 10):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def bound_names(module: cst.Module) -> FrozenSet[str]:
    """Every name ``module`` binds anywhere (any scope), from LibCST's tree:
    where there is a standard tree, the module's facts count them in their
    own pass over it (facts.ModuleFacts.bound)."""
    visitor = BoundNames()
    module.visit(visitor)
    return frozenset(visitor.names)


# The node types that can bind a name themselves (ast_bindings); the match
# patterns' only where ast has them (3.10+: the tool also runs on 3.9).
BINDERS = frozenset(
    getattr(ast, name)
    for name in (
        "Name",
        "arg",
        "FunctionDef",
        "AsyncFunctionDef",
        "ClassDef",
        "alias",
        "Global",
        "Nonlocal",
        "ExceptHandler",
        "MatchAs",
        "MatchStar",
        "MatchMapping",
    )
    if hasattr(ast, name)
)


def ast_bindings(node: ast.AST) -> Iterator[str]:
    """The names ``node`` itself binds (not its children)."""
    if type(node) not in BINDERS:
        return  # most nodes: one test, not one per kind of binding
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.alias):
        yield node.asname or node.name.split(".")[0]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


class SavedNames(NamedTuple):
    """The names a :class:`Names` had taken at one point."""

    taken: FrozenSet[str]
    counter: int
    local: Dict[int, FrozenSet[str]]


class _Variables(cst.CSTVisitor):
    """The names a node mentions as variables (not as attributes)."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False


class Names:
    """Allocates temporaries and spells builtins for one module."""

    def __init__(self, taken: FrozenSet[str], shadowed: FrozenSet[str]) -> None:
        self._taken: Set[str] = set(taken)
        #: what the module's source spells (the rest of ``_taken``: ours)
        self._spelled = taken
        self._shadowed = shadowed
        self._counter = 0
        #: per function (by id): the names :meth:`readable` took for it
        self._locals: Dict[int, Set[str]] = {}
        #: per function (by id): the variables it mentions
        self._variables: Dict[int, FrozenSet[str]] = {}

    def _variables_of(self, function: cst.CSTNode) -> FrozenSet[str]:
        """The names ``function`` mentions as variables (bound or read,
        in nested scopes, its decorators and defaults too): a name it
        mentions nowhere may be a local of its own."""
        found = self._variables.get(id(function))
        if found is None:
            collector = _Variables()
            function.visit(collector)
            found = self._variables[id(function)] = frozenset(collector.names)
        return found

    @property
    def _made(self) -> Set[str]:
        """The names the lowering took for the module."""
        return self._taken - self._spelled

    def temp(self, hint: str) -> str:
        while True:
            self._counter += 1
            candidate = f"{TEMP_PREFIX}{hint}{self._counter}"
            if candidate not in self._taken:
                self._taken.add(candidate)
                return candidate

    def saved(self) -> "SavedNames":
        """What :meth:`restore` takes back to: the names taken so far."""
        local = {key: frozenset(names) for key, names in self._locals.items()}
        return SavedNames(frozenset(self._taken), self._counter, local)

    def restore(self, saved: "SavedNames") -> None:
        """Take the names back to when :meth:`saved` was called: a printing
        thrown away leaves no name taken."""
        self._taken, self._counter = set(saved.taken), saved.counter
        self._locals = {key: set(names) for key, names in saved.local.items()}

    def free(self, name: str, function: Optional[cst.CSTNode] = None) -> bool:
        """Whether :meth:`readable` would give ``name`` as it is: in a
        ``function``, where it names no variable the function mentions
        (an attribute's or a string's word elsewhere in the module is no
        variable of its own)."""
        if function is None:
            taken = any(name in names for names in self._locals.values())
            return not taken and name not in self._taken
        if name in self._locals.get(id(function), set()) or name in self._made:
            return False
        return name not in self._variables_of(function)

    def readable(self, hint: str, function: Optional[object] = None) -> str:
        """A name for a variable a person would have written: ``hint``, or
        ``hint_2`` and so on when the module already uses it.

        ``function`` (a key for one function), for a variable local to it:
        each function may reuse a name another function took this way (its
        locals are its own), never one the module uses or a module or class
        body took."""
        others = (f"{hint}_{n}" for n in itertools.count(2))
        if function is None:
            taken_locally = set().union(*self._locals.values())
            name = hint
            while name in self._taken or name in taken_locally:
                name = next(others)
            self._taken.add(name)
            return name
        local = self._locals.setdefault(id(function), set())
        name = hint
        free = hint not in local and hint not in self._made
        if not (free and hint not in self._variables_of(function)):  # type: ignore
            while name in self._taken or name in local:
                name = next(others)
        local.add(name)
        return name

    @property
    def shadowed(self) -> FrozenSet[str]:
        """The builtins' names the module may bind."""
        return self._shadowed

    def claim(self, name: str) -> str:
        """``name``, which the caller knows the module binds nowhere (it
        may still appear in its text), kept from every later choice."""
        self._taken.add(name)
        return name

    def helper_name(self) -> str:
        """The one private name the module's helper is bound to."""
        others = (f"{HELPER_NAME}{n}" for n in itertools.count(1))
        return self._first_free(HELPER_NAME, others)

    def _first_free(self, first: str, others: Iterator[str]) -> str:
        candidate = first
        while candidate in self._taken:
            candidate = next(others)
        self._taken.add(candidate)
        return candidate

    def builtin(self, name: str) -> str:
        assert hasattr(builtins, name), name
        if name not in self._shadowed:
            return name
        if "__import__" not in self._shadowed:
            return f"__import__('builtins').{name}"
        if "getattr" not in self._shadowed:
            # ``__builtins__`` is the builtins module in ``__main__`` and its
            # dict in an imported module: a dict has no ``__dict__``.
            return f"getattr(__builtins__, '__dict__', __builtins__)[{name!r}]"
        # Nothing better exists in pure source; keep it readable.
        return f"__builtins__.{name}"


def is_builtin_class(name: str, builtin: Callable[[str], str]) -> bool:
    """Whether ``name`` is a builtin class the module spells as it is
    (``builtin``: how the module spells a builtin)."""
    return isinstance(getattr(builtins, name, None), type) and builtin(name) == name
